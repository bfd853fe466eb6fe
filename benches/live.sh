#!/usr/bin/env bash
# The live agent, measured from outside: idle CPU and memory following 100 quiet files,
# append-to-/metrics latency at 10k lines/s, and 200 scrapers at once. A scrape of 10k series
# and 1,000 followed files are rows of benches/table.sh.
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
# shellcheck source=benches/agent.sh
. benches/agent.sh
PID=
stop() { AGENT=$PID agent_stop; PID=; }
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

# 3. 200 scrapers at once, each scraping in a loop, while the agent ingests as fast as it can
#    (a generated log appended again and again) with ~10k series: how long a scrape waits on
#    ingestion and on the other scrapes. SCRAPERS (200) and LOAD_SECONDS.
SCRAPERS=${SCRAPERS:-200}
cargo build --release --quiet --example scrapers
SCRAPE=$TARGET/release/examples/scrapers
"$GENLOG" --lines 20000 --engines 1100 --seed 3 >"$WORK/busy.log"
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
