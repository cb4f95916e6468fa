#!/usr/bin/env bash
# bench/compare.sh: two builds of julyfs side by side on the project's hot
# paths, in interleaved rounds, each ratio with its spread (benchstat).
#
#   bench/compare.sh [-tiny] OLD NEW
#
# OLD and NEW are commits (anything git rev-parse knows: a61c9b6, main,
# HEAD~3; checked out into temporary worktrees, removed at exit) or
# directories holding a julyfs tree (a worktree, "." for the working
# tree as it is). Both are built, then every round runs each measure on
# both builds, in alternating order, so both meet the same moments of a
# shared machine's load:
#
#   Grep/*        julyfs grep of a literal and of -i over $CORPUS (local:),
#                 and ripgrep (rg -uu) on the same files as the peer
#   GlobUnion     julyfs glob '**/*.go' over a union of 4 local: mounts
#   MCPStdioRead  the official TypeScript MCP client's Read round trip of
#                 a 3-byte file to july mcp over stdio (node, the client in
#                 runner/testdata/mcpclient of NEW, installed by npm ci)
#   runner, mcpserver benchmarks: the dispatcher (DispatchOverhead,
#                 DispatchRead, ToolRead), the loop's per-call overhead with
#                 the scripted model (LoopToolCall/calls=50, overhead-ns/call)
#                 and the MCP server's side of a stdio Read (StdioServerRead),
#                 where the build has them
#   IndexQuery    bench/index's in-process query p50 over $INDEX_CORPUS
#   FUSE/*        bench/fuse/metaops create and stat on a julyfs mount of
#                 each build (as root with /dev/fuse only)
#
# Every figure goes into one Go benchmark file per build, and benchstat
# (golang.org/x/perf, pinned below, installed with go install) prints the
# table: each measure's median and spread per build and NEW against OLD
# with its p-value. A measure a build cannot run (a benchmark it does not
# have) shows on the other side only.
#
# Settings (environment): ROUNDS (default 6, the fewest with which
# benchstat gives an interval), CORPUS (default $(go env GOROOT)/src),
# INDEX_CORPUS (default $CORPUS/net/http), MCP_CALLS (200 a round),
# BENCHTIME (go benchmarks, default 2000x), LOOP_BENCHTIME (20x),
# FUSE_FILES (2000), BUILDFLAGS (go build flags, default -trimpath, which
# lets two trees share the build cache), KEEP=1 keeps the work directory.
# -tiny is the test command's setting: one round, GOROOT/src/net/http,
# 20 MCP calls, a few iterations of each benchmark; it checks the script
# runs and asserts nothing about speed (scripts/test runs it on the
# working tree against itself, built once, with BUILDFLAGS=-race so the
# test run's compiled packages are reused).
#
# At the default setting a run takes a few minutes after the builds. The
# wall-clock figures move with the machine's load: read the spread, and
# run it again when a ratio's interval is wide.
set -euo pipefail

BENCHSTAT_VERSION=v0.0.0-20260908200009-22c9c6c9d4da

