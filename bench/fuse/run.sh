#!/usr/bin/env bash
# bench/fuse/run.sh: the same workloads on native tmpfs, on go-fuse's own
# loopback (fs.NewLoopbackRoot) over that tmpfs with FUSE passthrough (as
# go-fuse ships it as root: the main peer) and without it, and on
# `julyfs mount --mount /=local:` over it, read-write (the default, FUSE
# passthrough where the kernel allows it, and with --passthrough=false) and
# --read-only.
# Prints a markdown table; docs/perf/fuse.md records a run. Needs root (it
# mounts a tmpfs), fio, python3 and about 12 GiB of free memory. Each julyfs
# mount serves its own copy of the tree (it watches its host directory).
#
#   [TARGETS="native loopback ..."] [MROUNDS=10] [GROUNDS=5] [SROUNDS=5] bench/fuse/run.sh [N_META_FILES]
#
# TARGETS (default: all six) runs some targets only, so that a run can be
# split to stay short on a shared machine. The metadata columns (create,
# stat, cached stat, readdir) are measured first, on every read-write
# target at once (bench/fuse/metaops interleaved: MROUNDS rounds of
# N_META_FILES files, default 400, in each target in turn; medians), so
# that their ratios do not depend on the moment each target ran. find and
# grep -r over GOROOT/src are measured the same way, on every target: one
# warm-up pass, then GROUNDS rounds (default 5) of each target in turn, in
# another order each round; medians. So is the sequential read of a 1 GiB
# file each target wrote (SROUNDS rounds, default 5; medians): one read
# from the page cache takes a fraction of a second, and a single one
# moved 2x between runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/fuse/lib.sh
[ "$(id -u)" = 0 ] || { echo "bench/fuse/run.sh: run as root" >&2; exit 1; }
NMETA=${1:-400} MROUNDS=${MROUNDS:-10} GROUNDS=${GROUNDS:-5} SROUNDS=${SROUNDS:-5}
[ "$GROUNDS" -ge 1 ] && [ "$SROUNDS" -ge 1 ] || { echo "bench/fuse/run.sh: GROUNDS and SROUNDS must be at least 1" >&2; exit 1; }
W=$(mktemp -d /tmp/julyfs-bench.XXXXXX)
BIN=$W/bin T=$W/tmpfs
mkdir -p "$BIN" "$T" "$W/loopback" "$W/loopback-nopt" "$W/julyfs" "$W/julyfs-nopt" "$W/julyfs-ro"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 1
  for m in "$W/loopback" "$W/loopback-nopt" "$W/julyfs" "$W/julyfs-nopt" "$W/julyfs-ro" "$T"; do
    mountpoint -q "$m" && umount -l "$m"
  done
  rm -rf "$W"
}
trap cleanup EXIT

go build -o "$BIN/julyfs" ./cmd/julyfs
go build -o "$BIN/julyfsd" ./cmd/julyfsd # julyfs mount runs it from beside itself
go build -o "$BIN/loopback" ./bench/fuse/loopback
go build -o "$BIN/metaops" ./bench/fuse/metaops
mount -t tmpfs -o size=10g tmpfs "$T"
mkdir "$T/data"
cp -r "$(go env GOROOT)/src" "$T/data/gosrc"
# Each julyfs mount serves a copy of its own: a julyfs mount watches its
# host directory (inotify), and would otherwise spend the other targets'
# time following their changes.
for m in julyfs julyfs-nopt julyfs-ro; do cp -a "$T/data" "$T/data-$m"; done
host() { case $1 in julyfs*) echo "$T/data-$1" ;; *) echo "$T/data" ;; esac; }
"$BIN/loopback" "$T/data" "$W/loopback" >/dev/null & pids+=($!)
"$BIN/loopback" -passthrough=false "$T/data" "$W/loopback-nopt" >/dev/null & pids+=($!)
"$BIN/julyfs" mount --mount "/=local:$T/data-julyfs" "$W/julyfs" 2>"$W/julyfs.log" & pids+=($!)
"$BIN/julyfs" mount --passthrough=false --mount "/=local:$T/data-julyfs-nopt" "$W/julyfs-nopt" 2>"$W/julyfs-nopt.log" & pids+=($!)
"$BIN/julyfs" mount --read-only --mount "/=local:$T/data-julyfs-ro" "$W/julyfs-ro" 2>"$W/julyfs-ro.log" & pids+=($!)
for m in loopback loopback-nopt julyfs julyfs-nopt julyfs-ro; do waitmount "$W/$m"; done

fiojson() { fio --output-format=json "$@" | python3 -c "$FIOPY"; }
FIOPY='
import json, sys
j = json.load(sys.stdin)["jobs"][0]
r, w = j["read"], j["write"]
print("%.0f %.0f %.0f" % (r["bw"] / 1024, w["bw"] / 1024, w["iops"]))'

# seqread DIR FILE [FIO ARGS]: one sequential read of FILE (1 GiB, 1 MiB
# blocks) in MiB/s
seqread() {
  local d=$1 f=$2 r
  shift 2
  read -r r _ _ < <(fiojson --name=seq --directory="$d" --filename="$f" --rw=read --bs=1M --size=1G "$@")
  echo "$r"
}

