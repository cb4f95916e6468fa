#!/bin/bash
# peak.sh CMD...: runs CMD (stdout to /dev/null), samples VmHWM of it and
# its descendants every 50 ms, prints each process's peak RSS.
"$@" > /dev/null 2>"${TMPDIR:-/tmp}/peak.err" &
pid=$!
declare -A peak name
start=$(date +%s.%N)
while kill -0 $pid 2>/dev/null; do
  for p in $pid $(pgrep -P $pid) $(for c in $(pgrep -P $pid); do pgrep -P $c; done); do
    h=$(awk '/VmHWM/{print $2}' /proc/$p/status 2>/dev/null)
    [ -n "$h" ] || continue
    n=$(cat /proc/$p/comm 2>/dev/null)
    name[$p]=$n
    [ "${peak[$p]:-0}" -lt "$h" ] && peak[$p]=$h
  done
  sleep 0.05
done
wait $pid; rc=$?
end=$(date +%s.%N)
for p in "${!peak[@]}"; do printf "%s %d MB\n" "${name[$p]}" $(( ${peak[$p]} / 1024 )); done
printf "exit %d, %.2f s\n" $rc $(echo "$end - $start" | bc)
head -c 400 "${TMPDIR:-/tmp}/peak.err"
