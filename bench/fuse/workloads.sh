#!/usr/bin/env bash
# bench/fuse/workloads.sh: developer workloads on native tmpfs, on go-fuse's
# loopback over that tmpfs (fs.NewLoopbackRoot, with FUSE passthrough, as
# go-fuse ships it as root) and on `julyfs mount --mount /=local:` over it
# with no flags (the default mount), each target in a directory of its own
# on one tmpfs. Every workload runs ROUNDS rounds, each target in turn (in
# another order each round), and the table has the medians, the ratios to
# the loopback and to native, and the CPU time (user + system) the daemon
# of each FUSE target spent during the timed runs (median per run).
# docs/perf/fuse.md records a run. Needs root (it mounts a tmpfs), git,
# tar, make, gcc, npm (Node.js) and python3.
#
#   [ROUNDS=3] [WORKLOADS="clone checkout tar rm rmpar npm gobuild-cold gobuild-warm make"]
#   [JULYFS_BINS="name=DIR ..."] [NPM_CACHE=DIR] bench/fuse/workloads.sh [-quick]
#
# The workloads (what is timed; the rest of each round is set up and torn
# down outside the timing):
#
#   clone     git clone --no-hardlinks of a local repository of N files
#             (10,000; git.sh's tree: every tenth executable, a link per
#             directory)
#   checkout  git checkout of a branch of that repository that changes
#             3,000 of its files (in the clone just made)
#   tar       tar -xf of GOROOT/src as a tar (about 11,000 files)
#   rm        rm -rf of that extracted tree
#   rmpar     the same removed by four rm -rf at once, each a quarter of
#             its top directories, then what is left (make -j clean,
#             several agents cleaning up: UNLINKs side by side)
#   npm       npm ci --offline of bench/fuse/npm (495 packages: jest,
#             eslint, webpack, babel) from an npm cache warmed once,
#             before any timing (NPM_CACHE, default
#             /var/tmp/julyfs-bench-npm-cache, kept between runs so that
#             the registry is asked once)
#   gobuild-cold, gobuild-warm
#             go build ./... of go-fuse's module (copied from the module
#             cache, its go.mod cut to the dependencies the build needs)
#             with GOCACHE and GOMODCACHE on the target: cold (an empty
#             GOCACHE; the module cache filled through the target
#             beforehand, from the local module cache with GOPROXY=file://)
#             and then warm (the same build again)
#   make      make -j2 of a generated C project (300 .c files, a header
#             each includes, one program linked from them)
#
# and, only when WORKLOADS names them (they need fio and 1 GiB of the
# tmpfs per target):
#
#   seqwrite  fio's sequential write of 1 GiB (1 MiB blocks) into a file
#             it lays out first (fallocate), with an fsync at the end
#   seqread   fio's sequential read of that file (fio drops its pages
#             first: every byte comes through the FUSE target)
#   ddwrite   dd of 1 GiB to a new file (1 MiB blocks, conv=fsync)
#   ddrewrite dd of 1 GiB over that file in place (conv=notrunc)
#
# -quick is a smoke run: 1 round, 1,000 files (300 changed), GOROOT/src/net
# as the tar, 40 .c files, and a one-file Go module (fmt); npm installs
# the whole project all the same (WORKLOADS without npm drops it).
#
# JULYFS_BINS mounts several builds of julyfs side by side (each DIR holds
# julyfs and julyfsd, say built from two commits), as targets named NAME,
# in place of the one built from this checkout; ratios are to the loopback
# and to native.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/fuse/lib.sh
[ "$(id -u)" = 0 ] || { echo "bench/fuse/workloads.sh: run as root" >&2; exit 1; }
QUICK=0
[ "${1:-}" = -quick ] && QUICK=1
if [ $QUICK = 1 ]; then
  ROUNDS=${ROUNDS:-1} NFILES=1000 NCHANGE=300 NC=40 TARSRC=$(go env GOROOT)/src/net
else
  ROUNDS=${ROUNDS:-3} NFILES=10000 NCHANGE=3000 NC=300 TARSRC=$(go env GOROOT)/src
fi
WORKLOADS=${WORKLOADS:-clone checkout tar rm rmpar npm gobuild-cold gobuild-warm make}
NPM_CACHE=${NPM_CACHE:-/var/tmp/julyfs-bench-npm-cache}
export npm_config_update_notifier=false
# wants W...: whether WORKLOADS names one of W (its fixture is made only
# then).
wants() { for w in "$@"; do [[ " $WORKLOADS " == *" $w "* ]] && return 0; done; return 1; }
for tool in git tar make gcc python3 $(wants npm && echo npm) $(wants seqwrite seqread && echo fio); do
  command -v $tool >/dev/null || { echo "bench/fuse/workloads.sh: needs $tool" >&2; exit 1; }
