#!/usr/bin/env python3
"""Memory and CPU of the agent following pod logs as the DaemonSet does (deploy/kubernetes/).

Lays out PODS pod logs as kubelet does (<tmp>/var/log/pods/<ns>_<pod>_<uid>/vllm/0.log,
CRI-wrapped), each with a vLLM start-up line and HISTORY lines already written, starts the
agent with the DaemonSet's flags (--log '<tmp>/var/log/pods/*/*/*.log' --path-labels
kubernetes --state-file ...), then for SECONDS appends RATE request lines per pod per second
and one stats line per pod every 10 s (vLLM's default interval), scraping /metrics every
second. Prints the agent's CPU (utime+stime from /proc/PID/stat) and memory (VmRSS at the
end, VmHWM: the peak) and the series count. The figures in BENCHMARKS.md ("Kubernetes
DaemonSet") and the DaemonSet's resources come from it.

    cargo build --release && python3 benches/pod_logs.py     # PODS=50 RATE=20 DURATION=60
"""

import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid

PODS = int(os.environ.get("PODS", "50"))
RATE = int(os.environ.get("RATE", "20"))
SECONDS = int(os.environ.get("DURATION", "60"))
HISTORY = int(os.environ.get("HISTORY", "2000"))
BINARY = os.environ.get("LLMTAIL", "target/release/llmtail")
PORT = os.environ.get("PORT", "39131")


def cri(line):
    now = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + ".%09dZ" % int(now % 1 * 1e9)
    return f"{stamp} stdout F {line}\n"


def vllm_time():
    return time.strftime("%m-%d %H:%M:%S", time.gmtime())


def stats(running):
    return (f"(APIServer pid=1) INFO {vllm_time()} [loggers.py:257] Engine 000: Avg prompt "
            f"throughput: 1245.3 tokens/s, Avg generation throughput: 312.8 tokens/s, Running: "
            f"{running} reqs, Waiting: 2 reqs, GPU KV cache usage: 63.1%, Prefix cache hit rate: 41.7%")


def request(n):
    return (f"(APIServer pid=1) INFO:     10.0.{n % 250}.7:51234 - \"POST /v1/chat/completions "
            f"HTTP/1.1\" 200 OK")


def startup(pod):
    return (f"(EngineCore_DP0 pid=1) INFO {vllm_time()} [core.py:93] Initializing a V1 LLM engine "
            f"(v0.14.0) with config: model='/models/qwen3-8b', served_model_name=model-{pod}")


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def status(pid, key):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])  # kB
    return 0


def lines_read(metrics):
    return sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
               if line.startswith("llmtail_lines_read_total{"))


def scrape():
    with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/metrics", timeout=5) as r:
        return r.read().decode()


def main():
    root = tempfile.mkdtemp(prefix="llmtail-pods-")
    logs = []
    for pod in range(PODS):
        d = os.path.join(root, f"var/log/pods/ns{pod % 5}_vllm-{pod}_{uuid.uuid4()}/vllm")
        os.makedirs(d)
        path = os.path.join(d, "0.log")
        with open(path, "w") as f:
            f.write(cri(startup(pod)))
            for n in range(HISTORY):
                f.write(cri(stats(n % 30) if n % (RATE * 10) == 0 else request(n)))
        logs.append(open(path, "a"))
    state = os.path.join(root, "state")
    os.makedirs(state)
    agent = subprocess.Popen([
        BINARY, "--log", os.path.join(root, "var/log/pods/*/*/*.log"), "--path-labels",
        "kubernetes", "--label", "node=bench", "--state-file", os.path.join(state, "state.json"),
        "--web.listen-address", f"127.0.0.1:{PORT}"], stderr=subprocess.DEVNULL)
    try:
        launched = time.monotonic()
        for _ in range(3000):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{PORT}/-/ready", timeout=1)
                break
            except OSError:
                time.sleep(0.01)
        ready_after = time.monotonic() - launched
        catch_up_cpu = cpu_seconds(agent.pid)
        start_cpu, start = catch_up_cpu, time.monotonic()
        written = PODS * (1 + HISTORY)
        catch_up_hwm = status(agent.pid, "VmHWM")
        series = 0
        for second in range(SECONDS):
            tick = time.monotonic()
            for pod, log in enumerate(logs):
                lines = [request(second * RATE + i) for i in range(RATE)]
                if second % 10 == pod % 10:
                    lines.append(stats(second % 30))
                log.write("".join(cri(line) for line in lines))
                log.flush()
                written += len(lines)
            series = sum(1 for line in scrape().splitlines() if line and line[0] != "#")
            time.sleep(max(0.0, 1.0 - (time.monotonic() - tick)))
        cpu = cpu_seconds(agent.pid) - start_cpu
        elapsed = time.monotonic() - start
        # The answer checked: every line written was read.
        for _ in range(500):
            if lines_read(scrape()) == written:
                break
            time.sleep(0.01)
        read = lines_read(scrape())
        assert read == written, f"read {read:.0f} lines of {written}"
        print(f"pods {PODS}, {RATE} request lines/pod/s + 1 stats line/pod/10 s "
              f"({PODS * RATE + PODS / 10:.0f} lines/s), {HISTORY} lines/pod read at start, "
              f"{SECONDS} s, scraped every second")
        print(f"start-up: ready after {ready_after:.2f} s, {catch_up_cpu:.2f} s CPU; "
              f"lines read: {read:.0f} of {written} written")
        print(f"CPU: {cpu:.2f} s in {elapsed:.1f} s = {100 * cpu / elapsed:.2f}% of a core")
        print(f"memory: VmRSS {status(agent.pid, 'VmRSS') / 1024:.1f} MiB at the end, VmHWM "
              f"{status(agent.pid, 'VmHWM') / 1024:.1f} MiB peak "
              f"({catch_up_hwm / 1024:.1f} MiB after reading the history)")
        print(f"series in /metrics: {series}")
    finally:
        agent.terminate()
        agent.wait()
        for log in logs:
            log.close()
        subprocess.run(["rm", "-rf", root])


if __name__ == "__main__":
    sys.exit(main())
