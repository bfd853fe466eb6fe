//! Grammars for the stats lines that LLM inference engines write into their logs.
//!
//! This crate is the pure middle of llmtail's data flow: a decoded log message goes in,
//! a typed record of what the line says comes out. No I/O, no clock, no Prometheus:
//! values are kept as the line prints them (a percentage stays a percentage), and the
//! agent decides what they mean as metrics.
//!
//! Dispatch is two-staged because almost every line in a real log is *not* a stats line:
//! one Aho-Corasick pass looks for the anchors of every grammar (`Avg prompt throughput: `,
//! `SpecDecoding metrics: `, ...), and only a line that contains an anchor is handed to the
//! nom grammar of the engine that owns it.

#![forbid(unsafe_code)]

pub mod number;
pub mod time;
pub mod trtllm;
pub mod vllm;

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind};
use serde::Serialize;

pub use time::LogTime;

/// One parsed line: when the line says it was written, and what it says.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Parsed<'a> {
    /// The timestamp in the record head, when the engine's logger printed one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<LogTime>,
    /// The process name in a vLLM `(EngineCore_DP1 pid=7)` prefix, or a TRT-LLM rank, when present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process: Option<&'a str>,
    #[serde(flatten)]
    pub record: Record<'a>,
}

/// What a line says, per engine.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Record<'a> {
    Vllm(vllm::VllmRecord<'a>),
    Trtllm(trtllm::TrtllmRecord<'a>),
}

impl Record<'_> {
    /// The name of the grammar that produced this record, as used in the
    /// `grammar` label of `llmtail_lines_parsed_total`.
    pub fn grammar(&self) -> &'static str {
        match self {
            Record::Vllm(r) => r.grammar(),
            Record::Trtllm(r) => r.grammar(),
        }
    }
}

/// Every value [`Record::grammar`] can return: the `grammar` label's whole domain.
pub const GRAMMAR_NAMES: &[&str] = &[
    "vllm_stats",
    "vllm_prefix_cache",
    "vllm_spec_decoding",
    "vllm_capacity",
    "vllm_config",
    "vllm_preemption",
    "vllm_iteration",
    "trtllm_iteration",
    "trtllm_capacity",
    "trtllm_identity",
];

/// Which engine's grammar an anchor belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Engine {
    Vllm,
    Trtllm,
}

/// Every grammar's anchors in one automaton that reports every match (overlapping), so the
/// dispatch can try each engine whose anchor a line holds.
static ANCHORS: LazyLock<(AhoCorasick, Vec<Engine>)> = LazyLock::new(|| {
    let mut patterns: Vec<&str> = Vec::new();
    let mut owners = Vec::new();
    for (engine, anchors) in [
        (Engine::Vllm, vllm::ANCHORS),
        (Engine::Trtllm, trtllm::ANCHORS),
    ] {
        for anchor in anchors {
            patterns.push(anchor);
            owners.push(engine);
        }
    }
    let automaton = AhoCorasick::new(&patterns).expect("anchors are plain strings");
    (automaton, owners)
});

/// The first stage's strings: a piece of each anchor (every anchor contains one, a test
/// checks), chosen so their first three bytes are rare in prose, JSON and addresses. The SIMD
/// (Teddy) search behind a leftmost-first automaton looks for those three bytes first; with
/// the anchors themselves, ` to`, ` wi` and ` fo` (` tokens in paged KV cache.`,
/// ` with config: `, ` for max tokens`) stopped it every few bytes of a prompt. Eight
/// anchors share `KV cache`.
pub const PREFILTER: &[&str] = &[
    "hput: ",
    "Running: ",
    "RUNNING: ",
    "Prefix cache hit rate: GPU: ",
    "Speculative metrics: ",
    "SpecDecoding metrics: ",
    "blocks: ",
    "block: ",
    "KV cache",
    "kv cache: ",
    "Maximum concurrency for ",
    "_gpu_blocks is: ",
    "onfig: ",
    "_cumulative_preemption=",
    "Iteration(",
    "Active Request Count",
    "cpuMemUsage",
    "LatencyMS",
    "_rank = ",
    "TensorRT-LLM version: ",
    "loading: ",
];

