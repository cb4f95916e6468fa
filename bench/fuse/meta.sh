#!/usr/bin/env bash
# bench/fuse/meta.sh: rm -rf, create and stat rounds, alternating go-fuse's
# loopback with passthrough and `julyfs mount --passthrough --mount
# /=local:` over one tmpfs (each with a directory of its own), so that
# the ratio of the two is read round by round on a shared machine.
#
#   [ROUNDS=3] [NRM=30000] [MROUNDS=20] [NSTAT=200] [STRACE=1] [JULYFS_BINS="name=DIR ..."] bench/fuse/meta.sh
#
# JULYFS_BINS mounts several builds of julyfs side by side (each DIR holds
# julyfs and julyfsd, say built from two commits), as targets named NAME,
# in place of the one built from this checkout.
#
# rm -rf: ROUNDS rounds, each target in turn (in another order each
# round): a tree of NRM small files in 1,000 directories made on the
# tmpfs itself (as run.sh's mktree), a 1 s pause, `rm -rf` through the
# mount, timed. STRACE=1 also counts julyfsd's system calls during one
# rm -rf (strace -c -f) on stderr.
#
# create, stat, cached stat, readdir: bench/fuse/metaops over every
# target at once (interleaved: MROUNDS rounds of NSTAT files in each
# target in turn; medians, and the ratio to the loopback's). Needs root.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/fuse/lib.sh
[ "$(id -u)" = 0 ] || { echo "bench/fuse/meta.sh: run as root" >&2; exit 1; }
ROUNDS=${ROUNDS:-3} NRM=${NRM:-30000} MROUNDS=${MROUNDS:-20} NSTAT=${NSTAT:-200}
W=$(mktemp -d /tmp/julyfs-meta.XXXXXX)
BIN=$W/bin T=$W/tmpfs
mkdir -p "$BIN" "$T"
BINS=${JULYFS_BINS:-julyfs=$BIN}
names=(loopback)
for b in $BINS; do names+=("${b%%=*}"); done
pids=()
declare -A pid=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 1
  for m in "${names[@]}" tmpfs; do
    mountpoint -q "$W/$m" && umount -l "$W/$m"
  done
  rm -rf "$W"
}
trap cleanup EXIT

if [ -z "${JULYFS_BINS:-}" ]; then
  go build -o "$BIN/julyfs" ./cmd/julyfs
  go build -o "$BIN/julyfsd" ./cmd/julyfsd
fi
go build -o "$BIN/loopback" ./bench/fuse/loopback
go build -o "$BIN/metaops" ./bench/fuse/metaops
mount -t tmpfs -o size=2g tmpfs "$T"
for n in "${names[@]}"; do mkdir -p "$T/$n" "$W/$n"; done
"$BIN/loopback" "$T/loopback" "$W/loopback" >/dev/null & pids+=($!)
for b in $BINS; do
  n=${b%%=*} d=${b#*=}
  # julyfs execs julyfsd in its own place: $! is the daemon.
  "$d/julyfs" mount --passthrough --mount "/=local:$T/$n" "$W/$n" 2>"$W/$n.log" & pids+=($!); pid[$n]=$!
done
for n in "${names[@]}"; do waitmount "$W/$n"; done
sleep 1

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "| round | target | rm -rf ${NRM} files s |"
echo "|---|---|---|"
for r in $(seq 1 "$ROUNDS"); do
  # each round in another order: no target always follows the same one
  k=$(( (r - 1) % ${#names[@]} ))
  for name in "${names[@]:k}" "${names[@]:0:k}"; do
    mktree "$T/$name/rm" "$NRM"
    sleep 1
    st=""
    if [ "${STRACE:-}" = 1 ] && [ $name != loopback ] && [ "$r" = 1 ]; then
      echo "$name:" >&2
      strace -c -f -p "${pid[$name]}" -o "$W/strace.txt" & st=$!
      sleep 0.5
    fi
    t=$(once rm -rf "$W/$name/rm")
    if [ -n "$st" ]; then kill -INT "$st"; wait "$st" || true; cat "$W/strace.txt" >&2; fi
    echo "| $r | $name | $t |"
  done
done

echo
echo "Medians of $MROUNDS interleaved rounds of $NSTAT files (bench/fuse/metaops), and the ratio to the loopback:"
echo
echo "| target | create/s | stat/s | cached stat/s | readdir entries/s |"
echo "|---|---|---|---|---|"
dirs=()
for n in "${names[@]}"; do dirs+=("$W/$n"); done
"$BIN/metaops" -rounds "$MROUNDS" "${dirs[@]}" "$NSTAT" | python3 -c '
import sys
rates, order = {}, []
for line in sys.stdin:
    d, m, v = line.split()
    name = d.rsplit("/", 1)[1]
    if name not in rates:
        order.append(name)
    rates.setdefault(name, {})[m] = float(v)
base = rates["loopback"]
for name in order:
    cells = []
    for m in ("create", "stat", "stat-cached", "readdir-entries"):
        v = rates[name][m]
        cells.append("%.0f" % v if name == "loopback" else "%.0f (%.2fx)" % (v, v / base[m]))
    print("| %s | %s |" % (name, " | ".join(cells)))
'
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
