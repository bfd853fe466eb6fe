//! LMDeploy: the periodic stats line of its `LoggingStatLogger` (0.9.2 to 0.18 and the
//! development branch after it).
//!
//! LMDeploy prints the line with `print()`: `[%Y-%m-%d %H:%M:%S DP{rank}] message` ([`head`]),
//! every 10 s in which tokens were processed, one line per data-parallel rank. Its message copies
//! vLLM's words (`Avg prompt throughput: `, `Running: `, `SpecDecoding metrics: `), so the
//! dispatch hands its lines to vLLM's grammar first; vLLM's finds no record head in them and leaves
//! them, and the bracket is what makes a line LMDeploy's here. Values stay as printed.

pub mod head;
pub mod stats;

use serde::Serialize;

use crate::{Outcome, Parsed};

pub use stats::{LmdeployStats, SpecDecoding};

/// Substrings at least one of which every line this module parses contains: the head's `] `
/// and the start of a 0.9.2-0.12 message, and the `KV cache: ` every grouped line prints
/// (PR #4297 onwards: `Avg thr (in/out): A / B tokens/s, ..., KV cache: X%`).
pub const ANCHORS: &[&str] = &["] Avg prompt throughput: ", "KV cache: "];

/// LMDeploy in the dispatch's registry ([`crate::ENGINES`]).
pub static GRAMMAR: crate::EngineGrammar = crate::EngineGrammar {
    engine: "lmdeploy",
    anchors: || ANCHORS.to_vec(),
    first_stage: || FIRST_STAGE.to_vec(),
    known_stage: &[],
    banner: &["hput: ", "KV cache"],
    grammar_names: &["lmdeploy_stats"],
    read_message,
    read_foreign: None,
};

/// The first stage's pieces of [`ANCHORS`] (see [`crate::PREFILTER`]): vLLM's `hput: ` and
/// `KV cache` already, so LMDeploy adds no string to the scan every line pays for. (` / ` was
/// tried: a three-byte piece makes the searcher fingerprint every piece by three bytes, and the
/// one-shot benchmark took 60% more instructions. A grouped line cut before its `KV cache: ` is
/// no record rather than a rejected one.)
const FIRST_STAGE: &[&str] = &["hput: ", "KV cache"];

/// The record [`crate::Record`] holds for this engine.
pub type EngineRecord<'a> = LmdeployRecord;

/// What one LMDeploy line says.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum LmdeployRecord {
    /// The periodic stats line, with the spec-decoding message printed on it (0.12+).
    Stats(LmdeployStats),
}

impl LmdeployRecord {
    /// The `grammar` label for lines that produce this record.
    pub fn grammar(&self) -> &'static str {
        match self {
            LmdeployRecord::Stats(_) => "lmdeploy_stats",
        }
    }

    /// True when every value is one LMDeploy can print (see [`crate::domain`]): `%.1f` of a rate
    /// and of a fraction times 100, `%.2f%%` of accepted over drafted tokens (`nan` when none
    /// was drafted), `%.3f` of accepted tokens per draft at each position.
    pub fn possible(&self) -> bool {
        use crate::domain::{fraction, magnitude, opt, percent};
        match self {
            LmdeployRecord::Stats(s) => {
                magnitude(s.prompt_throughput)
                    && magnitude(s.generation_throughput)
                    && percent(s.kv_cache_usage_percent)
                    && opt(s.prefix_cache_hit_rate_percent, percent)
                    && opt(s.external_prefix_cache_hit_rate_percent, percent)
                    && opt(s.mm_preprocess_s_per_req, magnitude)
                    && s.spec_decoding.as_ref().is_none_or(|d| {
                        (d.draft_acceptance_rate_percent.is_nan()
                            || percent(d.draft_acceptance_rate_percent))
                            && magnitude(d.mean_acceptance_length)
                            && d.accepted_tokens <= d.draft_tokens
                            && d.per_position_acceptance_rate.iter().all(|&r| fraction(r))
                    })
            }
        }
    }
}

/// Reads a line that contains one of [`ANCHORS`].
pub fn read(line: &str) -> Outcome<'_> {
    read_message(line).0
}

/// [`read`], and where the message it read begins in `line` (after the head; the end of the
/// line when it read none).
pub(crate) fn read_message(line: &str) -> (Outcome<'_>, usize) {
    let Some(head) = head::split(line) else {
        return (Outcome::Unmatched, line.len());
    };
    let message_at = line.len() - head.message.len();
    let outcome = match stats::parse(head.dp_rank, head.message).map(LmdeployRecord::Stats) {
        Some(record) if record.possible() => Outcome::Parsed(Parsed {
            time: Some(head.time),
            process: None,
            record: crate::Record::Lmdeploy(record),
        }),
        Some(record) => Outcome::Rejected {
            grammar: record.grammar(),
        },
        // The head and the start of a stats message: a cut or changed stats line.
        None if stats::starts(head.message) => Outcome::Rejected {
            grammar: "lmdeploy_stats",
        },
        None => return (Outcome::Unmatched, line.len()),
    };
    (outcome, message_at)
}

/// [`read`], for callers that need only the parsed lines.
pub fn parse(line: &str) -> Option<Parsed<'_>> {
    read(line).parsed()
}
