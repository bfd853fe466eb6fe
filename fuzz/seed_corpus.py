#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora, fuzz/corpus/<target>/, from real lines.

The lines are the line cases (fixtures/cases/*.toml, each with its source) and the replay logs
(fixtures/replay/*.log). A replay line is kept once per shape (its digits folded), so a log's
hundred stats lines with changing values give one seed, not a hundred. Envelope seeds are
windows of consecutive replay lines, wrapped as each envelope writes them (Docker json-file
and CRI with one long line split into parts, journald short/short-iso/syslog, JSON logging,
vLLM's ANSI colours). File names are the content's SHA-1, as libFuzzer names its own finds.

Run from anywhere: `python3 fuzz/seed_corpus.py`. It replaces the seed directories whole, so
what a fuzzing run added there goes (runs should write their finds elsewhere: see CONTRIBUTING.md).
Needs Python 3.11+ (tomllib), nothing else.
"""

import glob
import hashlib
import json
import os
import re
import shutil
import tomllib

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
WINDOW = 8  # lines per envelope seed
BASE = (2026, 11, 22, 13, 25, 1)  # envelope time of a seed's first line


def case_lines():
    """(case file name, line) for every line case."""
    for path in sorted(glob.glob(os.path.join(ROOT, "fixtures/cases/*.toml"))):
        with open(path, "rb") as f:
            for case in tomllib.load(f)["case"]:
                yield os.path.basename(path), case["line"]


def replay_logs():
    """(log file name, its lines) for every replay log."""
    for path in sorted(glob.glob(os.path.join(ROOT, "fixtures/replay/*.log"))):
        with open(path, encoding="utf-8", newline="") as f:
            lines = [l for l in f.read().split("\n") if l]
        yield os.path.basename(path), lines


def one_per_shape(lines):
    seen, kept = set(), []
    for line in lines:
        shape = re.sub(r"[0-9]+", "0", line)
        if shape not in seen:
            seen.add(shape)
            kept.append(line)
    return kept


def write(target, seeds):
    out = os.path.join(CORPUS, target)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    names = set()
    for seed in seeds:
        data = seed.encode("utf-8") if isinstance(seed, str) else seed
        name = hashlib.sha1(data).hexdigest()
        if name not in names:
            names.add(name)
            with open(os.path.join(out, name), "wb") as f:
                f.write(data)
    return len(names)


def windows(lines):
    """The log's first lines, and the lines around its first stats line."""
    starts = {0}
    for i, line in enumerate(lines):
        if "throughput: " in line or "Active Request Count" in line or "iter = " in line:
            starts.add(max(0, i - WINDOW // 2))
            break
    return [lines[s : s + WINDOW] for s in sorted(starts)]


def stamp(i, sep="T", zone="Z", frac=".123456789"):
    y, mo, d, h, mi, s = BASE
    s += i
    return f"{y:04}-{mo:02}-{d:02}{sep}{h:02}:{mi:02}:{s:02}{frac}{zone}"


def docker(window):
    out = []
    for i, line in enumerate(window):
        def record(log):
            return json.dumps({"log": log, "stream": "stderr", "time": stamp(i)}, separators=(",", ":"))
        if i == 1 and len(line) > 40:  # Docker splits a long line: only its last part ends in \n
            out += [record(line[:40]), record(line[40:] + "\n")]
        else:
            out.append(record(line + "\n"))
    return "\n".join(out)


def cri(window):
    out = []
    for i, line in enumerate(window):
        if i == 1 and len(line) > 40:
            out += [f"{stamp(i)} stderr P {line[:40]}", f"{stamp(i)} stderr F {line[40:]}"]
        else:
            out.append(f"{stamp(i)} {'stdout' if i % 2 else 'stderr'} F {line}")
    return "\n".join(out)


def journald(window):
    out = []
    for i, line in enumerate(window):
        short = f"Nov 22 13:25:{i:02} gpu-node-3 vllm[812]: {line}"
        forms = [short, f"{stamp(i, zone='+0000', frac='')} gpu-node-3 vllm[812]: {line}", f"<14>{short}"]
        out.append(forms[i % 3])
    return "\n".join(out)


def json_logging(window):
    out = []
    for i, line in enumerate(window):
        asctime = stamp(i, sep=" ", zone="", frac=",376")
        record = {"asctime": asctime, "name": "vllm", "levelname": "INFO", "message": line}
        out.append(json.dumps(record))
    return "\n".join(out)


def coloured(line):
    """vLLM 0.33's colours: process prefix, level, date and file field."""
    line = re.sub(r"^(\([^)]*pid=\d+\))", "\x1b[1;36m\\1\x1b[0;0m", line)
    line = re.sub(r"(INFO|WARNING|DEBUG|ERROR) (\d\d-\d\d \d\d:\d\d:\d\d) (\[[^\]]+\])",
                  "\x1b[32m\\1\x1b[0m \x1b[90m\\2\x1b[0m \x1b[90m\\3\x1b[0m", line)
    return line


NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?|nan%?|inf")
CLOCKS = [
    re.compile(r"(?<=[IWEF])\d{4} \d\d:\d\d:\d\d\.\d+ \d+"),  # Triton glog, after the level
    re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ [IWEF]"),  # Triton ISO8601
    re.compile(r"\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d\]"),  # TRT-LLM Python logger
    re.compile(r"\d\d-\d\d-\d{4} \d\d:\d\d:\d\d(?:\.\d+)?"),  # month first
    re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?"),  # year first
    re.compile(r"(?:DEBUG|INFO|WARNING|ERROR) \d\d-\d\d \d\d:\d\d:\d\d \[?[\w/.]+:\d+\] "),  # vLLM head
]


def main():
    cases = list(case_lines())
    logs = list(replay_logs())
    vllm_cases = [l for f, l in cases if f.startswith("vllm-")]
    trtllm_cases = [l for f, l in cases if f.startswith("trtllm-")]
    lmdeploy_cases = [l for f, l in cases if f.startswith("lmdeploy-")]
    ollama_cases = [l for f, l in cases if f.startswith("ollama-")]
    llamacpp_cases = [l for f, l in cases if f.startswith("llamacpp-")]
    other_cases = [l for f, l in cases if not f.startswith(("vllm-", "trtllm-", "lmdeploy-"))]
    vllm_replay = one_per_shape(l for f, ls in logs if f.startswith("vllm-") for l in ls)
    trtllm_replay = one_per_shape(l for f, ls in logs if f.startswith("trtllm-") for l in ls)
    lmdeploy_replay = one_per_shape(l for f, ls in logs if f.startswith("lmdeploy-") for l in ls)
    ollama_replay = one_per_shape(l for f, ls in logs if f.startswith("ollama-") for l in ls)
    llamacpp_replay = one_per_shape(l for f, ls in logs if f.startswith("llamacpp-") for l in ls)
    every_line = (
        [l for _, l in cases]
        + vllm_replay
        + trtllm_replay
        + lmdeploy_replay
        + ollama_replay
        + llamacpp_replay
    )

    counts = {}
    counts["grammar_read"] = write("grammar_read", every_line)
    counts["grammar_each_engine"] = write("grammar_each_engine", every_line)
    counts["grammar_vllm"] = write("grammar_vllm", vllm_cases + other_cases + vllm_replay)
    counts["grammar_trtllm"] = write("grammar_trtllm", trtllm_cases + other_cases + trtllm_replay)
    counts["grammar_lmdeploy"] = write("grammar_lmdeploy", lmdeploy_cases + other_cases + lmdeploy_replay)
    not_ollama = [l for f, l in cases if not f.startswith(("vllm-", "trtllm-", "ollama-"))]
    counts["grammar_ollama"] = write("grammar_ollama", ollama_cases + not_ollama + ollama_replay)
    not_llamacpp = [l for f, l in cases if not f.startswith(("vllm-", "trtllm-", "llamacpp-"))]
    counts["grammar_llamacpp"] = write(
        "grammar_llamacpp", llamacpp_cases + not_llamacpp + llamacpp_replay
    )
    # The JSON objects as they stand in the lines: from the first `{`, `"{` or `[{` on.
    objects = []
    for line in trtllm_cases + trtllm_replay:
        m = re.search(r'\[\{|"\{|\{', line)
        if m:
            objects.append(line[m.start() :].rstrip())
    counts["grammar_trtllm_json"] = write("grammar_trtllm_json", objects)
    # Numbers and clocks with what follows them, one per shape.
    numbers = one_per_shape(m.group() + line[m.end() : m.end() + 2] for line in every_line for m in NUMBER.finditer(line))
    counts["grammar_numbers"] = write("grammar_numbers", numbers)
    clocks = one_per_shape(m.group() for line in every_line for c in CLOCKS for m in c.finditer(line))
    counts["grammar_clocks"] = write("grammar_clocks", clocks)

    wins = [w for _, lines in logs for w in windows(lines)]
    counts["envelope_plain"] = write("envelope_plain", ["\n".join(w) for w in wins])
    counts["envelope_docker"] = write("envelope_docker", [docker(w) for w in wins])
    counts["envelope_cri"] = write("envelope_cri", [cri(w) for w in wins])
    counts["envelope_journald"] = write("envelope_journald", [journald(w) for w in wins])
    counts["envelope_json"] = write("envelope_json", [json_logging(w) for w in wins])
    ansi = one_per_shape(coloured(l) for w in wins for l in w if coloured(l) != l)
    counts["envelope_ansi"] = write("envelope_ansi", ansi)
    # Detection sees whole file starts: each envelope's, plain ones (the KServe-mixed log starts
    # with lines that look like journald), and a Docker log with plain lines mixed in.
    starts = [lines[:22] for _, lines in logs]
    detect = ["\n".join(s) for s in starts]
    for wrap in (docker, cri, journald, json_logging):
        detect += [wrap(s) for s in starts[::4]]
    mixed = docker(starts[0]).split("\n")
    mixed[3:3] = starts[1][:3]
    detect.append("\n".join(mixed))
    counts["envelope_detect"] = write("envelope_detect", detect)

    for target, n in counts.items():
        print(f"{target}: {n} seeds")


if __name__ == "__main__":
    main()
