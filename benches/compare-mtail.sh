#!/usr/bin/env bash
# Whole-process comparison: `llmtail --one-shot` against `mtail --one_shot` on the same
# generated vLLM log, pinned to one core, run alternately; prints min/median/max of wall
# time, CPU time and peak RSS (/usr/bin/time -v), the throughput and the ratio, and checks
# that both end with the same gauge values.
#
#   bash benches/compare-mtail.sh            # 10M lines (~1.4 GB), 3 runs each
#   LINES=1000000 RUNS=5 bash benches/compare-mtail.sh
#
# Installs Debian's mtail and GNU time when missing (apt-get). The log is written under
# target/bench/ (never committed) and is valid UTF-8: Debian's mtail 3.0.0~rc50 stops
# reading a file at its first invalid byte. CPU: `CPU` (default 1) is the core both run on.
set -euo pipefail

LINES=${LINES:-10000000}
RUNS=${RUNS:-3}
CPU=${CPU:-1}
SEED=${SEED:-42}
cd "$(dirname "$0")/.."
ROOT=$PWD
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
WORK=$ROOT/target/bench
mkdir -p "$WORK"

need() { command -v "$1" >/dev/null 2>&1; }
if ! need mtail || [ ! -x /usr/bin/time ]; then
  echo "installing mtail and time (apt-get)" >&2
  SUDO=$([ "$(id -u)" = 0 ] && echo "" || echo sudo)
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq mtail time >/dev/null
fi

cargo build --release --quiet --bin llmtail --example genlog
LLMTAIL=$TARGET/release/llmtail
GENLOG=$TARGET/release/examples/genlog

LOG=$WORK/vllm-$LINES-$SEED.log
if [ ! -s "$LOG" ]; then
  echo "generating $LOG" >&2
  "$GENLOG" --lines "$LINES" --seed "$SEED" --expect "$LOG.expect" >"$LOG.tmp"
  mv "$LOG.tmp" "$LOG"
fi
BYTES=$(stat -c %s "$LOG")
PROGS=$WORK/progs
mkdir -p "$PROGS"
cp benches/vllm.mtail "$PROGS/"

# Warm the page cache: both read from memory, as a tailer reading a fresh log does.
cat "$LOG" >/dev/null

# One run: prints "wall_s cpu_s rss_kb" and leaves the output in $WORK/<name>.out.
measure() {
  local name=$1
  shift
  /usr/bin/time -v -o "$WORK/$name.time" taskset -c "$CPU" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
  awk -F': ' '
    /Elapsed \(wall clock\)/ { n = split($2, p, ":"); wall = (n == 3) ? p[1] * 3600 + p[2] * 60 + p[3] : p[1] * 60 + p[2] }
    /User time/ { user = $2 } /System time/ { sys = $2 } /Maximum resident/ { rss = $2 }
    END { printf "%.2f %.2f %d\n", wall, user + sys, rss }' "$WORK/$name.time"
}

: >"$WORK/llmtail.runs"
: >"$WORK/mtail.runs"
for i in $(seq "$RUNS"); do
  measure llmtail "$LLMTAIL" --log "$LOG" --one-shot >>"$WORK/llmtail.runs"
  measure mtail mtail --one_shot --one_shot_format prometheus --progs "$PROGS" --logs "$LOG" \
    --logtostderr=false --stderrthreshold=FATAL >>"$WORK/mtail.runs"
  echo "run $i: llmtail $(tail -1 "$WORK/llmtail.runs") | mtail $(tail -1 "$WORK/mtail.runs")" >&2
done

# The same gauges, from both, as "engine metric value" lines.
grep -E '^vllm:(num_requests_running|num_requests_waiting|kv_cache_usage_perc|gpu_prefix_cache_hit_rate|avg_prompt_throughput_toks_per_s|avg_generation_throughput_toks_per_s)\{' "$WORK/llmtail.out" |
  sed -E 's/^vllm:([a-z_]+)\{engine="([0-9]+)".*\} (.*)$/\2 \1 \3/' | sort >"$WORK/llmtail.gauges"
grep -E '^vllm_[a-z_]+\{' "$WORK/mtail.out" |
  sed -E 's/^vllm_([a-z_]+)\{engine="([0-9]+)".*\} (.*)$/\2 \1 \3/' | sort >"$WORK/mtail.gauges"
# llmtail divides percentages in decimal (63.1% -> 0.631), mtail in binary floating point
# (0.6310000000000001): equal within 1e-12, relative.
SAME=$(join -j1 <(awk '{print $1"/"$2, $3}' "$WORK/llmtail.gauges") <(awk '{print $1"/"$2, $3}' "$WORK/mtail.gauges") |
  awk -v want="$(wc -l <"$WORK/mtail.gauges")" '
    { d = $2 - $3; if (d < 0) d = -d; m = ($3 < 0 ? -$3 : $3); if (d > 1e-12 * (m > 1 ? m : 1)) bad++; n++ }
    END { if (n == want && n > 0 && !bad) print "yes (" n " gauges)"; else print "NO (" n "/" want " compared, " bad + 0 " differ)" }')

stats() { # column of a runs file -> "min median max"
  cut -d' ' -f"$2" "$1" | sort -g | awk '{ v[NR] = $1 } END { printf "%s %s %s", v[1], v[int((NR + 1) / 2)], v[NR] }'
}
median() { stats "$1" "$2" | cut -d' ' -f2; }

echo
echo "log: $LOG, $LINES lines, $BYTES bytes; $RUNS runs each, alternating, taskset -c $CPU"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(mtail --version 2>&1 | head -1 | cut -d' ' -f1-3)"
printf '%-8s | %-22s | %-22s | %-22s | %s\n' tool "wall s (min med max)" "cpu s (min med max)" "peak RSS KB (min med max)" "GB/s (median wall)"
for t in llmtail mtail; do
  printf '%-8s | %-22s | %-22s | %-22s | %.3f\n' $t "$(stats $WORK/$t.runs 1)" "$(stats $WORK/$t.runs 2)" "$(stats $WORK/$t.runs 3)" \
    "$(awk -v b="$BYTES" -v w="$(median $WORK/$t.runs 1)" 'BEGIN { print b / w / 1e9 }')"
done
awk -v l="$(median $WORK/llmtail.runs 1)" -v m="$(median $WORK/mtail.runs 1)" -v lc="$(median $WORK/llmtail.runs 2)" -v mc="$(median $WORK/mtail.runs 2)" \
  'BEGIN { printf "ratio mtail/llmtail: wall %.1fx, cpu %.1fx\n", m / l, mc / lc }'
echo "same gauge values at the end: $SAME"
