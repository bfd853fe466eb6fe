#!/bin/bash
# Times `llmtail replay` against `llmtail --one-shot` on the same log, in interleaved pairs, on
# one core: on a shared machine both slow down together, so their ratio says more than either.
#
#   bash benches/replay_pair.sh 11 /tmp/gen1m.log [target/release/llmtail]
#
# Prints the CPU seconds (user + sys, /usr/bin/time) of each, min and median, and the median of
# the per-pair ratio. See BENCHMARKS.md, "Replay (backfill)".
set -euo pipefail
runs=$1
log=$2
bin=${3:-target/release/llmtail}
times=$(mktemp)
pairs=$(mktemp)
trap 'rm -f "$times" "$pairs"' EXIT
cpu() { awk '{print $1 + $2}' "$times"; }
for _ in $(seq "$runs"); do
    /usr/bin/time -o "$times" -f "%U %S" taskset -c 0 "$bin" replay --log "$log" \
        --log-timezone UTC --out /dev/null >/dev/null 2>&1
    replay=$(cpu)
    /usr/bin/time -o "$times" -f "%U %S" taskset -c 0 "$bin" --one-shot --log "$log" \
        --log-timezone UTC >/dev/null 2>&1
    echo "$replay $(cpu)" >>"$pairs"
done
stats() { sort -n | awk '{a[NR] = $1} END {printf "min %.2f median %.2f", a[1], a[int((NR + 1) / 2)]}'; }
echo "replay CPU s: $(awk '{print $1}' "$pairs" | stats)"
echo "one-shot CPU s: $(awk '{print $2}' "$pairs" | stats)"
echo "replay / one-shot: median $(awk '{print $1 / $2}' "$pairs" | sort -n | awk '{a[NR] = $1} END {printf "%.2f", a[int((NR + 1) / 2)]}')"
