//! TensorRT-LLM and Triton's TRT-LLM backend: iteration stats, KV-cache capacity, identity.
//!
//! Iteration stats reach a log in three shapes, all read into one [`Iteration`] record:
//!
//! - A, [`triton_json`]: the Triton C++ backend's verbose JSON with readable keys, behind a
//!   Triton head, escaped as a JSON string literal since Triton 24.05;
//! - B, [`iteration_stats`]: the camelCase `IterationStats` JSON (gptManagerBenchmark's
//!   `[TensorRT-LLM][INFO] {...}`, or whole lines of a JSON-lines file);
//! - C, [`iter_log`]: the PyTorch backend's `iter = N, global_rank = G, ...` text line.
//!
//! Startup capacity and identity lines are in [`startup`]. [`prefix`] strips the Triton and
//! TRT-LLM logger heads, which can appear in front of any of them.
//!
//! Cost: format A arrives at up to hundreds of lines a second. A line is split once, its JSON
//! is parsed once into a borrowing [`loose::Loose`] map (one `Vec`), and only an escaped
//! message is copied (by the unescape).

pub mod clock;
pub mod flat;
pub mod iter_log;
pub mod iteration;
pub mod iteration_stats;
pub mod objects;
pub mod prefix;
pub mod startup;
pub mod triton_json;

use std::borrow::Cow;

use serde::Serialize;

use crate::lex::loose;
use crate::{Outcome, Parsed};

pub use iteration::{Batching, Format, Iteration};
pub use startup::KvCapacity;

/// Substrings at least one of which every line this module parses contains.
pub const ANCHORS: &[&str] = &[
    // A, plain and escaped.
    "Active Request Count",
    // B (first key of every record; `iterLatencyMS` in case a producer drops memory keys).
    "\"cpuMemUsage",
    "\"iterLatencyMS",
    // C, all six variants.
    ", global_rank = ",
    // D: capacity.
    " tokens in paged KV cache.",
    " for max tokens in paged KV cache (",
    "calculating max tokens in paged kv cache: ",
    "Number of blocks in KV cache ",
    "KV cache pages per sequence: ",
    "KV cache blocks per sequence: ",
    "Number of tokens per block: ",
    "Estimated max memory in KV cache : ",
    "available KV cache memory when calculating max tokens: ",
    // D: identity.
    "TensorRT-LLM version: ",
    "] loading: ",
    "] \"loading: ",
    // Triton's signal handlers.
    "Signal (",
];

/// TensorRT-LLM and Triton in the dispatch's registry ([`crate::ENGINES`]).
pub static GRAMMAR: crate::EngineGrammar = crate::EngineGrammar {
    engine: "trtllm",
    anchors: || ANCHORS.to_vec(),
    first_stage: || FIRST_STAGE.to_vec(),
    known_stage: &[],
    banner: &["TensorRT-LLM version: ", "loading: "],
    grammar_names: &[
        "trtllm_iteration",
        "trtllm_capacity",
        "trtllm_identity",
        "trtllm_lifecycle",
    ],
    read_message,
    read_foreign: Some(read_foreign),
};

/// The first stage's pieces of [`ANCHORS`] (see [`crate::PREFILTER`]).
const FIRST_STAGE: &[&str] = &[
    "block: ",
    "KV cache",
    "kv cache: ",
    "Active Request Count",
    "cpuMemUsage",
    "LatencyMS",
    "_rank = ",
    "TensorRT-LLM version: ",
    "loading: ",
    "Signal (",
];

/// The record [`crate::Record`] holds for this engine.
pub type EngineRecord<'a> = TrtllmRecord<'a>;

/// What one TensorRT-LLM line says.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum TrtllmRecord<'a> {
    /// One executor iteration, from format A, B or C (boxed: it is by far the largest record).
    Iteration(Box<Iteration>),
    /// A startup line stating (part of) the KV-cache capacity; the last value of each field wins.
    KvCapacity(KvCapacity),
    /// `TensorRT-LLM version: X`, printed at `import tensorrt_llm` by every process.
    Version { version: &'a str },
    /// Triton's `loading: <model>:<version>`: the Triton model name (usually `tensorrt_llm`).
    TritonModel {
        model: Cow<'a, str>,
        model_version: &'a str,
    },
    /// Triton's `Signal (N) received.`: SIGTERM or SIGINT start an orderly shutdown, SIGSEGV
    /// or SIGABRT kill the server.
    Signal { signal: u32, fatal: bool },
}

impl TrtllmRecord<'_> {
    /// The `grammar` label for lines that produce this record.
    pub fn grammar(&self) -> &'static str {
        match self {
            TrtllmRecord::Iteration(_) => "trtllm_iteration",
            TrtllmRecord::KvCapacity(_) => "trtllm_capacity",
            TrtllmRecord::Version { .. } | TrtllmRecord::TritonModel { .. } => "trtllm_identity",
            TrtllmRecord::Signal { .. } => "trtllm_lifecycle",
        }
    }
}