done
# The module cache and versions the Go workload copies from, asked before
# HOME moves (below).
GOMC=$(go env GOMODCACHE)
# go-fuse as released, the version third_party/go-fuse copies, from the
# module cache (or the module proxy).
FUSEV=v2.12.1
FUSEDIR=$(go mod download -json "github.com/hanwen/go-fuse/v2@$FUSEV" | python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')
SYSV=$(go list -m -f '{{.Version}}' golang.org/x/sys)
SYNCV=$(go list -m -f '{{.Version}}' golang.org/x/sync)
W=$(mktemp -d /tmp/julyfs-workloads.XXXXXX)
BIN=$W/bin T=$W/tmpfs
mkdir -p "$BIN" "$T"
BINS=${JULYFS_BINS:-julyfs=$BIN}
names=(native loopback)
for b in $BINS; do names+=("${b%%=*}"); done
pids=()
declare -A pid=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 1
  for m in "${names[@]}"; do
    mountpoint -q "$W/$m" && umount -l "$W/$m"
  done
  mountpoint -q "$T" && umount -l "$T"
  rm -rf "$W"
}
trap cleanup EXIT

go build -o "$BIN/loopback" ./bench/fuse/loopback
if [ -z "${JULYFS_BINS:-}" ]; then
  go build -o "$BIN/julyfs" ./cmd/julyfs
  go build -o "$BIN/julyfsd" ./cmd/julyfsd # julyfs mount runs it from beside itself
