#!/usr/bin/env python3
"""What rate() and increase() show over a counter that moves in 10 s steps.

vLLM prints a stats line every 10 s, so llmtail's token counters grow by one interval's tokens
at each line and stand still in between. This builds such a counter (100 tokens/s, a line every
10 s at a phase of 3 s), samples it as a Prometheus scraping every 15 s would, writes it into a
TSDB with promtool, starts a Prometheus on 127.0.0.1 over it and asks rate() and increase()
over several windows at every second of an hour. It prints, per window, the lowest, mean and
highest answer against the truth. Needs Debian's prometheus package (prometheus, promtool).

    python3 docs/measure-rate.py [SCRAPE_INTERVAL_SECONDS [LINE_INTERVAL_SECONDS]]   # 15, 10
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

RATE = 100.0  # tokens per second
# vLLM's stats interval and its logging loop's lateness, s: 10.05 is a loop 50 ms late a tick.
LINE_EVERY = float(sys.argv[2]) if len(sys.argv) > 2 else 10
PHASE = 3  # when the lines come, against the scrapes, s
SCRAPE_EVERY = int(sys.argv[1]) if len(sys.argv) > 1 else 15  # Prometheus' scrape interval, s
START = 1_790_000_000  # a fixed time, so two runs agree
HOURS = 3
WINDOWS = ["30s", "1m", "2m", "5m", "10m"]


def counter_at(t):
    """The counter at time t: every line adds its interval's tokens."""
    lines = int((t - START - PHASE) // LINE_EVERY) + 1 if t - START >= PHASE else 0
    return lines * LINE_EVERY * RATE


def openmetrics():
    rows = ["# TYPE tokens counter"]
    for t in range(START, START + HOURS * 3600 + 1, SCRAPE_EVERY):
        rows.append(f"tokens_total {counter_at(t)} {t}")
    rows.append("# EOF")
    return "\n".join(rows) + "\n"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def query_range(port, expr, start, end):
    q = urllib.parse.urlencode({"query": expr, "start": start, "end": end, "step": 1})
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/query_range?{q}") as r:
        result = json.load(r)["data"]["result"]
    return [float(v) for _, v in result[0]["values"]]


def main():
    work = tempfile.mkdtemp(prefix="rate-steps.")
    om = os.path.join(work, "history.om")
    with open(om, "w") as f:
        f.write(openmetrics())
    data = os.path.join(work, "data")
    subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", om, data],
                   check=True, stdout=subprocess.DEVNULL)
    config = os.path.join(work, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global: {scrape_interval: 15s}\n")
    # The port is found free, then given to Prometheus: a race only with another program on
    # this machine, which a rerun settles; nothing here is a test.
    port = free_port()
    server = subprocess.Popen(
        ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={data}",
         "--storage.tsdb.retention.time=100y", f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/-/ready")
                break
            except OSError:
                time.sleep(0.1)
        # An hour in the middle, evaluated at every second (every phase against the scrapes).
        start, end = START + 3600, START + 7200
        print(f"counter: +{LINE_EVERY * RATE:g} every {LINE_EVERY:g} s ({RATE:.0f} tokens/s), "
              f"scraped every {SCRAPE_EVERY} s; prometheus {version()}")
        print("| query | truth | lowest | mean | highest | worst error |")
        print("|---|---|---|---|---|---|")
        for window in WINDOWS:
            seconds = {"s": 1, "m": 60}[window[-1]] * int(window[:-1])
            for fn, truth in (("rate", RATE), ("increase", RATE * seconds)):
                got = query_range(port, f"{fn}(tokens_total[{window}])", start, end)
                worst = max(abs(v - truth) for v in got) / truth
                print(f"| `{fn}(x[{window}])` | {truth:g} | {min(got):.1f} | "
                      f"{sum(got) / len(got):.1f} | {max(got):.1f} | {worst:.1%} |")
    finally:
        server.terminate()
        server.wait()


def version():
    out = subprocess.run(["prometheus", "--version"], capture_output=True, text=True)
    return (out.stdout or out.stderr).split()[2]


if __name__ == "__main__":
    sys.exit(main())
