#!/usr/bin/env bash
# bench/fuse/git.sh: git clone of an N-file local repository (with
# executable files and symbolic links) and git status on the clone, on
# native tmpfs, on go-fuse's loopback over that tmpfs (with FUSE
# passthrough, as go-fuse ships it as root) and on
# `julyfs mount --mount /=local:` over it. Prints a markdown table of the
# median of RUNS runs; docs/perf/fuse.md records a run. Needs root (it
# mounts a tmpfs) and git.
#
#   bench/fuse/git.sh [N_FILES] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/fuse/lib.sh
[ "$(id -u)" = 0 ] || { echo "bench/fuse/git.sh: run as root" >&2; exit 1; }
N=${1:-10000}
RUNS=${2:-3}
W=$(mktemp -d /tmp/julyfs-gitbench.XXXXXX)
BIN=$W/bin T=$W/tmpfs
mkdir -p "$BIN" "$T" "$W/loopback" "$W/julyfs"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 1
  for m in "$W/loopback" "$W/julyfs" "$T"; do
    mountpoint -q "$m" && umount -l "$m"
  done
  rm -rf "$W"
}
trap cleanup EXIT

go build -o "$BIN/julyfs" ./cmd/julyfs
go build -o "$BIN/julyfsd" ./cmd/julyfsd # julyfs mount runs it from beside itself
go build -o "$BIN/loopback" ./bench/fuse/loopback
mount -t tmpfs -o size=2g tmpfs "$T"
mkdir "$T/data" "$T/src"

# The source repository, on tmpfs: N files in N/100 directories, every
# tenth executable, one link per directory.
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@b GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@b GIT_CONFIG_NOSYSTEM=1 HOME=$W
python3 bench/fuse/mkrepo.py "$T/src" "$N"
git -C "$T/src" init -q && git -C "$T/src" add -A && git -C "$T/src" -c gc.auto=0 commit -qm files
# Packed now, so no background auto-gc removes loose objects mid-clone.
git -C "$T/src" -c gc.autoDetach=false gc -q
"$BIN/loopback" "$T/data" "$W/loopback" >/dev/null & pids+=($!)
"$BIN/julyfs" mount --mount "/=local:$T/data" "$W/julyfs" 2>"$W/julyfs.log" & pids+=($!)
for m in loopback julyfs; do waitmount "$W/$m"; done

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "| target | git clone (s) | git status, first (s) | git status, again (s) | status clean |"
echo "| --- | --- | --- | --- | --- |"
for target in native:"$T/data" loopback:"$W/loopback" julyfs:"$W/julyfs"; do
  name=${target%%:*} dir=${target#*:}
  clone=() st1=() st2=() clean=yes
  git clone -q --no-hardlinks "$T/src" "$dir/warmup" && rm -rf "$dir/warmup"
  for r in $(seq 1 "$RUNS"); do
    rm -rf "$dir/repo" # through the target, so its caches know
    sync
    clone+=("$(once git clone -q --no-hardlinks "$T/src" "$dir/repo")")
    st1+=("$(once git -C "$dir/repo" status --porcelain)")
    st2+=("$(once git -C "$dir/repo" status --porcelain)")
    out=$(git -C "$dir/repo" status --porcelain) && [ -z "$out" ] || clean=no
  done
  echo "| $name | $(median "${clone[@]}") | $(median "${st1[@]}") | $(median "${st2[@]}") | $clean |"
done
