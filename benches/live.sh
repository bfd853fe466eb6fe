#!/usr/bin/env bash
# The live agent, measured from outside: idle CPU and memory following 100 quiet files,
# append-to-/metrics latency at 10k lines/s, and /metrics with about 10k series.
#
#   bash benches/live.sh                  # about 2 minutes
#   IDLE_SECONDS=10 LOAD_SECONDS=5 bash benches/live.sh
#
# Needs python3 (the load writer and scraper) and binds 127.0.0.1 only. Every loop is
# bounded in count and time; files go under target/bench/live.
set -euo pipefail

IDLE_SECONDS=${IDLE_SECONDS:-60}
LOAD_SECONDS=${LOAD_SECONDS:-20}
PORT=${PORT:-39131}
cd "$(dirname "$0")/.."
ROOT=$PWD
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
WORK=$ROOT/target/bench/live
rm -rf "$WORK"
mkdir -p "$WORK/quiet"
cargo build --release --quiet --bin llmtail --example genlog
LLMTAIL=$TARGET/release/llmtail
GENLOG=$TARGET/release/examples/genlog
HZ=$(getconf CLK_TCK)

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hwm_kb() { awk '/VmHWM/ { print $2 }' "/proc/$1/status"; }
rss_kb() { awk '/VmRSS/ { print $2 }' "/proc/$1/status"; }
wait_up() {
  for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$PORT/metrics" >/dev/null && return 0
    sleep 0.1
  done
  echo "llmtail did not come up" >&2
  return 1
}
PID=
stop() { [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true; PID=; }
trap stop EXIT

# 1. Idle: 100 quiet files (a few thousand lines each, read at start), then nothing.
for i in $(seq -w 1 100); do
  "$GENLOG" --lines 2000 --seed "$i" >"$WORK/quiet/vllm-$i.log"
done
"$LLMTAIL" --log "$WORK/quiet/*.log" --web.listen-address "127.0.0.1:$PORT" 2>"$WORK/idle.err" &
PID=$!
wait_up
sleep 2
t0=$(cpu_ticks $PID)
sleep "$IDLE_SECONDS"
t1=$(cpu_ticks $PID)
echo "idle: 100 files, ${IDLE_SECONDS} s: $((t1 - t0)) ticks of CPU ($(awk -v t=$((t1 - t0)) -v hz="$HZ" -v s="$IDLE_SECONDS" 'BEGIN { printf "%.3f%% of a core", 100 * t / hz / s }')), RSS $(rss_kb $PID) KB, peak RSS $(hwm_kb $PID) KB"
stop

# 2. Latency and scrape under load: one file taking 10k lines/s (the generator's mix), a stats
#    line with a fresh `Running:` value every 50 ms; a scraper polls /metrics as fast as it can
#    and notes when each value shows. Latency = seen - written (poll time included).
"$GENLOG" --lines 200000 --seed 7 >"$WORK/mix.log"
: >"$WORK/load.log"
"$LLMTAIL" --log "$WORK/load.log" --web.listen-address "127.0.0.1:$PORT" 2>"$WORK/load.err" &
PID=$!
wait_up
python3 - "$WORK/load.log" "$WORK/mix.log" "$PORT" "$LOAD_SECONDS" <<'EOF'
import sys, threading, time, urllib.request, re
log, mix, port, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
lines = open(mix, encoding="utf-8").read().splitlines(keepends=True)
lines = [l for l in lines if "loggers.py" not in l]
written, seen, scrapes = {}, {}, []
done = threading.Event()
def writer():
    start, n, k, i = time.monotonic(), 0, 0, 0
    with open(log, "a", encoding="utf-8") as f:
        while time.monotonic() - start < seconds:
            # 10k lines/s: 10 lines every millisecond, on schedule.
            due = start + n / 10000
            while time.monotonic() < due:
                time.sleep(0.0002)
            batch = lines[i % len(lines): i % len(lines) + 10]
            i += 10
            n += len(batch)
            if n % 500 < 10:
                k += 1
                # Stamped now: a stats line from long ago is an engine overdue, whose gauges
                # are not shown.
                stamp = time.strftime("%m-%d %H:%M:%S")
                batch.append(f"(APIServer pid=1) INFO {stamp} [loggers.py:257] Engine 000: "
                             "Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 1.0 tokens/s, "
                             f"Running: {k} reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%\n")
                n += 1
                f.write("".join(batch)); f.flush()
                written[k] = time.monotonic()
            else:
                f.write("".join(batch)); f.flush()
    time.sleep(0.5)
    done.set()
    print(f"load: {n} lines in {time.monotonic() - start:.1f} s ({n / (time.monotonic() - start):.0f} lines/s)")
pattern = re.compile(rb'vllm:num_requests_running\{engine="0"[^}]*\} ([0-9.]+)')
def scraper():
    last = 0
    while not done.is_set():
        t = time.monotonic()
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read()
        now = time.monotonic()
        scrapes.append(now - t)
        m = pattern.search(body)
        if m:
            k = int(float(m.group(1)))
            for j in range(last + 1, k + 1):
                seen.setdefault(j, now)
            last = max(last, k)
threads = [threading.Thread(target=writer), threading.Thread(target=scraper)]
[t.start() for t in threads]
[t.join() for t in threads]
lat = sorted((seen[k] - written[k]) * 1000 for k in written if k in seen)
def pct(v, p): return v[min(len(v) - 1, int(p / 100 * len(v)))]
print(f"latency append -> /metrics: {len(lat)}/{len(written)} values seen; p50 {pct(lat, 50):.1f} ms, p99 {pct(lat, 99):.1f} ms, max {lat[-1]:.1f} ms")
s = sorted(x * 1000 for x in scrapes)
print(f"scrape under load (few series): {len(s)} scrapes, p50 {pct(s, 50):.2f} ms, p99 {pct(s, 99):.2f} ms")
EOF
echo "load: llmtail CPU $(awk -v t="$(cpu_ticks $PID)" -v hz="$HZ" 'BEGIN { printf "%.2f s", t / hz }'), peak RSS $(hwm_kb $PID) KB"
stop

# 3. Scrape with ~10k series: 1100 engines' stats lines (10 series each), 50 scrapes.
"$GENLOG" --lines 20000 --engines 1100 --seed 3 >"$WORK/many.log"
"$LLMTAIL" --log "$WORK/many.log" --web.listen-address "127.0.0.1:$PORT" 2>"$WORK/many.err" &
PID=$!
wait_up
sleep 1
SERIES=$(curl -s "http://127.0.0.1:$PORT/metrics" | grep -vc '^#')
for _ in $(seq 50); do
  curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$PORT/metrics"
done | sort -g | awk -v series="$SERIES" '{ v[NR] = $1 * 1000 } END { printf "scrape: %d series, %d scrapes, p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", series, NR, v[int(NR / 2)], v[int(NR * 0.99)], v[NR] }'
echo "scrape: peak RSS $(hwm_kb $PID) KB, body $(curl -s "http://127.0.0.1:$PORT/metrics" | wc -c) bytes"
stop

# 4. 200 scrapers at once, each scraping in a loop, while the agent ingests as fast as it can
#    (a generated log appended again and again) with ~10k series: how long a scrape waits on
#    ingestion and on the other scrapes. SCRAPERS (200) and LOAD_SECONDS.
SCRAPERS=${SCRAPERS:-200}
cargo build --release --quiet --example scrapers
SCRAPE=$TARGET/release/examples/scrapers
cp "$WORK/many.log" "$WORK/busy.log"
"$LLMTAIL" --log "$WORK/busy.log" --web.listen-address "127.0.0.1:$PORT" 2>"$WORK/busy.err" &
PID=$!
wait_up
sleep 1
echo "scrapers: 1 alone, $(curl -s "http://127.0.0.1:$PORT/metrics" | grep -vc '^#') series: $("$SCRAPE" --port "$PORT" --scrapers 1 --seconds 3)"
echo "scrapers: $SCRAPERS at once, no ingestion: $("$SCRAPE" --port "$PORT" --scrapers "$SCRAPERS" --seconds "$LOAD_SECONDS")"
( end=$((SECONDS + LOAD_SECONDS + 2)); while [ $SECONDS -lt $end ]; do cat "$WORK/mix.log" >>"$WORK/busy.log"; done ) &
FEEDER=$!
sleep 1
before=$(cpu_ticks $PID)
echo "scrapers: $SCRAPERS at once, ingesting flat out: $("$SCRAPE" --port "$PORT" --scrapers "$SCRAPERS" --seconds "$LOAD_SECONDS")"
wait $FEEDER
LINES=$(curl -s "http://127.0.0.1:$PORT/metrics" | awk '/^llmtail_lines_read_total/ { print $2 }')
echo "scrapers: meanwhile llmtail read $LINES lines in all, $(awk -v t=$(( $(cpu_ticks $PID) - before )) -v hz="$HZ" 'BEGIN { printf "%.1f s of CPU", t / hz }'), peak RSS $(hwm_kb $PID) KB"
stop

# 5. Memory following 1,000 files (200 generated lines each, read at start, then quiet).
mkdir -p "$WORK/thousand"
for i in $(seq -w 1 1000); do
  head -n 200 "$WORK/mix.log" >"$WORK/thousand/vllm-$i.log"
done
"$LLMTAIL" --log "$WORK/thousand/*.log" --web.listen-address "127.0.0.1:$PORT" 2>"$WORK/thousand.err" &
PID=$!
wait_up
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$PORT/-/ready" >/dev/null && break
  sleep 0.1
done
sleep 2
t0=$(cpu_ticks $PID)
sleep 10
echo "1,000 files: RSS $(rss_kb $PID) KB, peak RSS $(hwm_kb $PID) KB, $(ls /proc/$PID/fd | wc -l) descriptors, $(( $(cpu_ticks $PID) - t0 )) ticks of CPU in 10 s idle, $(curl -s "http://127.0.0.1:$PORT/metrics" | grep -c '^llmtail_log_open{.*} 1') logs open"
stop
