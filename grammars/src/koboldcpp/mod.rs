//! KoboldCpp: the line it prints when a generation finishes (1.57 onwards).
//!
//! KoboldCpp logs no periodic stats and exports no Prometheus metrics of its own; after each
//! generation `gpttype_adapter.cpp` prints `CtxLimit: ...` with the context used, the tokens
//! generated and the seconds each phase took ([`stats`]), at the start of a line, behind a
//! `[hh:mm:ss] ` clock in releases after 1.76 ([`head`]). Its progress lines (`Processing Prompt
//! [BLAS] (n / n tokens)`, `Generating (n / n tokens)`) are overwritten in place with `\r` and
//! say nothing the stats line does not, so they are not read. Values stay as printed.

pub mod head;
pub mod stats;

use serde::Serialize;

use crate::{Outcome, Parsed};

pub use stats::{KoboldcppStats, Phase};

/// Every line this module parses contains the stats line's opening word.
pub const ANCHORS: &[&str] = &[head::OPENING];

/// KoboldCpp in the dispatch's registry ([`crate::ENGINES`]).
pub static GRAMMAR: crate::EngineGrammar = crate::EngineGrammar {
    engine: "koboldcpp",
    anchors: || ANCHORS.to_vec(),
    first_stage: || FIRST_STAGE.to_vec(),
    known_stage: &[],
    // KoboldCpp prints no start-up line the grammar reads: its one record stands for it.
    banner: FIRST_STAGE,
    grammar_names: &["koboldcpp_stats"],
    read_message,
    read_foreign: None,
};

/// The first stage's piece of [`ANCHORS`] (see [`crate::PREFILTER`]): the whole opening word.
/// Measured on the one-shot benchmark's log, after the measured order: 0.11% more instructions
/// than without KoboldCpp; its tail `xLimit:` (first three bytes `xLi`, thought rarer than
/// `Ctx`) cost 1.17%.
const FIRST_STAGE: &[&str] = &["CtxLimit:"];

/// The record [`crate::Record`] holds for this engine.
pub type EngineRecord<'a> = KoboldcppRecord;

/// What one KoboldCpp line says.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum KoboldcppRecord {
    /// The line printed when a generation finished.
    Stats(KoboldcppStats),
}

impl KoboldcppRecord {
    /// The `grammar` label for lines that produce this record.
    pub fn grammar(&self) -> &'static str {
        match self {
            KoboldcppRecord::Stats(_) => "koboldcpp_stats",
        }
    }

    /// True when every value is one KoboldCpp can print (see [`crate::domain`]): `%.2f` and
    /// `%.1f` of non-negative seconds and rates, where a rate is `inf` when its phase took no
    /// measurable time (`1000.0 / 0`).
    pub fn possible(&self) -> bool {
        use crate::domain::{magnitude, opt};
        let rate = |r: f64| magnitude(r) || r == f64::INFINITY;
        let phase = |p: &Phase| {
            magnitude(p.seconds) && opt(p.ms_per_token, magnitude) && rate(p.tokens_per_second)
        };
        match self {
            KoboldcppRecord::Stats(s) => {
                opt(s.init_seconds, magnitude)
                    && phase(&s.process)
                    && phase(&s.generate)
                    && magnitude(s.total_seconds)
                    && s.total_tokens_per_second.is_none_or(rate)
            }
        }
    }
}

/// Reads a line that contains one of [`ANCHORS`].
pub fn read(line: &str) -> Outcome<'_> {
    read_message(line).0
}

/// [`read`], and where the message it read begins in `line` (at `CtxLimit:`; the end of the
/// line when it read none).
pub(crate) fn read_message(line: &str) -> (Outcome<'_>, usize) {
    let Some(head) = memchr::memmem::find_iter(line.as_bytes(), head::OPENING)
        .find_map(|at| head::split(line, at))
    else {
        return (Outcome::Unmatched, line.len());
    };
    let message_at = line.len() - head.message.len();
    let outcome = match stats::parse(head.message).map(KoboldcppRecord::Stats) {
        Some(record) if record.possible() => Outcome::Parsed(Parsed {
            time: head.time,
            process: None,
            record: crate::Record::Koboldcpp(record),
        }),
        Some(record) => Outcome::Rejected {
            grammar: record.grammar(),
        },
        // The opening word where a line starts: a cut or changed stats line.
        None => Outcome::Rejected {
            grammar: "koboldcpp_stats",
        },
    };
    (outcome, message_at)
}

/// [`read`], for callers that need only the parsed lines.
pub fn parse(line: &str) -> Option<Parsed<'_>> {
    read(line).parsed()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "CtxLimit: 3768/4096, Process:0.44s (442.0ms/T = 2.26T/s), Generate:0.00s (3.0ms/T = 333.33T/s), Total:0.45s (2.25T/s)";

    #[test]
    fn a_stats_line_where_a_line_starts_parses() {
        let Outcome::Parsed(p) = read(LINE) else {
            panic!("{LINE}")
        };
        assert_eq!(p.record.grammar(), "koboldcpp_stats");
        assert_eq!(p.time, None);
    }

    #[test]
    fn a_cut_line_is_rejected_and_a_quoted_one_is_no_record() {
        assert_eq!(
            read("CtxLimit: 3768/4096, Process:0.44s (442.0ms/T"),
            Outcome::Rejected {
                grammar: "koboldcpp_stats"
            }
        );
        assert_eq!(read(&format!("Output: {LINE}")), Outcome::Unmatched);
    }

    #[test]
    fn negative_seconds_are_impossible() {
        let line = "CtxLimit:1/2, Amt:1/2, Init:-0.01s, Process:0.01s (1.00T/s), Generate:0.01s (1.00T/s), Total:0.02s";
        assert!(matches!(read(line), Outcome::Rejected { .. }));
    }
}
