#!/usr/bin/env bash
# The benchmark table (BENCHMARKS.md, "The table"): one row per measurement, each with its
# command, its figure, a ratio from paired runs and the target where there is one.
#
#   bash benches/table.sh             # prints the table, writes target/bench/table.md
#   bash benches/table.sh --write     # and puts it between the markers in BENCHMARKS.md
#   QUICK=1 bash benches/table.sh     # 1M lines, 2 runs, 10 scrapes, 5 s idle: to try it out
#   ONLY=oneshot,replay bash benches/table.sh
#
# Knobs: LINES (10000000: the benchmark log, 973 MB), RUNS (5 pairs), CPU (1: the core every
# timed run is pinned to), ONLY (oneshot,mtail,replay,files,scrape), PORT (39133), SCRAPES
# (50 per scrape row), IDLE_SECONDS (20, idle CPU of the 1,000 files).
#
# Timed commands run in interleaved pairs (A, B, A, B, ...) under `taskset -c $CPU` after the
# log was read once into the page cache: on a shared machine both sides slow down together,
# so the median of the per-pair ratios moves less than either side. Every run's answer is
# checked before its time counts, so a broken binary cannot make a fast figure. Installs
# Debian's mtail and GNU time when missing (apt-get). Logs and outputs go under target/bench/
# (never committed); the live rows bind 127.0.0.1 only.
set -euo pipefail
export LC_ALL=C

usage() {
  sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
WRITE=0
for arg in "$@"; do
  case $arg in
    --write) WRITE=1 ;;
    *) usage ;;
  esac
done
if [ "${QUICK:-0}" = 1 ]; then
  LINES=${LINES:-1000000}
  RUNS=${RUNS:-2}
  SCRAPES=${SCRAPES:-10}
  IDLE_SECONDS=${IDLE_SECONDS:-5}
fi
LINES=${LINES:-10000000}
RUNS=${RUNS:-5}
CPU=${CPU:-1}
ALL=oneshot,mtail,replay,files,scrape
ONLY=${ONLY:-$ALL}
PORT=${PORT:-39133}
SCRAPES=${SCRAPES:-50}
IDLE_SECONDS=${IDLE_SECONDS:-20}
for part in ${ONLY//,/ }; do
  case ",$ALL," in *",$part,"*) ;; *) echo "ONLY: unknown part '$part' (known: $ALL)" >&2 && exit 2 ;; esac
done
if [ "$WRITE" = 1 ] && { [ "$ONLY" != "$ALL" ] || [ "${QUICK:-0}" = 1 ]; }; then
  echo "--write replaces the whole table: run every part (no ONLY) and not QUICK" >&2
  exit 2
fi
if [ "$CPU" -ge "$(nproc)" ]; then
  echo "CPU=$CPU: this machine has cores 0 to $(($(nproc) - 1))" >&2
  exit 2
