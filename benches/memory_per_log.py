#!/usr/bin/env python3
"""Peak memory of the agent against the number of pod logs on a node, scraped only or pushing.

For each N in COUNTS, lays out N pod logs as kubelet does (<tmp>/var/log/pods/<ns>_<pod>_<uid>/
vllm/0.log, CRI-wrapped), each with a vLLM start-up line (its own model name) and STATS stats
lines, and starts the release binary with the DaemonSet's flags (deploy/kubernetes/). Scraped
only: /metrics is scraped every INTERVAL seconds. With push: the same, plus --remote-write.url
to a loopback receiver (an http.server that answers 204 to everything) and
--remote-write.interval INTERVAL. After /-/ready it runs ROUNDS intervals, then reads VmHWM (the
peak RSS) and VmRSS from /proc/PID/status. It checks its answer: the lines read are the lines
written, and with push every series was sent at least once and none dropped.

    cargo build --release && python3 benches/memory_per_log.py   # COUNTS=50,500,1000,5000
"""

import http.server
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid

COUNTS = [int(n) for n in os.environ.get("COUNTS", "50,500,1000,5000").split(",")]
STATS = int(os.environ.get("STATS", "5"))
INTERVAL = float(os.environ.get("INTERVAL", "2"))
ROUNDS = int(os.environ.get("ROUNDS", "5"))
BINARY = os.environ.get("LLMTAIL", "target/release/llmtail")
PORT = os.environ.get("PORT", "39137")


def cri(line):
    return f"2026-11-28T10:00:00.000000000Z stdout F {line}\n"


def stats(n):
    return (f"(APIServer pid=1) INFO 11-28 10:00:{n:02d} [loggers.py:257] Engine 000: Avg prompt "
            f"throughput: 1245.3 tokens/s, Avg generation throughput: 312.8 tokens/s, Running: "
            f"{n} reqs, Waiting: 2 reqs, GPU KV cache usage: 63.1%, Prefix cache hit rate: 41.7%")


def startup(pod):
    return (f"(EngineCore_DP0 pid=1) INFO 11-28 10:00:00 [core.py:93] Initializing a V1 LLM "
            f"engine (v0.14.0) with config: model='/models/qwen3-8b', "
            f"served_model_name=model-{pod}")


def lay_out(root, count):
    for pod in range(count):
        d = os.path.join(root, f"var/log/pods/ns{pod % 5}_vllm-{pod}_{uuid.uuid4()}/vllm")
        os.makedirs(d)
        with open(os.path.join(d, "0.log"), "w") as f:
            f.write(cri(startup(pod)) + "".join(cri(stats(n)) for n in range(STATS)))
    return count * (1 + STATS)


class Receiver(http.server.BaseHTTPRequestHandler):
    requests = 0

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        Receiver.requests += 1
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def status(pid, key):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024  # MiB
    return 0.0


def scrape():
    with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/metrics", timeout=30) as r:
        return r.read().decode()


def total(metrics, name):
    return sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
               if line.startswith(name + "{") or line.startswith(name + " "))


def run(count, push_url):
    root = tempfile.mkdtemp(prefix="h21b-globs-mem-")
    try:
        written = lay_out(root, count)
        args = [BINARY, "--log", os.path.join(root, "var/log/pods/*/*/*.log"), "--path-labels",
                "kubernetes", "--label", "node=bench", "--state-file",
                os.path.join(root, "state.json"), "--web.listen-address", f"127.0.0.1:{PORT}"]
        if push_url:
            args += ["--remote-write.url", push_url, "--remote-write.interval", f"{INTERVAL}s"]
        agent = subprocess.Popen(args, stderr=subprocess.DEVNULL)
        try:
            launched = time.monotonic()
            while time.monotonic() - launched < 120:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{PORT}/-/ready", timeout=1)
                    break
                except OSError:
                    time.sleep(0.05)
            ready_after = time.monotonic() - launched
            for _ in range(ROUNDS):
                time.sleep(INTERVAL)
                metrics = scrape()
            series = sum(1 for line in metrics.splitlines() if line and line[0] != "#")
            read = total(metrics, "llmtail_lines_read_total")
            assert read == written, f"N={count}: read {read:.0f} lines of {written}"
            sent = total(metrics, "llmtail_remote_write_samples_sent_total")
            dropped = total(metrics, "llmtail_remote_write_samples_dropped_total")
            if push_url:
                assert sent >= series * 0.9, f"N={count}: sent {sent:.0f} of {series} series"
                assert dropped == 0, f"N={count}: {dropped:.0f} samples dropped"
            return (ready_after, series, sent, status(agent.pid, "VmHWM"),
                    status(agent.pid, "VmRSS"))
        finally:
            agent.terminate()
            agent.wait()
    finally:
        subprocess.run(["rm", "-rf", root])


def main():
    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{receiver.server_address[1]}/api/v1/write"
    print(f"{STATS} stats lines per log, {ROUNDS} rounds of {INTERVAL} s after ready "
          f"(a scrape each; with push, a push each)")
    print("| logs | series | scraped only: VmHWM peak (VmRSS end) | with push: VmHWM peak "
          "(VmRSS end) | samples pushed |")
    print("|---|---|---|---|---|")
    for count in COUNTS:
        _, series, _, hwm, rss = run(count, None)
        _, _, sent, push_hwm, push_rss = run(count, url)
        print(f"| {count:,} | {series:,} | {hwm:.1f} MiB ({rss:.1f}) | {push_hwm:.1f} MiB "
              f"({push_rss:.1f}) | {sent:,.0f} |", flush=True)
    receiver.shutdown()


if __name__ == "__main__":
    sys.exit(main())
