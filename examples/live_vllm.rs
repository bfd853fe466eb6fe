//! Writes a live vLLM log to stdout, for trying llmtail without a GPU: the engine's start-up
//! line, then every 10 s (vLLM's default stats interval) a V1 `loggers.py` stats line stamped
//! with this host's local time, with a few request lines between. The load rises and falls over
//! about ten minutes, so the landing page's charts show a shape within minutes.
//!
//! ```sh
//! cargo run --release --example live_vllm >> /tmp/vllm.log &
//! cargo run --release -- --log /tmp/vllm.log    # then open http://localhost:3913/
//! ```
//!
//! The lines are vLLM 0.14's own (the same shapes as fixtures/replay/vllm-0.14.1-*.log); only
//! the numbers are made up. Stops when its output is closed or it is killed.

use std::io::{self, Write};
use std::time::Duration;

/// vLLM's default `--log-stats` interval.
const STATS_INTERVAL: Duration = Duration::from_secs(10);
/// One rise and fall of the load.
const LOAD_PERIOD_SECONDS: f64 = 600.0;

/// vLLM's own stamp: local time, no zone, no year (`11-22 13:25:01`).
fn stamp() -> String {
    jiff::ZonedDateTime::now()
        .strftime("%m-%d %H:%M:%S")
        .to_string()
}

/// The engine's gauges at `t` seconds since start: a load between 0 and 1 drives them all.
fn stats_line(t: f64) -> String {
    let load = 0.5 - 0.5 * (t * std::f64::consts::TAU / LOAD_PERIOD_SECONDS).cos();
    let running = (load * 48.0).round();
    let waiting = ((load - 0.7).max(0.0) * 40.0).round();
    let kv_usage = 3.0 + load * 90.0;
    let generation = running * 24.5;
    let prompt = if running > 0.0 {
        180.0 + load * 900.0
    } else {
        0.0
    };
    format!(
        "(APIServer pid=1) INFO {} [loggers.py:257] Engine 000: Avg prompt throughput: {prompt:.1} \
         tokens/s, Avg generation throughput: {generation:.1} tokens/s, Running: {running} reqs, \
         Waiting: {waiting} reqs, GPU KV cache usage: {kv_usage:.1}%, Prefix cache hit rate: 41.7%",
        stamp()
    )
}

fn write_line(out: &mut impl Write, line: &str) -> io::Result<()> {
    writeln!(out, "{line}")?;
    out.flush()
}

fn main() {
    let mut out = io::stdout().lock();
    let start = std::time::Instant::now();
    let head = format!(
        "(EngineCore_DP0 pid=276) INFO {} [core.py:97] Initializing a V1 LLM engine (v0.14.1) \
         with config: model='Qwen/Qwen3-8B', served_model_name=qwen3-8b, max_seq_len=32768",
        stamp()
    );
    let mut result = write_line(&mut out, &head);
    while result.is_ok() {
        std::thread::sleep(STATS_INTERVAL / 2);
        let access = "(APIServer pid=1) INFO:     10.0.0.7:51234 - \
                      \"POST /v1/chat/completions HTTP/1.1\" 200 OK";
        result = write_line(&mut out, access);
        std::thread::sleep(STATS_INTERVAL / 2);
        result =
            result.and_then(|()| write_line(&mut out, &stats_line(start.elapsed().as_secs_f64())));
    }
}