/// [`PREFILTER`] as one automaton. Leftmost-first, because overlapping search cannot use the
/// SIMD prefilter and steps a DFA byte by byte (about 250 MB/s here).
static FIRST_STAGE: LazyLock<AhoCorasick> = LazyLock::new(|| {
    AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostFirst)
        .build(PREFILTER)
        .expect("prefilter strings are plain strings")
});

/// Each engine's anchors alone, leftmost-first (SIMD) like [`FIRST_STAGE`]: a line that passed
/// the first stage nearly always holds one engine's anchors only, and then that engine's
/// grammar is the whole answer; the overlapping search in [`ANCHORS`], which orders the
/// engines by where their anchors end, is only needed when a line holds both.
static ENGINE_ANCHORS: LazyLock<[AhoCorasick; 2]> = LazyLock::new(|| {
    [vllm::ANCHORS, trtllm::ANCHORS].map(|anchors| {
        AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .build(anchors)
            .expect("anchors are plain strings")
    })
});

/// Parses one log message (envelope already removed, ANSI colour codes stripped).
///
/// Returns `None` for every line that is not a stats, capacity or identity line of a
/// known engine; that is the common case and costs one anchor scan.
pub fn parse(line: &str) -> Option<Parsed<'_>> {
    if !FIRST_STAGE.is_match(line) {
        return None;
    }
    let [vllm_anchors, trtllm_anchors] = &*ENGINE_ANCHORS;
    match (vllm_anchors.is_match(line), trtllm_anchors.is_match(line)) {
        (false, false) => return None,
        (true, false) => return vllm::parse(line),
        (false, true) => return trtllm::parse(line),
        (true, true) => {}
    }
    let (automaton, owners) = &*ANCHORS;
    let mut tried_vllm = false;
    let mut tried_trtllm = false;
    for found in automaton.find_overlapping_iter(line) {
        match owners[found.pattern().as_usize()] {
            Engine::Vllm if !tried_vllm => {
                tried_vllm = true;
                if let Some(parsed) = vllm::parse(line) {
                    return Some(parsed);
                }
            }
            Engine::Trtllm if !tried_trtllm => {
                tried_trtllm = true;
                if let Some(parsed) = trtllm::parse(line) {
                    return Some(parsed);
                }
            }
            _ => {}
        }
        if tried_vllm && tried_trtllm {
            break;
        }
    }
    None
}

/// False when [`parse`] returns `None` for this line, whatever bytes that are not ASCII it holds
/// become: the first stage alone, on bytes not yet decoded. The agent asks it before it decodes
/// a plain-text line at all (UTF-8 validation, ANSI stripping), since nine lines in ten of a
/// busy log are prompts and access lines that fail it.
pub fn may_parse(line: &[u8]) -> bool {
    FIRST_STAGE.is_match(line)
}

/// True when some grammar's anchor occurs in the line: the cheap first stage of [`parse`],
/// exposed for benchmarks and for counting near misses.
/// Takes bytes, so the agent can ask before it decodes a line at all: the anchors are ASCII,
/// and an ASCII run reads the same in the raw bytes as in their lossy UTF-8 decoding.
pub fn has_anchor(line: &[u8]) -> bool {
    FIRST_STAGE.is_match(line) && ANCHORS.0.is_match(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_anchor_holds_a_prefilter_string() {
        for anchor in vllm::ANCHORS.iter().chain(trtllm::ANCHORS) {
            assert!(
                PREFILTER.iter().any(|p| anchor.contains(p)),
                "no PREFILTER string in anchor {anchor:?}: the first stage would drop its lines"
            );
        }
    }
}
