#!/usr/bin/env bash
# bench/grep.sh: julyfs grep and glob over a host tree mounted with local:,
# against ripgrep, GNU grep and find on the same files, plus the in-memory
# (temp:) grep. Checks that every tool finds the same number of matching
# lines, then reports the median wall time (hyperfine) and the peak RSS
# (/usr/bin/time) of each, and the ratios the issue sets targets for.
#
#   bench/grep.sh                      # over $(go env GOROOT)/src
#   TREE=/some/dir RUNS=11 bench/grep.sh
#   WAIT_QUIET=1 bench/grep.sh         # wait (up to 15 min) for load < LOAD_MAX (1.0) first
#
# Flags chosen so the file sets match: rg -uu (no ignore files, hidden
# files searched; binary files still skipped, as julyfs does), grep -rnI
# with LC_ALL=C (binary files skipped). julyfs, rg and find do not follow
# symlinks. The machine notes (load before and after) are printed with the
# figures: take them on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."

TREE=${TREE:-$(go env GOROOT)/src}
TREE=$(cd "$TREE" && pwd -P)
RUNS=${RUNS:-7}
OUT=${OUT:-$(mktemp -d /tmp/julyfs-bench.XXXXXX)}
mkdir -p "$OUT"

missing=()
command -v rg >/dev/null || missing+=(ripgrep)
command -v hyperfine >/dev/null || missing+=(hyperfine)
command -v jq >/dev/null || missing+=(jq)
[ -x /usr/bin/time ] || missing+=(time)
if [ ${#missing[@]} -gt 0 ]; then
	echo "installing ${missing[*]}" >&2
	apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
fi

if [ "${WAIT_QUIET:-0}" = 1 ]; then
	for _ in $(seq 90); do
		awk -v max="${LOAD_MAX:-1.0}" '{exit !($1 < max)}' /proc/loadavg && break
		sleep 10
	done
fi

go build -o "$OUT/vfsgrep" ./bench/cmd/vfsgrep
if [ -d cmd/julyfs ]; then
	go build -o "$OUT/julyfs" ./cmd/julyfs
	jgrep() { echo "$OUT/julyfs grep --mount /=local:$TREE $1 '$2' /"; }
	jglob() { echo "$OUT/julyfs glob --mount /=local:$TREE '$1' /"; }
	TOOL="julyfs (cmd/julyfs)"
else
	jgrep() { echo "$OUT/vfsgrep $1 $TREE '$2'"; }
	jglob() { echo "$OUT/vfsgrep -mode glob $TREE '$1'"; }
	TOOL="julyfs (bench/cmd/vfsgrep)"
fi

# lines CMD: run CMD (a string as hyperfine takes it) and count its output lines.
lines() { bash -c "$1" | wc -l; }
# median CMD...: for each command, hyperfine's median wall time and its mean
# CPU time (user + system), in ms: "wall cpu", one line per command. On a
# shared machine the CPU time is the steadier of the two.
median() {
	hyperfine -N -w 1 -r "$RUNS" --export-json "$OUT/h.json" "$@" >"$OUT/hyperfine.log" 2>&1 ||
		hyperfine -N -w 1 -r "$RUNS" --export-json "$OUT/h.json" "$@" >"$OUT/hyperfine.log" 2>&1 ||
		{ cat "$OUT/hyperfine.log" >&2; return 1; }
	jq -r '.results[] | "\(.median * 1000 | floor) \((.user + .system) * 1000 | floor)"' "$OUT/h.json"
}
wall() { echo "${1% *}"; }
cpu() { echo "${1#* }"; }
# rss CMD: the median peak RSS over three runs, in MiB.
rss() {
	for _ in 1 2 3; do
		/usr/bin/time -f %M -o "$OUT/rss" bash -c "exec $1 >/dev/null" || true
		cat "$OUT/rss"
	done | sort -n | sed -n 2p | awk '{printf "%.0f", $1/1024}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a/b}'; }

echo "# julyfs grep/glob benchmark"
echo
echo "tree: $TREE ($(find "$TREE" -type f | wc -l) files, $(du -sh "$TREE" | cut -f1)); runs: $RUNS; tool: $TOOL"
echo "machine: $(nproc) cores, $(uname -r); load before: $(cut -d' ' -f1-3 /proc/loadavg); $(rg --version | sed -n 1p); $(hyperfine --version)"
echo
echo "Times are hyperfine medians of wall time, with the mean CPU time (user+system) in parentheses, in ms."
echo "temp: is the in-process median of the grep alone over an in-memory copy (bench/cmd/vfsgrep -temp)."
echo
echo "| pattern | flags | lines (julyfs / rg / grep) | julyfs | rg | grep -rn | temp: | julyfs/rg wall (cpu) | temp/rg wall | RSS MiB julyfs / rg / grep |"
echo "|---|---|---|---|---|---|---|---|---|---|"
status=0
while IFS='|' read -r name flags pattern; do
	j=$(jgrep "$flags" "$pattern")
	r="rg -uu -n --no-heading $flags -e '$pattern' $TREE"
	g="grep -rnI -E $flags -e '$pattern' $TREE"
	nj=$(lines "$j")
	nr=$(lines "$r")
	ng=$(LC_ALL=C lines "$g")
	if [ "$nj" != "$nr" ]; then
		echo "COUNT MISMATCH for $name: julyfs $nj, rg $nr" >&2
		status=1
	fi
	mapfile -t t < <(LC_ALL=C median "$j" "$r" "$g")
	tm=$("$OUT/vfsgrep" -temp -c -n "$RUNS" -time $flags "$TREE" "$pattern" 2>&1 >/dev/null |
		awk '{v=$2; if (v ~ /ms$/) {sub(/ms$/,"",v)} else if (v ~ /µs$/) {sub(/µs$/,"",v); v/=1000} else {sub(/s$/,"",v); v*=1000}; printf "%.0f", v}')
	mj=$(rss "$j")
	mr=$(rss "$r")
	mg=$(LC_ALL=C rss "$g")
	echo "| $name \`${pattern//|/\\|}\` | $flags | $nj / $nr / $ng | $(wall "${t[0]}") ($(cpu "${t[0]}")) | $(wall "${t[1]}") ($(cpu "${t[1]}")) | $(wall "${t[2]}") ($(cpu "${t[2]}")) | $tm | $(ratio "$(wall "${t[0]}")" "$(wall "${t[1]}")") ($(ratio "$(cpu "${t[0]}")" "$(cpu "${t[1]}")")) | $(ratio "$tm" "$(wall "${t[1]}")") | $mj / $mr / $mg |"
done <<'EOF'
literal||func main
fold-word|-i|unsafe
alternation||TODO|FIXME|XXX
literal-free||[0-9]{4}[.:][0-9]{2}
EOF

echo
echo "| glob | entries (julyfs / find) | julyfs | find | julyfs/find wall (cpu) | RSS MiB julyfs / find |"
echo "|---|---|---|---|---|---|"
j=$(jglob '**/*.go')
f="find $TREE -name '*.go'"
nj=$(lines "$j")
nf=$(lines "$f")
if [ "$nj" != "$nf" ]; then
	echo "COUNT MISMATCH for glob: julyfs $nj, find $nf" >&2
	status=1
fi
mapfile -t t < <(median "$j" "$f")
echo "| \`**/*.go\` | $nj / $nf | $(wall "${t[0]}") ($(cpu "${t[0]}")) | $(wall "${t[1]}") ($(cpu "${t[1]}")) | $(ratio "$(wall "${t[0]}")" "$(wall "${t[1]}")") ($(ratio "$(cpu "${t[0]}")" "$(cpu "${t[1]}")")) | $(rss "$j") / $(rss "$f") |"

# Peak memory against tree size: the whole tree and one subdirectory.
small=$(find "$TREE" -mindepth 1 -maxdepth 1 -type d | head -1)
echo
echo "peak RSS of julyfs grep -i unsafe: whole tree $(rss "$(jgrep -i unsafe)") MiB;" \
	"$(basename "$small")/ only: $(rss "${OUT}/vfsgrep -c -i $small unsafe") MiB (vfsgrep)," \
	"whole tree with vfsgrep: $(rss "${OUT}/vfsgrep -c -i $TREE unsafe") MiB"
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