fi
mount -t tmpfs -o size=12g tmpfs "$T"
mkdir -p "$T/fixture"
# Each target has a host directory of its own: a julyfs mount watches its
# host directory (inotify), and would otherwise follow the others' work.
dir() { [ "$1" = native ] && echo "$T/host-native" || echo "$W/$1"; }
mkdir -p "$T/host-native" "$W/native"
mkdir -p "$T/host-loopback" "$W/loopback"
"$BIN/loopback" "$T/host-loopback" "$W/loopback" >/dev/null 2>&1 &
pids+=($!) pid[loopback]=$!
for b in $BINS; do
  name=${b%%=*} bdir=${b#*=}
  mkdir -p "$T/host-$name" "$W/$name"
  "$bdir/julyfs" mount --mount "/=local:$T/host-$name" "$W/$name" 2>"$W/$name.log" &
  pids+=($!) pid[$name]=$!
done
for m in "${names[@]}"; do [ "$m" = native ] || waitmount "$W/$m"; done

# cpu PID: the user + system CPU time, in ms, of process PID and every
# process below it (julyfs mount runs the daemon, julyfsd, as a child).
cpu() {
  python3 - "$1" <<'PY'
import os, sys
hz = os.sysconf("SC_CLK_TCK")
def kids(p):
    out = []
    try:
        for t in os.listdir("/proc/%s/task" % p):
            with open("/proc/%s/task/%s/children" % (p, t)) as f:
                out += f.read().split()
    except OSError:
        pass
    return out
todo, total = [sys.argv[1]], 0
while todo:
    p = todo.pop()
    try:
        with open("/proc/%s/stat" % p) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    except OSError:
        continue
    todo += kids(p)
print(total * 1000 // hz)
PY
}

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# --- fixtures, on the tmpfs, outside any target ---
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@b GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@b GIT_CONFIG_NOSYSTEM=1 HOME=$W
SRC=$T/fixture/repo
if wants clone checkout; then
python3 bench/fuse/mkrepo.py "$SRC" "$NFILES"
git -C "$SRC" init -q -b main && git -C "$SRC" add -A && git -C "$SRC" -c gc.auto=0 commit -qm files
git -C "$SRC" checkout -q -b other
python3 - "$SRC" "$NFILES" "$NCHANGE" <<'PY'
import os, sys
root, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
step = max(n // k, 1)
for j, i in enumerate(range(0, n, step)):
    if j >= k:
        break
    with open(os.path.join(root, "pkg%03d" % (i // 100), "f%05d.txt" % i), "a") as f:
        f.write("changed on branch other\n")
PY
git -C "$SRC" -c gc.auto=0 commit -qam changes && git -C "$SRC" checkout -q main
git -C "$SRC" -c gc.autoDetach=false gc -q
fi
wants tar rm rmpar && tar -cf "$T/fixture/src.tar" -C "$(dirname "$TARSRC")" "$(basename "$TARSRC")"

# The npm project and its cache, warmed once (the registry is asked only
# for what the cache lacks).
cp bench/fuse/npm/package.json bench/fuse/npm/package-lock.json "$T/fixture/"
if wants npm; then
mkdir -p "$NPM_CACHE" "$T/fixture/npmwarm"
cp "$T/fixture/package.json" "$T/fixture/package-lock.json" "$T/fixture/npmwarm/"
(cd "$T/fixture/npmwarm" && npm ci --cache "$NPM_CACHE" --prefer-offline --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
rm -rf "$T/fixture/npmwarm"
fi

# The Go module: go-fuse's source from the module cache, go.mod cut to
# what its packages import (the module cache holds those versions).
GOSRC=$T/fixture/gomod
if [ $QUICK = 1 ]; then
  mkdir -p "$GOSRC"
  printf 'module example.com/hello\n\ngo 1.21\n' >"$GOSRC/go.mod"
  printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n' >"$GOSRC/main.go"
else
  cp -r "$FUSEDIR" "$GOSRC" && chmod -R u+w "$GOSRC"
  rm -f "$GOSRC/go.sum"
  printf 'module github.com/hanwen/go-fuse/v2\n\ngo 1.21\n\nrequire (\n\tgolang.org/x/sync %s\n\tgolang.org/x/sys %s\n)\n' "$SYNCV" "$SYSV" >"$GOSRC/go.mod"
fi
goenv() {
  env GOCACHE="$1/gocache" GOMODCACHE="$1/gomodcache" GOPROXY="file://$GOMC/cache/download" \
    GOSUMDB=off GOFLAGS=-mod=mod GOTOOLCHAIN=local GOTELEMETRY=off "${@:2}"
}

# The C project: NC files, each a few functions over a shared header.
CSRC=$T/fixture/cproj
python3 - "$CSRC" "$NC" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
os.makedirs(os.path.join(root, "src"))
with open(os.path.join(root, "src", "common.h"), "w") as f:
    f.write("#include <stdio.h>\n#include <string.h>\n#include <stdlib.h>\n")
    for i in range(n):
        f.write("int unit%d(int);\n" % i)
for i in range(n):
    with open(os.path.join(root, "src", "unit%d.c" % i), "w") as f:
        f.write('#include "common.h"\n')
        for j in range(8):
            f.write("static int helper%d(int x) { char b[64]; snprintf(b, sizeof b, \"%%d\", x * %d); return (int)strlen(b) + x; }\n" % (j, j + i))
        f.write("int unit%d(int x) { return %s; }\n" % (i, " + ".join("helper%d(x)" % j for j in range(8))))
with open(os.path.join(root, "src", "main.c"), "w") as f:
    f.write('#include "common.h"\nint main(void) { long s = 0;\n')
    for i in range(n):
        f.write("  s += unit%d(%d);\n" % (i, i))
    f.write('  printf("%ld\\n", s); return 0; }\n')
with open(os.path.join(root, "Makefile"), "w") as f:
    f.write("SRCS := $(wildcard src/*.c)\nOBJS := $(SRCS:src/%.c=obj/%.o)\n\n")
    f.write("prog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n\n")
    f.write("obj/%.o: src/%.c src/common.h | obj\n\t$(CC) -O1 -c -o $@ $<\n\n")
    f.write("obj:\n\tmkdir -p obj\n\nclean:\n\trm -rf obj prog\n")
PY

# --- the timed steps ---
# setup_X DIR and run_X DIR: run_X is timed; setup_X prepares it.
setup_clone() { rm -rf "$1/repo"; sync; }
run_clone() { git clone -q --no-hardlinks "$SRC" "$1/repo"; }
setup_checkout() {
  [ -d "$1/repo" ] || git clone -q --no-hardlinks "$SRC" "$1/repo"
  git -C "$1/repo" checkout -q main
}
run_checkout() { git -C "$1/repo" checkout -q other; }
setup_tar() { rm -rf "$1/tarx"; mkdir "$1/tarx"; }
run_tar() { tar -xf "$T/fixture/src.tar" -C "$1/tarx"; }
setup_rm() { [ -d "$1/tarx" ] && [ -n "$(ls -A "$1/tarx")" ] || { setup_tar "$1"; run_tar "$1"; }; }
run_rm() { rm -rf "$1/tarx"; }
setup_rmpar() { setup_rm "$1"; }
run_rmpar() {
  local ds=("$1"/tarx/*/*) ps=() i n
  n=${#ds[@]}
  for i in 0 1 2 3; do
    rm -rf "${ds[@]:$((i * n / 4)):$(((i + 1) * n / 4 - i * n / 4))}" &
    ps+=($!)
  done
  wait "${ps[@]}"
  rm -rf "$1/tarx"
}
setup_npm() {
  rm -rf "$1/npm"; mkdir "$1/npm"
  cp "$T/fixture/package.json" "$T/fixture/package-lock.json" "$1/npm/"
}
run_npm() { (cd "$1/npm" && npm ci --offline --cache "$NPM_CACHE" --ignore-scripts --no-audit --no-fund --loglevel=error); }
setup_gobuild-cold() {
  rm -rf "$1/go"; mkdir "$1/go"
  cp -r "$GOSRC" "$1/go/src"
  (cd "$1/go/src" && goenv "$1/go" go list -deps ./... >/dev/null) # fills GOMODCACHE on the target
}
run_gobuild-cold() { (cd "$1/go/src" && goenv "$1/go" go build ./...); }
setup_gobuild-warm() { [ -d "$1/go/gocache" ] || { setup_gobuild-cold "$1"; run_gobuild-cold "$1"; }; }
run_gobuild-warm() { (cd "$1/go/src" && goenv "$1/go" go build ./...); }
setup_make() { rm -rf "$1/cproj"; cp -r "$CSRC" "$1/cproj"; }
run_make() { make -s -j2 -C "$1/cproj" >/dev/null; }
# Sequential I/O of 1 GiB in 1 MiB blocks (not in the default set): fio's
# write of a file it lays out first (fallocate, then the job reopens it
# O_RDWR), fio's read of that file (fio drops the file's pages before it
# reads: every byte comes through the daemon, or the kernel with
# passthrough), dd to a new file, and dd over that file in place
# (conv=notrunc: a rewrite of a file with data), each with an fsync.
setup_seqwrite() { rm -f "$1/seq.dat"; sync; }
run_seqwrite() { fio --name=seq --directory="$1" --filename=seq.dat --rw=write --bs=1M --size=1G --fallocate=native --end_fsync=1 --output-format=terse >/dev/null; }
setup_seqread() { [ -f "$1/seq.dat" ] || run_seqwrite "$1"; }
run_seqread() { fio --name=seq --directory="$1" --filename=seq.dat --rw=read --bs=1M --size=1G --output-format=terse >/dev/null; }
setup_ddwrite() { rm -f "$1/dd.dat"; sync; }
run_ddwrite() { dd if=/dev/zero of="$1/dd.dat" bs=1M count=1024 conv=fsync status=none; }
setup_ddrewrite() { [ -f "$1/dd.dat" ] || run_ddwrite "$1"; }
run_ddrewrite() { dd if=/dev/zero of="$1/dd.dat" bs=1M count=1024 conv=fsync,notrunc status=none; }

declare -A T_ S_ C_
for wl in $WORKLOADS; do
  declare -F "run_$wl" >/dev/null || { echo "bench/fuse/workloads.sh: no workload $wl" >&2; exit 1; }
  for r in $(seq 1 "$ROUNDS"); do
    # Another order each round: rotate the targets by the round.
    order=("${names[@]:$((r % ${#names[@]}))}" "${names[@]:0:$((r % ${#names[@]}))}")
    for tgt in "${order[@]}"; do
      d=$(dir "$tgt")
      "setup_$wl" "$d" >/dev/null
      c0=0
      [ -n "${pid[$tgt]:-}" ] && c0=$(cpu "${pid[$tgt]}")
      s=$(date +%s.%N)
      "run_$wl" "$d" >/dev/null
      e=$(date +%s.%N)
      if [ -n "${pid[$tgt]:-}" ]; then C_[$wl.$tgt]+="$(($(cpu "${pid[$tgt]}") - c0)) "; fi
      T_[$wl.$tgt]+="$(python3 -c "print('%.3f' % (float('$e')-float('$s')))") "
    done
  done
done

ratio() { python3 -c "print('%.2fx' % ($1/$2) if $2 > 0 else '-')"; }
echo "| workload | target | s (median of $ROUNDS) | / loopback | / native | daemon CPU s |"
echo "| --- | --- | --- | --- | --- | --- |"
for wl in $WORKLOADS; do
  nat=$(median ${T_[$wl.native]}) lo=$(median ${T_[$wl.loopback]})
  for tgt in "${names[@]}"; do
    t=$(median ${T_[$wl.$tgt]})
    c=-
    [ -n "${C_[$wl.$tgt]:-}" ] && c=$(python3 -c "print('%.2f' % ($(median ${C_[$wl.$tgt]})/1000))")
    echo "| $wl | $tgt | $t | $(ratio "$t" "$lo") | $(ratio "$t" "$nat") | $c |"
  done
done
echo
echo "rounds: ${ROUNDS}; every time: $(for wl in $WORKLOADS; do for tgt in "${names[@]}"; do printf '%s/%s: %s; ' "$wl" "$tgt" "${T_[$wl.$tgt]% }"; done; done)"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