impl TrtllmRecord<'_> {
    /// True when every value is one TensorRT-LLM can print (see [`crate::domain`]; the JSON
    /// formats' numbers are checked as they are read, in [`json`]).
    pub fn possible(&self) -> bool {
        use crate::domain::{fraction, magnitude, opt};
        match self {
            TrtllmRecord::Iteration(it) => {
                opt(it.new_active_requests_queue_latency_ms, magnitude)
                    && opt(it.avg_decoded_tokens_per_iter, magnitude)
                    && opt(it.kv_cache_hit_rate, fraction)
                    && opt(it.kv_used_fraction, fraction)
                    && opt(it.kv_cache_transfer_ms, magnitude)
                    && opt(it.iter_latency_ms, magnitude)
                    && opt(it.prev_device_step_time_ms, magnitude)
                    && opt(it.spec_acceptance_length, magnitude)
                    && opt(it.spec_draft_overhead, magnitude)
                    && opt(it.spec_iter_latency_ms, magnitude)
                    && blocks_within_pool(it)
            }
            TrtllmRecord::KvCapacity(c) => {
                opt(c.allocated_gib, magnitude)
                    && opt(c.estimated_gib, magnitude)
                    && opt(c.device_total_gib, magnitude)
                    && opt(c.available_gib, magnitude)
            }
            TrtllmRecord::Version { .. }
            | TrtllmRecord::TritonModel { .. }
            | TrtllmRecord::Signal { .. } => true,
        }
    }
}

/// The KV cache manager reports its primary pool: used and free blocks are parts of the
/// max (`usedNumBlocks = maxNumBlocks - freeNumBlocks`), never more. A record saying 500 of 10
/// made llmtail derive a used fraction of 50.0.
fn blocks_within_pool(it: &iteration::Iteration) -> bool {
    let Some(max) = it.kv_max_blocks else {
        return true;
    };
    it.kv_used_blocks.is_none_or(|used| used <= max)
        && it.kv_free_blocks.is_none_or(|free| free <= max)
}

/// Reads a line that contains one of [`ANCHORS`]. As for vLLM, values are judged here, where
/// the formats are known, so that a line is kept or rejected whole.
pub fn read(line: &str) -> Outcome<'_> {
    read_message(line).0
}

/// [`read`], and where the message of the record it read begins in `line` (after the heads).
pub(crate) fn read_message(line: &str) -> (Outcome<'_>, usize) {
    match parse(line) {
        Some((parsed, message_at)) => (judged(parsed), message_at),
        None if claimed(line) => (
            Outcome::Rejected {
                grammar: "trtllm_iteration",
            },
            line.len(),
        ),
        None => (Outcome::Unmatched, line.len()),
    }
}

/// True for a line that did not parse but whose message starts as an iteration record does:
/// one cut off, or with a number no counter can take. Startup lines are not claimed: their
/// anchors are phrases other messages quote. Neither are another program's `iter = 5, loss = `
/// (no `currank_total_requests`, which all six format C variants print) or JSON whose anchor
/// is nested (request stats): an iteration object's first key is one of its own.
fn claimed(line: &str) -> bool {
    let message = prefix::split(line).message.trim_start();
    if message.starts_with("iter = ") {
        return message.contains(", currank_total_requests = ");
    }
    claimed_json(message.trim_start_matches(['[', '"']))
}

/// True for a JSON object (plain or escaped) whose first key is one an iteration record starts
/// with.
fn claimed_json(object: &str) -> bool {
    let Some(first_key) = object.strip_prefix('{') else {
        return false;
    };
    let first_key = first_key.trim_start_matches(['\\', '"']);
    [
        triton_json::FIRST_KEY,
        "Iteration Counter",
        "cpuMemUsage",
        "iterLatencyMS",
    ]
    .iter()
    .any(|key| first_key.starts_with(key))
}

/// Parses a line that contains one of [`ANCHORS`], whatever its values; with where its message
/// begins.
fn parse(line: &str) -> Option<(Parsed<'_>, usize)> {
    if let Some(signal) = triton_signal(line) {
        let parsed = Parsed {
            time: None,
            process: None,
            record: crate::Record::Trtllm(signal),
        };
        return Some((parsed, 0));
    }
    let head = prefix::split(line);
    let message_at = line.len() - head.message.len();
    let message = head.message.trim_end();
    let record = if message.starts_with("iter = ") {
        TrtllmRecord::Iteration(Box::new(iter_log::parse(message)?))
    } else if message.starts_with('{') || message.starts_with("\"{") || message.starts_with("[{") {
        TrtllmRecord::Iteration(Box::new(json(message)?))
    } else {
        match startup::parse(message, head.rank)? {
            startup::Startup::Capacity(c) => TrtllmRecord::KvCapacity(c),
            startup::Startup::Version(version) => TrtllmRecord::Version { version },
            startup::Startup::TritonModel { model, version } => {
                if !head.triton {
                    return None;
                }
                TrtllmRecord::TritonModel {
                    model,
                    model_version: version,
                }
            }
        }
    };
    let parsed = match record {
        TrtllmRecord::Iteration(it) => iteration(it, &head),
        other => Parsed {
            time: head.time,
            process: None,
            record: crate::Record::Trtllm(other),
        },
    };
    Some((parsed, message_at))
}