tiny=0
if [ "${1:-}" = -tiny ]; then tiny=1; shift; fi
if [ $# -ne 2 ]; then
  echo "usage: bench/compare.sh [-tiny] OLD NEW  (commits or julyfs trees)" >&2
  exit 2
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
goroot=$(go env GOROOT)
if [ $tiny = 1 ]; then
  : "${ROUNDS:=1}" "${CORPUS:=$goroot/src/net/http}" "${INDEX_CORPUS:=$goroot/src/encoding}"
  : "${MCP_CALLS:=20}" "${BENCHTIME:=20x}" "${LOOP_BENCHTIME:=1x}" "${FUSE_FILES:=100}"
fi
: "${ROUNDS:=6}" "${CORPUS:=$goroot/src}" "${INDEX_CORPUS:=$CORPUS/net/http}" "${MCP_CALLS:=200}"
: "${BENCHTIME:=2000x}" "${LOOP_BENCHTIME:=20x}" "${FUSE_FILES:=2000}" "${BUILDFLAGS:=-trimpath}"

W=$(mktemp -d /tmp/julyfs-compare.XXXXXX)
worktrees=() pids=() mounts=()
cleanup() {
  # Unmount first (a julyfs mount's daemon ends with its connection), then
  # interrupt, then, after 5 s, kill.
  for m in "${mounts[@]}"; do fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null || true; done
  for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  for w in "${worktrees[@]}"; do git -C "$repo" worktree remove --force "$w" 2>/dev/null || true; done
  git -C "$repo" worktree prune 2>/dev/null || true
  if [ "${KEEP:-}" = 1 ]; then echo "compare.sh: kept $W" >&2; else rm -rf "$W"; fi
}
trap cleanup EXIT
say() { echo "compare.sh: $*" >&2; }

# tree NAME SPEC: the source directory of a side (a worktree of a commit).
tree() {
  if [ -d "$2" ]; then
    (cd "$2" && pwd)
    return
  fi
  local sha
  sha=$(git -C "$repo" rev-parse --verify --quiet "$2^{commit}") || { echo "compare.sh: $2 is neither a directory nor a commit" >&2; exit 2; }
  git -C "$repo" worktree add --quiet --detach "$W/src-$1" "$sha" >&2
  echo "$W/src-$1"
}
declare -A src
src[old]=$(tree old "$1")
src[new]=$(tree new "$2")
for s in old new; do if [ "${src[$s]}" = "$W/src-$s" ]; then worktrees+=("$W/src-$s"); fi; done
say "OLD ${src[old]} ($(git -C "${src[old]}" rev-parse --short HEAD 2>/dev/null || echo '?')), NEW ${src[new]} ($(git -C "${src[new]}" rev-parse --short HEAD 2>/dev/null || echo '?')), $ROUNDS round(s), load $(cut -d' ' -f1-3 /proc/loadavg)"

# benchstat, pinned, built once into the Go bin directory's cache.
benchstat=$(go env GOPATH)/bin/benchstat-$BENCHSTAT_VERSION
if [ ! -x "$benchstat" ]; then
  mkdir -p "$W/gobin"
  GOBIN="$W/gobin" go install "golang.org/x/perf/cmd/benchstat@$BENCHSTAT_VERSION"
  mkdir -p "$(dirname "$benchstat")"
  mv "$W/gobin/benchstat" "$benchstat"
fi

fuse=0
if [ "$(id -u)" = 0 ] && [ -e /dev/fuse ] && command -v fusermount3 >/dev/null; then fuse=1; fi

# Build both sides. A tool or benchmark a side does not have is skipped.
for s in old new; do
  b="$W/bin-$s"
  if [ $s = new ] && [ "${src[new]}" = "${src[old]}" ]; then
    ln -s "$W/bin-old" "$b" # one tree: one build
    continue
  fi
  mkdir -p "$b"
  say "building $s"
  (
    cd "${src[$s]}"
    go build $BUILDFLAGS -o "$b/" ./cmd/julyfs ./cmd/julyfsd ./cmd/july
    go test -c $BUILDFLAGS -o "$b/runner.test" ./runner
    if [ -d runner/mcpserver ]; then go test -c $BUILDFLAGS -o "$b/mcpserver.test" ./runner/mcpserver; fi
    if [ -d bench/index ]; then go build $BUILDFLAGS -o "$b/benchindex" ./bench/index; fi
  )
done
if [ $fuse = 1 ]; then (cd "${src[new]}" && go build $BUILDFLAGS -o "$W/metaops" ./bench/fuse/metaops); fi

# The MCP agent: a local: root with one 3-byte file.
mkdir -p "$W/agent/tree"
printf 'name: compare\nroot:\n  /:\n    local: ./tree\n' >"$W/agent/agent.yaml"
echo "Compare." >"$W/agent/instructions.md"
echo hi >"$W/agent/tree/a.txt"
printf '{"bench":{"name":"Read","arguments":{"path":"/a.txt"},"n":%d}}\n' "$MCP_CALLS" >"$W/calls.json"
# The client: NEW's, else the one beside this script (a fresh worktree has
# no node_modules).
mcp=0
for client in "${src[new]}/runner/testdata/mcpclient" "$repo/runner/testdata/mcpclient"; do
  if command -v node >/dev/null && [ -f "$client/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
    mcp=1
    break
  fi
done
[ $mcp = 1 ] || say "MCPStdioRead skipped: needs node and the client in runner/testdata/mcpclient (npm ci there)"
rg=0
if command -v rg >/dev/null; then rg=1; else say "the rg peer skipped: ripgrep is not installed"; fi

# FUSE: one julyfs mount of each build, over directories on /tmp.
if [ $fuse = 1 ]; then
  for s in old new; do
    mkdir -p "$W/fuse-data-$s" "$W/mnt-$s"
    "$W/bin-$s/julyfs" mount --mount "/=local:$W/fuse-data-$s" "$W/mnt-$s" 2>"$W/mount-$s.log" &
    pids+=($!)
    mounts+=("$W/mnt-$s")
  done
  for s in old new; do
    for _ in $(seq 1 300); do mountpoint -q "$W/mnt-$s" && break; sleep 0.1; done
    mountpoint -q "$W/mnt-$s" || { cat "$W/mount-$s.log" >&2; say "julyfs mount of $s failed"; exit 1; }
  done
else
  say "FUSE/* skipped: needs root, /dev/fuse and fusermount3"
fi

# emit FILE NAME NS [UNIT-VALUE UNIT]...: one benchmark line.
emit() { local f=$1 n=$2; shift 2; echo "Benchmark$n 1 $*" >>"$f"; }

# timed FILE NAME CMD...: the wall time of one run of CMD as NAME.
timed() {
  local f=$1 n=$2 t0 t1
  shift 2
  t0=$EPOCHREALTIME
  "$@" >/dev/null
  t1=$EPOCHREALTIME
  emit "$f" "$n" "$(( (${t1/./} - ${t0/./}) * 1000 )) ns/op"
}

globmounts=()
for i in 1 2 3 4; do globmounts+=(--mount "/m$i=local:$CORPUS"); done

# measure SIDE ROUND: every measure of one build, once.
measure() {
  local s=$1 r=$2 b="$W/bin-$1" f="$W/$1.txt"
  timed "$f" Grep/literal "$b/julyfs" grep --mount "/=local:$CORPUS" 'func main' /
  timed "$f" Grep/nocase "$b/julyfs" grep -i --mount "/=local:$CORPUS" 'unsafe' /
  timed "$f" GlobUnion "$b/julyfs" glob "${globmounts[@]}" '**/*.go' /
  if [ $mcp = 1 ]; then
    local ns
    ns=$(cd "$client" && node client.mjs stdio "$W/calls.json" "$b/july" mcp "$W/agent" |
      sed -n 's/.*"nsPerCall":\([0-9.e+]*\).*/\1/p')
    [ -n "$ns" ] && emit "$f" MCPStdioRead "$(printf '%.0f' "$ns") ns/op"
  fi
  (cd "${src[$s]}/runner" && "$b/runner.test" -test.run '^$' -test.count 1 -test.benchtime "$BENCHTIME" \
    -test.bench '^(BenchmarkDispatchOverhead|BenchmarkDispatchRead|BenchmarkToolRead)$' | grep '^Benchmark' >>"$f" || true)
  (cd "${src[$s]}/runner" && "$b/runner.test" -test.run '^$' -test.count 1 -test.benchtime "$LOOP_BENCHTIME" \
    -test.bench '^BenchmarkLoopToolCall$/^calls=50$' | grep '^Benchmark' >>"$f" || true)
  if [ -x "$b/mcpserver.test" ]; then
    (cd "${src[$s]}/runner/mcpserver" && "$b/mcpserver.test" -test.run '^$' -test.count 1 -test.benchtime "$BENCHTIME" \
      -test.bench '^BenchmarkStdioServerRead$' | grep '^Benchmark' >>"$f" || true)
  fi
  if [ -x "$b/benchindex" ]; then
    local p50
    p50=$(cd "${src[$s]}" && "$b/benchindex" -corpus "$INDEX_CORPUS" -scales 1 -rounds 3 -oneshots 0 2>&1 |
      sed -n 's/^query latency in process.*: p50 \([^ ]*\) .*/\1/p' | head -1 || true)
    if [ -n "$p50" ]; then
      emit "$f" IndexQuery "$(python3 -c "
import re,sys
v=sys.argv[1]; m=re.fullmatch(r'([0-9.]+)(ns|µs|us|ms|s)', v)
print(round(float(m[1])*{'ns':1,'µs':1e3,'us':1e3,'ms':1e6,'s':1e9}[m[2]]))" "$p50") ns/op"
    fi
  fi
}

# rgpeer ROUND: ripgrep on the same searches, the peer of Grep/*.
rgpeer() {
  timed "$W/rg.txt" Grep/literal rg -uu 'func main' "$CORPUS"
  timed "$W/rg.txt" Grep/nocase rg -uu -i 'unsafe' "$CORPUS"
}

# fuseround ROUND: metaops on both mounts, interleaved (its own order).
fuseround() {
  local r=$1 out
  mkdir -p "$W/mnt-old/r$r" "$W/mnt-new/r$r"
  out=$("$W/metaops" -rounds 1 "$W/mnt-old/r$r" "$W/mnt-new/r$r" "$FUSE_FILES")
  while read -r dir name rate; do
    local s=new
    case $dir in "$W/mnt-old/"*) s=old ;; esac
    case $name in create | stat | stat-cached)
      emit "$W/$s.txt" "FUSE/$name" "$(python3 -c "print(round(1e9/float('$rate')))") ns/op" ;;
    esac
  done <<<"$out"
  rm -rf "$W/mnt-old/r$r" "$W/mnt-new/r$r"
}

: >"$W/old.txt"
: >"$W/new.txt"
: >"$W/rg.txt"
for r in $(seq 1 "$ROUNDS"); do
  order="old new"
  [ $((r % 2)) = 0 ] && order="new old"
  say "round $r/$ROUNDS ($order), load $(cut -d' ' -f1 /proc/loadavg)"
  for s in $order; do measure "$s" "$r"; done
  [ $rg = 1 ] && rgpeer "$r"
  [ $fuse = 1 ] && fuseround "$r"
done

echo "# bench/compare.sh $*: OLD ${src[old]}, NEW ${src[new]}; $ROUNDS round(s); corpus $CORPUS; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$benchstat" old="$W/old.txt" new="$W/new.txt"
if [ $rg = 1 ]; then
  echo
  echo "# julyfs grep against ripgrep (rg -uu) on the same files"
  "$benchstat" -filter '.name:/^Grep/' rg="$W/rg.txt" old="$W/old.txt" new="$W/new.txt"
fi
