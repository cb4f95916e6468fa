# bench/fuse/lib.sh: helpers the bench/fuse scripts share (sourced, not
# run): waitmount, once, mktree, mkrepo.

# waitmount waits up to 30 s for a mount point to be mounted, else ends
# the script.
waitmount() {
  for _ in $(seq 1 300); do mountpoint -q "$1" && return 0; sleep 0.1; done
  echo "$0: $1 not mounted" >&2; exit 1
}

# once prints the wall-clock seconds of one run of a command.
once() {
  local s e
  s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N)
  python3 -c "print('%.3f' % (float('$e')-float('$s')))"
}

# mktree ROOT N makes a node_modules-like tree of N small files in 1000
# directories under ROOT (on the host directory itself, not through a
# mount).
mktree() {
  python3 - "$1" "$2" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "pkg%03d" % (i % 1000), "lib")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d.js" % i), "w") as f:
        f.write("module.exports = %d;\n" % i)
PY
}

# mkrepo ROOT N writes the files of git.sh's repository under ROOT (on the
# host directory itself): N files in N/100 directories, every tenth
# executable, one link per directory.
mkrepo() {
  python3 - "$1" "$2" <<'PY'
import os, sys
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
PY
}