/// An iteration read behind `head`: the head's rank when the record names none, its process
/// id, and its time (else the record's own `timestamp`).
fn iteration<'a>(mut it: Box<Iteration>, head: &prefix::Head<'_>) -> Parsed<'a> {
    it.rank = it.rank.or(head.rank);
    it.pid = head.pid;
    Parsed {
        time: head.time.or(it.timestamp),
        process: None,
        record: crate::Record::Trtllm(TrtllmRecord::Iteration(it)),
    }
}

/// An iteration record behind a head no grammar knows ([`crate::foreign`]): the PyTorch
/// backend's `iter = N, ...` line or a JSON iteration object, timed by that head's first stamp
/// before the record's own `timestamp` (as a known head's time is). Startup lines are not read
/// there: their anchors are phrases other messages quote. Behind a head of TensorRT-LLM's or
/// Triton's own, the message is the one after that head, which [`read_message`] did not read.
fn read_foreign<'a>(before: &'a str, message: &'a str) -> Outcome<'a> {
    let message = message.trim_end();
    let record = if message.starts_with("iter = ") {
        iter_log::parse(message)
    } else if message.starts_with('{') || message.starts_with("[{") {
        json(message)
    } else {
        return Outcome::Unmatched;
    };
    let Some(record) = record else {
        return Outcome::Unmatched;
    };
    let known = prefix::split(before);
    if known.time.is_some() || known.rank.is_some() || known.triton {
        return Outcome::Unmatched;
    }
    let head = prefix::Head {
        time: crate::lex::time::first_stamp(before),
        rank: None,
        pid: None,
        triton: false,
        message,
    };
    judged(iteration(Box::new(record), &head))
}

/// [`TrtllmRecord::possible`] as an outcome.
fn judged(parsed: Parsed<'_>) -> Outcome<'_> {
    match &parsed.record {
        crate::Record::Trtllm(record) if !record.possible() => Outcome::Rejected {
            grammar: record.grammar(),
        },
        _ => Outcome::Parsed(parsed),
    }
}

/// `Signal (15) received.`: Triton's signal handlers (`triton_signal.cc`) write it with
/// `std::cout`, no log head, the whole line. 2 and 15 begin an orderly shutdown (the
/// `Waiting for in-flight requests to complete.` lines follow); 11 and 6 (and any other) are
/// the error handler's, followed by a stack dump and a core dump.
fn triton_signal(line: &str) -> Option<TrtllmRecord<'static>> {
    let number = line
        .trim_end()
        .strip_prefix("Signal (")?
        .strip_suffix(") received.")?;
    let signal: u32 = number.parse().ok()?;
    Some(TrtllmRecord::Signal {
        signal,
        fatal: !matches!(signal, 2 | 15),
    })
}

/// A JSON stats message: a Triton record (A) or an `IterationStats` record (B), either one
/// possibly as an escaped JSON string literal, or a one-record JSON array (a `/metrics` dump).
fn json(message: &str) -> Option<Iteration> {
    // Fast path for format A: the flat object, plain or escaped, scanned without copying.
    let fast = match message.strip_prefix('"') {
        Some(inner) => inner
            .strip_suffix('"')
            .and_then(|t| flat::object(t, "\\\"")),
        None => flat::object(message, "\""),
    };
    if let Some(entries) = fast {
        if triton_json::is_triton(&entries) {
            if !numbers_possible(&entries) {
                return None;
            }
            return Some(triton_json::read(&entries));
        }
    }
    if message.starts_with('"') {
        let text = loose::unescape(message)?;
        return json(&text);
    }
    let text = match message.strip_prefix('[') {
        Some(inner) => inner.strip_suffix(']')?,
        None => message,
    };
    let entries = loose::object(text)?;
    if !numbers_possible(&entries) {
        return None;
    }
    if triton_json::is_triton(&entries) {
        Some(triton_json::read(&entries))
    } else {
        iteration_stats::read(&entries)
    }
}

/// Every number in a stats object is a count, a size, a duration or a fraction: none is
/// negative or infinite (a `-5` that read as "no value" would silently drop a field; `1e400`
/// reads as +Inf). Bounds on the floats the record keeps are [`TrtllmRecord::possible`]'s.
fn numbers_possible(entries: &[(Cow<'_, str>, loose::Loose<'_>)]) -> bool {
    use loose::Loose;
    entries.iter().all(|(_, value)| match value {
        Loose::Int(n) => *n >= 0,
        Loose::Float(f) => f.is_finite() && *f >= 0.0,
        Loose::Map(inner) => numbers_possible(inner),
        _ => true,
    })
}
