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

use aho_corasick::AhoCorasick;
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

/// Every grammar's anchors in one automaton, so a line that matches none costs one scan.
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

/// Parses one log message (envelope already removed, ANSI colour codes stripped).
///
/// Returns `None` for every line that is not a stats, capacity or identity line of a
/// known engine; that is the common case and costs one anchor scan.
pub fn parse(line: &str) -> Option<Parsed<'_>> {
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

/// True when some grammar's anchor occurs in the line: the cheap first stage of [`parse`],
/// exposed for benchmarks and for counting near misses.
pub fn has_anchor(line: &str) -> bool {
    ANCHORS.0.is_match(line)
}