fi
wants() { case ",$ONLY," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

cd "$(dirname "$0")/.."
ROOT=$PWD
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
WORK=$ROOT/target/bench
LLMTAIL=$TARGET/release/llmtail
GENLOG=$TARGET/release/examples/genlog
PIN="taskset -c $CPU"
mkdir -p "$WORK/runs" "$WORK/out"
rm -f "$WORK"/runs/* "$WORK/rows.md"
# shellcheck source=benches/agent.sh
. benches/agent.sh
trap agent_stop EXIT

say() { echo "table.sh: $*" >&2; }
fail() {
  say "$*"
  exit 1
}

install_missing() {
  local packages=()
  [ -x /usr/bin/time ] || packages+=(time)
  if wants mtail && ! command -v mtail >/dev/null; then packages+=(mtail); fi
  if { wants files || wants scrape; } && ! command -v curl >/dev/null; then packages+=(curl); fi
  [ ${#packages[@]} = 0 ] && return 0
  say "installing ${packages[*]} (apt-get)"
  local sudo
  sudo=$([ "$(id -u)" = 0 ] || echo sudo)
  $sudo apt-get update -qq && $sudo apt-get install -y -qq "${packages[@]}" >/dev/null
}

# generate FILE GENLOG_ARGS...: a log and its .expect (each engine's last gauges), made once.
generate() {
  local file=$1
  shift
  [ -s "$file" ] && [ -s "$file.expect" ] && return 0
  say "generating $file"
  "$GENLOG" "$@" --expect "$file.expect" >"$file.tmp"
  mv "$file.tmp" "$file"
}

# The first 100 MB of a log, cut at a line end (all of it when it is smaller).
cut_100mb() {
  local from=$1 to=$2
  [ -s "$to" ] && [ "$to" -nt "$from" ] && return 0
  head -n "$(head -c 100000000 "$from" | wc -l)" "$from" >"$to.tmp"
  mv "$to.tmp" "$to"
}

prepare() {
  install_missing
  say "building the release binary and examples/genlog"
  cargo build --release --quiet --bin llmtail --example genlog
  # Logs are named after genlog's source, so a changed generator makes new ones.
  local id
  id=$(sha256sum examples/genlog.rs | cut -c1-8)
  find "$WORK" -maxdepth 1 -name 'vllm-*.log*' ! -name "*.$id.log*" -delete
  BENCHLOG=$WORK/vllm-$LINES-80b.$id.log
  CUT=$WORK/vllm-$LINES-80b-100mb.$id.log
  SPARSE=$WORK/vllm-1000000.$id.log
  if wants oneshot || wants mtail || wants replay; then
    generate "$BENCHLOG" --lines "$LINES" --seed 42 --line-bytes 80
  fi
  if wants mtail; then cut_100mb "$BENCHLOG" "$CUT"; fi
  if wants replay; then generate "$SPARSE" --lines 1000000 --seed 42; fi
}

# run NAME CMD...: one run of CMD pinned to $CPU, its output in out/NAME.out; appends
# "wall_s cpu_s peak_rss_kb" to runs/NAME. A failing command ends the script.
run() {
  local name=$1
  shift
  local out=$WORK/out/$name
  rm -f "$out.out" "$out.err" "$out.time"
  local t0=$EPOCHREALTIME
  /usr/bin/time -f '%U %S %M' -o "$out.time" $PIN "$@" >"$out.out" 2>"$out.err" ||
    fail "$name failed: $* (see $out.err)"
  local t1=$EPOCHREALTIME
  awk -v t0="$t0" -v t1="$t1" '{ printf "%.4f %.2f %d\n", t1 - t0, $1 + $2, $3 }' "$out.time" >>"$WORK/runs/$name"
}

# --- Answers ---------------------------------------------------------------------------------

GAUGES='num_requests_running|num_requests_waiting|kv_cache_usage_perc|gpu_prefix_cache_hit_rate|avg_prompt_throughput_toks_per_s|avg_generation_throughput_toks_per_s'

# gauges FILE: the six V1 gauges by engine in llmtail's text or OpenMetrics, or mtail's
# (`vllm_` prefix), as sorted "engine/gauge value" lines; the last sample of a series wins.
gauges() {
  grep -E "^vllm[:_]($GAUGES)\{" "$1" |
    sed -E 's/^vllm[:_]([a-z_]+)\{.*engine="([0-9]+)".*\} ([^ ]+).*$/\2\/\1 \3/' |
    awk '{ last[$1] = $2 } END { for (k in last) print k, last[k] }' | sort
}

# expected LOG: the same from genlog's .expect (engine running waiting kv% hit% prompt gen).
expected() {
  awk '{ printf "%s/num_requests_running %s\n%s/num_requests_waiting %s\n", $1, $2, $1, $3
         printf "%s/kv_cache_usage_perc %.17g\n%s/gpu_prefix_cache_hit_rate %.17g\n", $1, $4 / 100, $1, $5 / 100
         printf "%s/avg_prompt_throughput_toks_per_s %s\n%s/avg_generation_throughput_toks_per_s %s\n", $1, $6, $1, $7 }' \
    "$1.expect" | sort
}

# same_gauges A B WHAT: both lists hold the same gauges with equal values (within 1e-12,
# relative: llmtail divides percentages in decimal, awk and mtail in binary floating point).
same_gauges() {
  local verdict
  verdict=$(join -a1 -a2 -e missing -o 0,1.2,2.2 <(echo "$1") <(echo "$2") | awk '
    $2 == "missing" || $3 == "missing" { bad++; if (bad <= 3) shown = shown " " $0; next }
    { d = $2 - $3; d = d < 0 ? -d : d; m = $3 < 0 ? -$3 : $3 }
    d > 1e-12 * (m > 1 ? m : 1) { bad++; if (bad <= 3) shown = shown " " $0 }
    END { if (NR > 0 && !bad) print NR; else printf "NO: %d of %d differ or are missing (gauge, got, want):%s\n", bad, NR, shown }')
  case $verdict in
    NO*) fail "$3: wrong gauges. $verdict" ;;
  esac
  GAUGES_CHECKED=$verdict
}

check_lines() { # OUT WANT: `wc -l` counted the lines genlog wrote
  local n
  read -r n _ <"$1"
  [ "$n" = "$2" ] || fail "wc -l counted $n lines, genlog wrote $2"
}

check_replay() { # OUT: a whole OpenMetrics history
  [ "$(tail -c 6 "$1")" = "# EOF" ] || fail "replay: $1 does not end with # EOF"
}

# --- Figures ---------------------------------------------------------------------------------

MEDIAN='{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print v[1], m }'
# side NAME COLUMN: "min median" of one side's runs (1 wall s, 2 CPU s, 3 peak RSS KiB).
side() { cut -d' ' -f"$2" "$WORK/runs/$1" | sort -g | awk "$MEDIAN"; }
# ratio A B: the median over the pairs of A's wall time over B's.
ratio() { paste -d' ' "$WORK/runs/$1" "$WORK/runs/$2" | awk '{ print $1 / $4 }' | sort -g | awk "$MEDIAN" | cut -d' ' -f2; }
calc() { awk "BEGIN { printf $1 }"; }
# seconds NAME: "0.55 s (min 0.52)", the median wall time first.
seconds() {
  side "$1" 1 | awk 'function f(x) { return sprintf(x < 1 ? "%.3f" : x < 10 ? "%.2f" : "%.1f", x) }
    { printf "%s s (min %s)", f($2), f($1) }'
}
median_wall() { side "$1" 1 | cut -d' ' -f2; }
gbps() { calc "\"%.2f\", $1 / $2 / 1e9"; }
# rss NAME: "4.8 MB (min 4.7)" of the peak RSS, in 10^6 bytes.
rss() { side "$1" 3 | awk '{ printf "%.1f MB (min %.1f)", $2 * 1024 / 1e6, $1 * 1024 / 1e6 }'; }
median_rss_mb() { side "$1" 3 | awk '{ printf "%.2f", $2 * 1024 / 1e6 }'; }
commas() { echo "$1" | sed -E ':a;s/([0-9])([0-9]{3})($|,)/\1,\2\3/;ta'; }
mb() { calc "$1 < 1e9 ? \"%.1f MB\" : \"%.2f GB\", $1 / ($1 < 1e9 ? 1e6 : 1e9)"; }
# meets VALUE OP LIMIT: "met" or "**missed**".
meets() { awk -v v="$1" -v l="$3" -v op="$2" 'BEGIN { ok = op == "<=" ? v <= l : v >= l; print ok ? "met" : "**missed**" }'; }

# row WHAT COMMAND FIGURE RATIO TARGET: one line of the table (a `|` in a cell escaped).
row() {
  local cells=() cell
  for cell in "$@"; do cells+=("${cell//|/\\|}"); done
  printf '| %s | %s | %s | %s | %s |\n' "${cells[@]}" >>"$WORK/rows.md"
}

# --- Measurements ----------------------------------------------------------------------------

warm() { cat "$@" >/dev/null; }

measure_oneshot() {
  local log=$BENCHLOG name want bytes
  name=$(basename "$log")
  want=$(expected "$log")
  bytes=$(stat -c %s "$log")
  warm "$log"
  for i in $(seq "$RUNS"); do
    run oneshot "$LLMTAIL" --one-shot --log "$log"
    same_gauges "$(gauges "$WORK/out/oneshot.out")" "$want" "llmtail --one-shot on $name"
    run wc wc -l "$log"
    check_lines "$WORK/out/wc.out" "$LINES"
    say "one-shot / wc -l, pair $i of $RUNS: $(tail -1 "$WORK/runs/oneshot" | cut -d' ' -f1) s / $(tail -1 "$WORK/runs/wc" | cut -d' ' -f1) s"
  done
  local r
  r=$(ratio oneshot wc)
  row "one-shot against \`wc -l\`, benchmark log ($(mb "$bytes"))" \
    "\`llmtail --one-shot --log $name\`; \`wc -l $name\`" \
    "llmtail $(seconds oneshot), $(gbps "$bytes" "$(median_wall oneshot)") GB/s; \`wc -l\` $(seconds wc)" \
    "$(calc "\"%.2fx\", $r")" "at most 3x: $(meets "$r" "<=" 3)"
  row "peak RSS of the one-shot, benchmark log" "GNU time \`%M\` of the runs above" \
    "$(rss oneshot)" "" "at most 12 MB: $(meets "$(median_rss_mb oneshot)" "<=" 12)"
}

measure_mtail() {
  local log=$CUT name progs=$WORK/progs bytes
  name=$(basename "$log")
  bytes=$(stat -c %s "$log")
  mkdir -p "$progs"
  cp benches/vllm.mtail "$progs/"
  warm "$log"
  for i in $(seq "$RUNS"); do
    run oneshot-cut "$LLMTAIL" --one-shot --log "$log"
    run mtail mtail --one_shot --one_shot_format prometheus --progs "$progs" --logs "$log" \
      --logtostderr=false --stderrthreshold=FATAL
    same_gauges "$(gauges "$WORK/out/oneshot-cut.out")" "$(gauges "$WORK/out/mtail.out")" \
      "llmtail and mtail on $name"
    say "mtail / one-shot, pair $i of $RUNS: $(tail -1 "$WORK/runs/mtail" | cut -d' ' -f1) s / $(tail -1 "$WORK/runs/oneshot-cut" | cut -d' ' -f1) s; the same $GAUGES_CHECKED gauges"
  done
  local r version
  r=$(ratio mtail oneshot-cut)
  version=$(mtail --version 2>&1 | head -1 | awk '{ print $3 }')
  row "one-shot against mtail $version, the first 100 MB ($(mb "$bytes"))" \
    "\`mtail --one_shot --progs benches/vllm.mtail --logs $name\`; \`llmtail --one-shot --log $name\`" \
    "mtail $(seconds mtail); llmtail $(seconds oneshot-cut); the same $GAUGES_CHECKED gauges" \
    "$(calc "\"%.1fx\", $r")" "at least 40x: $(meets "$r" ">=" 40)"
}

# replay_pair LOG LABEL WHAT: replay to a file against the one-shot, in pairs; two rows.
replay_pair() {
  local log=$1 label=$2 what=$3 name want bytes om=$WORK/out/replay-$2.om
  name=$(basename "$log")
  want=$(expected "$log")
  bytes=$(stat -c %s "$log")
  warm "$log"
  for i in $(seq "$RUNS"); do
    rm -f "$om"
    run "replay-$label" "$LLMTAIL" replay --log "$log" --log-timezone UTC --out "$om"
    check_replay "$om"
    run "oneshot-$label" "$LLMTAIL" --one-shot --log "$log" --log-timezone UTC
    same_gauges "$(gauges "$WORK/out/oneshot-$label.out")" "$want" "llmtail --one-shot on $name"
    say "replay / one-shot on $name, pair $i of $RUNS: $(tail -1 "$WORK/runs/replay-$label" | cut -d' ' -f1) s / $(tail -1 "$WORK/runs/oneshot-$label" | cut -d' ' -f1) s"
  done
  same_gauges "$(gauges "$om")" "$want" "the last samples of llmtail replay on $name"
  local r speed
  r=$(ratio "replay-$label" "oneshot-$label")
  speed=$(gbps "$bytes" "$(median_wall "replay-$label")")
  row "replay against one-shot, $what ($(mb "$bytes"))" \
    "\`llmtail replay --log $name --log-timezone UTC --out $(basename "$om")\`; \`llmtail --one-shot --log $name --log-timezone UTC\`" \
    "replay $(seconds "replay-$label"), $speed GB/s, $(mb "$(stat -c %s "$om")") written; one-shot $(seconds "oneshot-$label")" \
    "$(calc "\"%.2fx\", $r")" \
    "at least 0.5 GB/s: $(meets "$speed" ">=" 0.5); at most 1.5x: $(meets "$r" "<=" 1.5)"
  row "peak RSS of replay, $what" "GNU time \`%M\` of the runs above" "$(rss "replay-$label")" "" ""
}

measure_replay() {
  replay_pair "$BENCHLOG" bench "benchmark log"
  replay_pair "$SPARSE" sparse "sparse log"
}

# wait_for_lines N: until the agent has read N lines (a deadline of 60 s).
wait_for_lines() {
  for _ in $(seq 600); do
    [ "$(metric_sum llmtail_lines_read_total)" = "$1" ] && return 0
    sleep 0.1
  done
  fail "the agent read $(metric_sum llmtail_lines_read_total) lines, not $1"
}

# scrape_figure: $SCRAPES scrapes of the running agent, into $SCRAPED ("2.1 MB in 7.1 ms ...")
# and $SCRAPE_MS (the median).
scrape_figure() {
  local bytes min med p99 max
  read -r bytes min med p99 max < <(scrape_times "$SCRAPES")
  SCRAPE_MS=$med
  SCRAPED="$(mb "$bytes") in $med ms median (min $min, p99 $p99, max $max; $SCRAPES scrapes)"
}

measure_files() {
  local dir=$WORK/thousand one=$WORK/out/one-of-thousand.log t0 t1 open
  rm -rf "$dir"
  mkdir -p "$dir"
  "$GENLOG" --lines 200 --seed 7 >"$one"
  for i in $(seq -w 1 1000); do cp "$one" "$dir/vllm-$i.log"; done
  # Last written an hour ago: quiet logs, whose engines the agent judges overdue (gauges not
  # served). Written just now, they are up for 30 s (three stats intervals from the files'
  # time), and the scrape below fell either side of that: 4.7 or 5.2 MB by the run.
  touch -d '1 hour ago' "$dir"/*.log
  agent_start "$WORK/out/thousand.err" --log "$dir/*.log"
  wait_for_lines 200000
  open=$(curl -s "http://127.0.0.1:$PORT/metrics" | grep -Ec '^llmtail_log_open\{.*\} 1(\.0)?$' || true)
  [ "$open" = 1000 ] || fail "1,000 files: $open logs open"
  sleep 2
  t0=$(cpu_ticks "$AGENT")
  sleep "$IDLE_SECONDS"
  t1=$(cpu_ticks "$AGENT")
  local rss hwm idle fds
  rss=$(rss_kb "$AGENT")
  hwm=$(hwm_kb "$AGENT")
  fds=$(find "/proc/$AGENT/fd" -mindepth 1 | wc -l)
  idle=$(calc "\"%.2f\", 100 * $((t1 - t0)) / $HZ / $IDLE_SECONDS")
  say "1,000 files: RSS $rss KiB, peak $hwm KiB, $((t1 - t0)) ticks in $IDLE_SECONDS s"
  local cmd="\`llmtail --log 'thousand/*.log'\`, 1,000 logs of 200 lines (\`genlog --lines 200 --seed 7\`), read then quiet"
  row "1,000 followed files: resident memory" "$cmd; VmRSS, VmHWM" \
    "$(mb $((rss * 1024))) (peak $(mb $((hwm * 1024)))), $(commas "$fds") descriptors" "" \
    "15 MB before; at most that: $(meets "$(calc "\"%.2f\", $rss * 1024 / 1e6")" "<=" 15)"
  row "1,000 followed files: idle CPU" "the same; utime + stime over $IDLE_SECONDS s" \
    "$idle% of a core ($((t1 - t0)) ticks)" "" "0.55% before; at most that: $(meets "$idle" "<=" 0.55)"
  scrape_figure
  row "1,000 followed files: a scrape" "the same; \`curl /metrics\`" "$SCRAPED" "" \
    "2.1 MB in 6-10 ms before; at most 10 ms: $(meets "$SCRAPE_MS" "<=" 10)"
  agent_stop
}

measure_scrape() {
  local log=$WORK/out/many.log series
  "$GENLOG" --lines 20000 --engines 1100 --seed 3 >"$log"
  agent_start "$WORK/out/many.err" --log "$log"
  wait_for_lines 20000
  series=$(curl -s "http://127.0.0.1:$PORT/metrics" | grep -vc '^#')
  [ "$series" -ge 10000 ] || fail "scrape: $series series, not 10,000 or more"
  scrape_figure
  row "a scrape of $(commas "$series") series (1,100 vLLM engines), live agent" \
    "\`llmtail --log many.log\` (\`genlog --lines 20000 --engines 1100 --seed 3\`); \`curl /metrics\`" \
    "$SCRAPED; peak RSS $(mb $(($(hwm_kb "$AGENT") * 1024)))" "" ""
  agent_stop
  measure_render
}

# The render alone, in process: benches/scrape.rs under criterion (it checks its answer).
measure_render() {
  say "building and running cargo bench --bench scrape"
  cargo bench --quiet --bench scrape --no-run 2>"$WORK/out/render.err"
  local stamp=$WORK/out/render.stamp
  touch "$stamp"
  $PIN cargo bench --quiet --bench scrape -- --warm-up-time 1 --measurement-time "$((RUNS * 2))" \
    >"$WORK/out/render.out" 2>>"$WORK/out/render.err" || fail "cargo bench --bench scrape failed (see $WORK/out/render.err)"
  local format estimates group figure=()
  for format in text_0_0_4 openmetrics; do
    estimates=$(find "$TARGET/criterion" -path "*/scrape_*_series/$format/new/estimates.json" -newer "$stamp" | head -1)
    [ -n "$estimates" ] || fail "cargo bench --bench scrape left no estimates for $format"
    group=$(basename "$(dirname "$(dirname "$(dirname "$estimates")")")")
    figure+=("$format $(python3 -c 'import json, sys
e = json.load(open(sys.argv[1]))["median"]["point_estimate"]
b = json.load(open(sys.argv[2]))["throughput"]["Bytes"]
print(f"{b / 1e6:.1f} MB in {e / 1e6:.2f} ms")' "$estimates" "$(dirname "$estimates")/benchmark.json")")
  done
  row "a render of $(commas "${group//[!0-9]/}") series, in process" "\`cargo bench --bench scrape\` (criterion median)" \
    "${figure[0]}; ${figure[1]}" "" ""
}

# --- The table -------------------------------------------------------------------------------

machine() {
  echo "$(nproc) cores of $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), Linux $(uname -r)"
}

# The heading lines: what ran, where, on which logs.
header() {
  local commit knobs
  commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  git diff --quiet HEAD -- src grammars Cargo.toml Cargo.lock 2>/dev/null || commit="$commit with changes"
  knobs="LINES=$LINES RUNS=$RUNS CPU=$CPU"
  [ "$ONLY" = "$ALL" ] || knobs="$knobs ONLY=$ONLY"
  [ "${QUICK:-0}" = 1 ] && knobs="QUICK=1 $knobs"
  echo "Measured $(date -u +%Y-%m-%d) by \`$knobs bash benches/table.sh\` at $commit, on $(machine)."
  if wants oneshot || wants mtail || wants replay; then
    echo "The benchmark log: \`genlog --lines $LINES --seed 42 --line-bytes 80\`, $(commas "$(stat -c %s "$BENCHLOG")") bytes."
  fi
  if wants mtail; then
    echo "Its first 100 MB: $(commas "$(wc -l <"$CUT")") lines, $(commas "$(stat -c %s "$CUT")") bytes."
  fi
  if wants replay; then
    echo "The sparse log: \`genlog --lines 1000000 --seed 42\`, $(commas "$(stat -c %s "$SPARSE")") bytes."
  fi
  if wants oneshot || wants mtail || wants replay; then
    echo "Times: median and min of $RUNS interleaved pairs on one core; ratio: the median of the pairs' ratios."
  fi
}

table() {
  header
  echo
  echo "| what | command | figure | ratio | target |"
  echo "|---|---|---|---|---|"
  cat "$WORK/rows.md"
}

# write_into PAGE: the table replaces what stands between the page's two markers.
write_into() {
  local page=$1 begin='<!-- benches/table.sh: begin -->' end='<!-- benches/table.sh: end -->'
  grep -qF "$begin" "$page" && grep -qF "$end" "$page" || fail "$page has no $begin ... $end markers"
  awk -v begin="$begin" -v end="$end" -v table="$WORK/table.md" '
    $0 == end { skip = 0 }
    !skip { print }
    $0 == begin { while ((getline line < table) > 0) print line; skip = 1 }' "$page" >"$page.tmp"
  mv "$page.tmp" "$page"
  say "wrote the table into $page"
}

main() {
  prepare
  for part in ${ALL//,/ }; do
    if wants "$part"; then "measure_$part"; fi
  done
  table >"$WORK/table.md"
  cat "$WORK/table.md"
  if [ "$WRITE" = 1 ]; then write_into BENCHMARKS.md; fi
}

main
