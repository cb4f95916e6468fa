#!/usr/bin/env bash
# bench/fuse/seq.sh: sequential write and read only, on go-fuse's loopback
# with passthrough, julyfs with passthrough, julyfs with passthrough and
# in-place writes (JULYFS_PASSTHROUGH=inplace) and julyfs without
# passthrough (--passthrough=false), over one tmpfs, in alternating rounds so that a
# shared machine's load falls on every target alike. Two write patterns:
# fio's (lay the file out with fallocate, then the job reopens it O_RDWR
# and writes it: julyfs with passthrough writes it in place, as the file
# holds no data; without passthrough it copies it into a staging) and a
# fresh file written whole (dd to a new name: what cp, > and editors do),
# and a rewrite in place of a file full of data (dd conv=notrunc over the
# file dd just wrote: julyfs copies it into its staging at that open,
# unless julyfs-inplace). Needs root, fio.
#
#   [TARGETS="loopback julyfs ..."] bench/fuse/seq.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/fuse/lib.sh
[ "$(id -u)" = 0 ] || { echo "bench/fuse/seq.sh: run as root" >&2; exit 1; }
ROUNDS=${1:-3}
W=$(mktemp -d /tmp/julyfs-seq.XXXXXX)
BIN=$W/bin T=$W/tmpfs
mkdir -p "$BIN" "$T" "$W/loopback" "$W/julyfs" "$W/julyfs-inplace" "$W/julyfs-nopt"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 1
  for m in "$W/loopback" "$W/julyfs" "$W/julyfs-inplace" "$W/julyfs-nopt" "$T"; do
    mountpoint -q "$m" && umount -l "$m"
  done
  rm -rf "$W"
}
trap cleanup EXIT
go build -o "$BIN/julyfs" ./cmd/julyfs
go build -o "$BIN/julyfsd" ./cmd/julyfsd
go build -o "$BIN/loopback" ./bench/fuse/loopback
mount -t tmpfs -o size=4g tmpfs "$T"
mkdir "$T/data"
"$BIN/loopback" "$T/data" "$W/loopback" >/dev/null & pids+=($!)
"$BIN/julyfs" mount --mount "/=local:$T/data" "$W/julyfs" 2>"$W/julyfs.log" & pids+=($!)
JULYFS_PASSTHROUGH=inplace "$BIN/julyfs" mount --passthrough --mount "/=local:$T/data" "$W/julyfs-inplace" 2>"$W/julyfs-inplace.log" & pids+=($!)
"$BIN/julyfs" mount --passthrough=false --mount "/=local:$T/data" "$W/julyfs-nopt" 2>"$W/julyfs-nopt.log" & pids+=($!)
TARGETS=${TARGETS:-loopback julyfs julyfs-inplace julyfs-nopt}
for m in loopback julyfs julyfs-inplace julyfs-nopt; do waitmount "$W/$m"; done
FIOPY='
import json, sys
j = json.load(sys.stdin)["jobs"][0]
print("%.0f %.0f" % (j["read"]["bw"] / 1024, j["write"]["bw"] / 1024))'
fiojson() { fio --output-format=json "$@" | python3 -c "$FIOPY"; }
# MiB/s of dd writing 1 GiB to a file, fsync included (extra dd conv= flags
# after the file)
ddw() {
  local s e f=$1; shift
  s=$(date +%s.%N); dd if=/dev/zero of="$f" bs=1M count=1024 conv=fsync${1:+,$1} status=none; e=$(date +%s.%N)
  python3 -c "print('%.0f' % (1024/(float('$e')-float('$s'))))"
}
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "| round | target | fio seq write MiB/s | fio seq read MiB/s | dd new file write MiB/s | dd rewrite in place MiB/s |"
echo "|---|---|---|---|---|---|"
for r in $(seq 1 "$ROUNDS"); do
  for name in $TARGETS; do
    D=$W/$name
    read -r _ sw < <(fiojson --name=seq --directory="$D" --filename=seq.dat --rw=write --bs=1M --size=1G --end_fsync=1)
    read -r sr _ < <(fiojson --name=seq --directory="$D" --filename=seq.dat --rw=read --bs=1M --size=1G)
    rm -f "$D/seq.dat"
    dw=$(ddw "$D/dd.dat")
    drw=$(ddw "$D/dd.dat" notrunc)
    rm -f "$D/dd.dat"
    echo "| $r | $name | $sw | $sr | $dw | $drw |"
  done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
