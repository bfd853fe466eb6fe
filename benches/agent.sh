# A live agent, driven and read from outside: started on 127.0.0.1:$PORT, read through
# /proc/PID (CPU ticks, resident and peak memory) and /metrics, stopped. Sourced by
# benches/live.sh and benches/table.sh, which set LLMTAIL (the binary) and PORT.

HZ=$(getconf CLK_TCK)
AGENT=

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hwm_kb() { awk '/VmHWM/ { print $2 }' "/proc/$1/status"; }
rss_kb() { awk '/VmRSS/ { print $2 }' "/proc/$1/status"; }

wait_up() {
  for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$PORT/metrics" >/dev/null && return 0
    sleep 0.1
  done
  echo "llmtail did not come up on 127.0.0.1:$PORT" >&2
  return 1
}

# agent_start ERR_FILE ARGS...: the agent in the background (pinned with $PIN when set, e.g.
# "taskset -c 1"), answering /metrics; its pid in $AGENT.
agent_start() {
  local err=$1
  shift
  # shellcheck disable=SC2086 # PIN is a command and its arguments
  ${PIN:-} "$LLMTAIL" "$@" --web.listen-address "127.0.0.1:$PORT" 2>"$err" &
  AGENT=$!
  wait_up
}

agent_stop() {
  if [ -n "$AGENT" ]; then
    kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null || true
  fi
  AGENT=
}

# metric_sum NAME: the sum of a series' values over all its label sets in one scrape.
metric_sum() {
  curl -s "http://127.0.0.1:$PORT/metrics" | awk -v name="$1" '
    index($0, name "{") == 1 || index($0, name " ") == 1 { sum += $NF } END { print sum + 0 }'
}

# scrape_times N: N scrapes of /metrics, one connection each; prints "bytes min_ms median_ms
# p99_ms max_ms" (bytes of the last body: the agent's own counters move it by a few bytes).
scrape_times() {
  local n=$1
  for _ in $(seq "$n"); do
    curl -sf -o /dev/null -w '%{size_download} %{time_total}\n' "http://127.0.0.1:$PORT/metrics"
  done | sort -k2 -g | awk '
    $1 == 0 { empty++ } { bytes = $1; t[NR] = $2 * 1000 }
    END {
      if (empty || NR == 0) { print "a scrape came back empty" > "/dev/stderr"; exit 1 }
      m = NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
      p = int(NR * 0.99) > 0 ? int(NR * 0.99) : 1
      printf "%d %.2f %.2f %.2f %.2f\n", bytes, t[1], m, t[p], t[NR]
    }'
}