# median of the numbers given as arguments, to 3 decimals
median() {
  python3 -c "import statistics, sys; print('%.3f' % statistics.median(map(float, sys.argv[1:])))" "$@"
}

# The machine may be shared: the load average goes with the figures.
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
NRM=${NRM:-30000}
echo "| target | seq write MiB/s | seq read MiB/s | 4k randwrite IOPS | create/s | stat/s | cached stat/s | readdir entries/s | find s | grep -r s | rm -rf ${NRM} files s | mv 1 GiB ms |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
targets=${TARGETS:-native loopback loopback-nopt julyfs julyfs-nopt julyfs-ro}
dir() { if [ "$1" = native ]; then echo "$T/data"; else echo "$W/$1"; fi; }
# The metadata measures, interleaved over the read-write targets:
# "TARGET MEASURE RATE" lines.
mdirs=()
for name in $targets; do [ $name = julyfs-ro ] || mdirs+=("$(dir $name)"); done
declare -A meta=()
if [ ${#mdirs[@]} -gt 1 ]; then
  while read -r d k v; do meta[$d/$k]=$v; done < <("$BIN/metaops" -rounds "$MROUNDS" "${mdirs[@]}" "$NMETA")
elif [ ${#mdirs[@]} = 1 ]; then
  while read -r k v; do meta[${mdirs[0]}/$k]=$v; done < <("$BIN/metaops" "${mdirs[0]}" "$NMETA")
fi
tl=($targets)
# interleave ROUNDS FN: ROUNDS rounds of FN TARGET on every target in
# turn, each round starting one target further.
interleave() {
  local rounds=$1 fn=$2 r i
  for ((r = 0; r < rounds; r++)); do
    for ((i = 0; i < ${#tl[@]}; i++)); do "$fn" "${tl[(i + r) % ${#tl[@]}]}"; done
  done
}
# find and grep -r, interleaved over every target: seconds in finds[TARGET]
# and greps[TARGET], a warm-up pass first.
declare -A finds=() greps=()
findgrep() {
  local d
  d=$(dir "$1")
  finds[$1]+=" $(once find "$d/gosrc")"
  greps[$1]+=" $(once grep -r -c "func " "$d/gosrc")"
}
interleave 1 findgrep
finds=() greps=()
interleave "$GROUNDS" findgrep
# Sequential read, interleaved, of a 1 GiB file each target wrote (the
# read-only mount's is made on the tmpfs). These first writes are not
# measured: on a VM the first touch of the guest's memory, 6 GiB here,
# is itself slow (native tmpfs wrote at 0.8-1 GiB/s), and the sequential
# writes below reuse these pages.
declare -A srs=()
for name in "${tl[@]}"; do
  if [ $name = julyfs-ro ]; then
    head -c 1G /dev/zero | tr '\0' 'x' > "$(host $name)/seq-$name.dat"
  else
    fiojson --name=seq --directory="$(dir $name)" --filename=seq-$name.dat --rw=write --bs=1M --size=1G --end_fsync=1 >/dev/null
  fi
done
readseq() {
  local ro=()
  if [ "$1" = julyfs-ro ]; then ro=(--readonly); fi
  srs[$1]+=" $(seqread "$(dir "$1")" "seq-$1.dat" "${ro[@]}")"
}
interleave "$SROUNDS" readseq
for name in "${tl[@]}"; do rm -f "$(host $name)/seq-$name.dat"; done
for name in $targets; do
  D=$(dir $name)
  H=$(host $name)
  # the lists are words: unquoted
  f=$(median ${finds[$name]})
  g=$(median ${greps[$name]})
  sr=$(printf '%.0f' "$(median ${srs[$name]})")
  if [ $name = julyfs-ro ]; then
    # read-only: the read workloads only
    echo "| $name | — | $sr | — | — | — | — | — | $f | $g | — | — |"
    continue
  fi
  read -r _ sw _ < <(fiojson --name=seq --directory="$D" --filename=seq-$name.dat --rw=write --bs=1M --size=1G --end_fsync=1)
  rm -f "$D/seq-$name.dat"
  read -r _ _ iops < <(fiojson --name=rand --directory="$D" --filename=rand-$name.dat --rw=randwrite --bs=4k --size=64M --end_fsync=1)
  rm -f "$D/rand-$name.dat"
  mktree "$H/rm-$name" "$NRM"
  sleep 1 # a julyfs mount hears the 31,000 creates on its host directory
  r=$(once rm -rf "$D/rm-$name")
  mkdir -p "$H/mv-$name/to"
  head -c 1G /dev/zero > "$H/mv-$name/big"
  mv_s=$(once mv "$D/mv-$name/big" "$D/mv-$name/to/big")
  mvms=$(python3 -c "print('%.1f' % (1000*float('$mv_s')))")
  rm -rf "$H/mv-$name"
  echo "| $name | $sw | $sr | $iops | ${meta[$D/create]} | ${meta[$D/stat]} | ${meta[$D/stat-cached]} | ${meta[$D/readdir-entries]} | $f | $g | $r | $mvms |"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
