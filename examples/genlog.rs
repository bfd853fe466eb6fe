//! Writes a synthetic vLLM log for the benchmarks: deterministic (a fixed seed gives the same
//! bytes on every machine), valid UTF-8 (Debian's mtail 3.0.0~rc50 stops reading a file at
//! the first invalid byte), and shaped like a busy V1 API server with request logging on.
//!
//! ```sh
//! cargo run --release --example genlog -- --lines 10000000 > /tmp/vllm.log
//! ```
//!
//! One line in ten is a `loggers.py` stats line (`--engines` engines in turn); the other nine
//! are uvicorn access lines, `Added request` lines, `Received request` lines that carry the
//! whole prompt (200 B to 20 KB, log-uniform; one in fifty mentions `Running: ` in its text,
//! a near miss for the anchor prefilter), warnings, and now and then a startup line.
//! With `--line-bytes N` every non-stats line is padded or cut to N bytes instead (the
//! line-length sweep). `--expect FILE` writes each engine's last gauge values, as
//! `engine running waiting kv_usage_pct prefix_hit_pct prompt_tps gen_tps`.

use std::io::{self, BufWriter, Write};

/// splitmix64: tiny, seedable, and the same everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A float in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

struct Args {
    lines: u64,
    seed: u64,
    engines: u32,
    line_bytes: Option<usize>,
    expect: Option<String>,
}

fn args() -> Args {
    let mut args = Args {
        lines: 1_000_000,
        seed: 42,
        engines: 2,
        line_bytes: None,
        expect: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| usage(&flag));
        let number = |value: &str| -> u64 { value.parse().unwrap_or_else(|_| usage(&flag)) };
        match flag.as_str() {
            "--lines" => args.lines = number(&value),
            "--seed" => args.seed = number(&value),
            "--engines" => args.engines = number(&value).clamp(1, 10_000) as u32,
            "--line-bytes" => args.line_bytes = Some(number(&value) as usize),
            "--expect" => args.expect = Some(value),
            _ => usage(&flag),
        }
    }
    args
}

fn usage(flag: &str) -> ! {
    eprintln!(
        "genlog: bad or incomplete flag `{flag}`\n\
         usage: genlog [--lines N] [--seed S] [--engines K] [--line-bytes N] [--expect FILE] > FILE"
    );
    std::process::exit(2);
}

