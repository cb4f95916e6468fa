#!/usr/bin/env bash
# bench/eval/run.sh: wall time of `july eval` over N scripted cases
# (default 20): a copy of examples/notes whose evals/ holds N/2 copies of
# each of its two cases, run RUNS times (default 5) on a fresh state root
# each time. Prints each run's wall time and the median.
#
#   bench/eval/run.sh            # 20 cases, 5 runs
#   CASES=100 RUNS=3 bench/eval/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
CASES=${CASES:-20}
RUNS=${RUNS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/july" ./cmd/july
cp -r examples/notes "$work/agent"
rm -rf "$work/agent/.july" "$work/agent/evals"
mkdir "$work/agent/evals"
for i in $(seq 1 $((CASES / 2))); do
	sed "1i name: summary-$i" examples/notes/evals/summary.yaml >"$work/agent/evals/summary-$i.yaml"
	sed "1i name: followup-$i" examples/notes/evals/followup.yaml >"$work/agent/evals/followup-$i.yaml"
done
times=()
for r in $(seq 1 "$RUNS"); do
	rm -rf "$work/state"
	start=$(date +%s.%N)
	"$work/july" eval "$work/agent" --state-root "$work/state" >"$work/out.txt"
	end=$(date +%s.%N)
	t=$(echo "$end - $start" | bc)
	times+=("$t")
	printf -v t "%.3f" "$t"
	echo "run $r: ${t}s ($(tail -1 "$work/out.txt"))"
done
printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "median of %d runs, %s cases: %.3f s (load %s)\n", NR, '"$CASES"', a[int((NR+1)/2)], "'"$(cut -d' ' -f1-3 /proc/loadavg)"'"}'
