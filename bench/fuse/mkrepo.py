"""mkrepo.py ROOT N: the benchmark repository's files.

N files in N/100 directories (pkg000, pkg001, ...), of 1 to 20 lines each,
every tenth executable, and one symbolic link per directory; the same tree
on every run, for bench/fuse/git.sh and bench/fuse/workloads.sh.
"""
import os
import sys

root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "pkg%03d" % (i // 100))
    os.makedirs(d, exist_ok=True)
    p = os.path.join(d, "f%05d.txt" % i)
    with open(p, "w") as f:
        f.write(("line %d of file %d\n" % (0, i)) * (1 + i % 20))
    if i % 10 == 0:
        os.chmod(p, 0o755)
    if i % 100 == 0:
        os.symlink("f%05d.txt" % i, os.path.join(d, "link"))