/// `MM-DD HH:MM:SS` for seconds since 2026-01-01T00:00:00 (a non-leap year; wraps yearly).
fn stamp(seconds: u64) -> String {
    const DAYS: [u64; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let mut day = (seconds / 86_400) % 365;
    let mut month = 0;
    while day >= DAYS[month] {
        day -= DAYS[month];
        month += 1;
    }
    let s = seconds % 86_400;
    format!(
        "{:02}-{:02} {:02}:{:02}:{:02}",
        month + 1,
        day + 1,
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// Prompt text: words (some of them not ASCII) until `len` bytes.
fn prompt(rng: &mut Rng, len: usize, near_miss: bool, out: &mut String) {
    const WORDS: &[&str] = &[
        "the",
        "model",
        "answer",
        "please",
        "summarize",
        "following",
        "document",
        "about",
        "inference",
        "latency",
        "café",
        "naïve",
        "résumé",
        "数据",
        "模型",
        "Привет",
        "token",
        "context",
        "window",
        "and",
        "of",
        "to",
        "in",
        "a",
        "with",
        "for",
        "function",
        "return",
        "value",
        "error",
        "stack",
        "trace",
        "kernel",
        "batch",
        "user:",
        "assistant:",
        "\\n",
    ];
    if near_miss {
        // A user pasting a log into a prompt: the anchor is there, the stats line is not.
        out.push_str("why does my server print Running: 3 reqs and then stop? ");
    }
    while out.len() < len {
        out.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
        out.push(' ');
    }
    // Cut on a character boundary: the file stays valid UTF-8.
    let mut cut = len.min(out.len());
    while !out.is_char_boundary(cut) {
        cut -= 1;
    }
    out.truncate(cut);
}

#[derive(Clone, Copy, Default)]
struct Gauges {
    running: u32,
    waiting: u32,
    kv_tenths: u32,
    prefix_tenths: u32,
    prompt_tenths: u32,
    gen_tenths: u32,
}

fn main() -> io::Result<()> {
    let args = args();
    let mut rng = Rng(args.seed);
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 20, stdout.lock());
    let mut last = vec![Gauges::default(); args.engines as usize];
    let mut line = String::with_capacity(1 << 16);
    let mut text = String::with_capacity(1 << 16);
    let mut request = 0u64;
    // Virtual time: each engine prints every 10 s, lines in between are spread evenly.
    let per_line_ms = 10_000 / (10 * u64::from(args.engines));
    let mut stats_seen = 0u64;

    for i in 0..args.lines {
        let now = stamp(i * per_line_ms / 1000);
        line.clear();
        if i % 10 == 9 {
            let engine = (stats_seen % u64::from(args.engines)) as usize;
            stats_seen += 1;
            let g = Gauges {
                running: rng.below(256) as u32,
                waiting: rng.below(64) as u32,
                kv_tenths: rng.below(1001) as u32,
                prefix_tenths: rng.below(1001) as u32,
                prompt_tenths: rng.below(50_000) as u32,
                gen_tenths: rng.below(20_000) as u32,
            };
            last[engine] = g;
            line.push_str(&format!(
                "(APIServer pid=812) INFO {now} [loggers.py:257] Engine {engine:03}: \
                 Avg prompt throughput: {}.{} tokens/s, Avg generation throughput: {}.{} tokens/s, \
                 Running: {} reqs, Waiting: {} reqs, GPU KV cache usage: {}.{}%, \
                 Prefix cache hit rate: {}.{}%",
                g.prompt_tenths / 10,
                g.prompt_tenths % 10,
                g.gen_tenths / 10,
                g.gen_tenths % 10,
                g.running,
                g.waiting,
                g.kv_tenths / 10,
                g.kv_tenths % 10,
                g.prefix_tenths / 10,
                g.prefix_tenths % 10,
            ));
        } else {
            let kind = rng.below(1000);
            let id = format!("chatcmpl-{:016x}", rng.next());
            match kind {
                // uvicorn access lines: the bulk of a busy server's log.
                0..=599 => {
                    let status = if rng.below(50) == 0 {
                        "400 Bad Request"
                    } else {
                        "200 OK"
                    };
                    line.push_str(&format!(
                        "(APIServer pid=812) INFO:     10.12.{}.{}:{} - \"POST /v1/chat/completions HTTP/1.1\" {status}",
                        rng.below(256),
                        rng.below(256),
                        30_000 + rng.below(30_000)
                    ));
                }
                600..=869 => line.push_str(&format!(
                    "(APIServer pid=812) INFO {now} [async_llm.py:270] Added request {id}."
                )),
                870..=879 => line.push_str(&format!(
                    "(APIServer pid=812) INFO {now} [async_llm.py:428] Aborted request {id}."
                )),
                880..=884 => {
                    request += 1;
                    // 200 B to 20 KB, log-uniform.
                    let len = (200.0 * 100f64.powf(rng.unit())) as usize;
                    text.clear();
                    prompt(&mut rng, len, request.is_multiple_of(50), &mut text);
                    let tokens: Vec<String> = (0..len / 40)
                        .map(|_| rng.below(152_000).to_string())
                        .collect();
                    line.push_str(&format!(
                        "(APIServer pid=812) INFO {now} [logger.py:41] Received request {id}: \
                         prompt: '<|im_start|>user\\n{text}<|im_end|>\\n<|im_start|>assistant\\n', \
                         params: SamplingParams(n=1, presence_penalty=0.0, frequency_penalty=0.0, \
                         repetition_penalty=1.0, temperature=0.7, top_p=0.8, top_k=20, min_p=0.0, \
                         seed=None, stop=[], max_tokens={}, min_tokens=0), \
                         prompt_token_ids: [{}], prompt_embeds shape: None, lora_request: None.",
                        rng.below(4096) + 1,
                        tokens.join(", ")
                    ));
                }
                885..=979 => line.push_str(&format!(
                    "(APIServer pid=812) WARNING {now} [protocol.py:58] The following fields were \
                     present in the request but ignored: {{'stream_options', 'user'}}"
                )),
                980..=996 => line.push_str(&format!(
                    "(APIServer pid=812) ERROR {now} [serving_chat.py:208] Error in preprocessing \
                     prompt inputs: This model's maximum context length is 32768 tokens. However, \
                     you requested {} tokens. Please reduce the length of the messages.",
                    32_769 + rng.below(9000)
                )),
                _ => line.push_str(&format!(
                    "(EngineCore_DP0 pid=276) INFO {now} [gpu_model_runner.py:2708] Graph \
                     capturing finished in {} secs, took 0.58 GiB",
                    10 + rng.below(20)
                )),
            }
            if let Some(n) = args.line_bytes {
                let mut filler = String::new();
                prompt(
                    &mut rng,
                    n.saturating_sub(line.len() + 1),
                    false,
                    &mut filler,
                );
                if line.len() < n {
                    line.push(' ');
                    line.push_str(&filler);
                }
                let mut cut = n.min(line.len());
                while !line.is_char_boundary(cut) {
                    cut -= 1;
                }
                line.truncate(cut);
            }
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    out.flush()?;

    if let Some(path) = args.expect {
        let mut expect = String::new();
        for (engine, g) in last.iter().enumerate().take(stats_seen as usize) {
            expect.push_str(&format!(
                "{engine} {} {} {}.{} {}.{} {}.{} {}.{}\n",
                g.running,
                g.waiting,
                g.kv_tenths / 10,
                g.kv_tenths % 10,
                g.prefix_tenths / 10,
                g.prefix_tenths % 10,
                g.prompt_tenths / 10,
                g.prompt_tenths % 10,
                g.gen_tenths / 10,
                g.gen_tenths % 10,
            ));
        }
        std::fs::write(&path, expect)?;
    }
    Ok(())
}
