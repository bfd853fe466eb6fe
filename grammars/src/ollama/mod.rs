//! Ollama: the server's HTTP access lines and what it says about its model runners.
//!
//! Ollama prints no periodic statistics: token counts and durations reach only the API's
//! answers. Its log has one line per answered request, written by gin ([`gin`]), and a few
//! server records about runners, the subprocesses that each hold one loaded model
//! ([`server`]). Every line is read whole: a gin line or a server record is the whole line
//! once the envelope (journald, Docker) is gone, and a line that merely contains one (a prompt
//! logged at DEBUG, another tool's line) is not read.
//!
//! Gin's line is every Go web service's: another gin service's log read as Ollama's would be
//! counted as Ollama's requests. The agent reads a log as the engine it is configured for.

pub mod gin;
pub mod server;

use serde::Serialize;

use crate::{Outcome, Parsed};

pub use gin::Request;

/// Substrings at least one of which every line this module parses contains.
pub const ANCHORS: &[&str] = &["[GIN] ", server::RUNNER_STARTED, server::LOADED_RUNNERS];

/// Ollama in the dispatch's registry ([`crate::ENGINES`]).
pub static GRAMMAR: crate::EngineGrammar = crate::EngineGrammar {
    engine: "ollama",
    anchors: || ANCHORS.to_vec(),
    first_stage: || FIRST_STAGE.to_vec(),
    known_stage: &[],
    banner: &["unner", "[GIN] "],
    grammar_names: &["ollama_request", "ollama_runner"],
    read_message,
    read_foreign: None,
};

/// The first stage's pieces of [`ANCHORS`] (see [`crate::PREFILTER`]). `[GI` is rare in any text
/// but gin's. The runner anchors share `runner`, whose rarest three bytes are `unn` (`running`
/// starts a candidate that fails to verify; `run`, `nne` in `connect` and `ner` are far more
/// common). Measured (BENCHMARKS.md, "Ollama's first-stage pieces"): the two take the first stage
/// from 32 to 34 strings and add 6% to the dispatch's instructions over a vLLM log.
const FIRST_STAGE: &[&str] = &["[GIN] ", "unner"];

/// The record [`crate::Record`] holds for this engine.
pub type EngineRecord<'a> = OllamaRecord<'a>;

/// What one Ollama line says.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum OllamaRecord<'a> {
    /// One answered HTTP request (gin's access line).
    Request(Request<'a>),
    /// A runner finished loading its model: `llama runner started in 8.62 seconds`.
    RunnerStarted { load_seconds: f64 },
    /// The scheduler's count of loaded runners after a load: `msg="loaded runners" count=2`.
    LoadedRunners { count: u64 },
}

impl OllamaRecord<'_> {
    /// The `grammar` label for lines that produce this record.
    pub fn grammar(&self) -> &'static str {
        match self {
            OllamaRecord::Request(_) => "ollama_request",
            OllamaRecord::RunnerStarted { .. } | OllamaRecord::LoadedRunners { .. } => {
                "ollama_runner"
            }
        }
    }

    /// True when every value is one Ollama can print (see [`crate::domain`]): a status gin can
    /// send, a latency and a load time that are not negative nor absurd.
    pub fn possible(&self) -> bool {
        use crate::domain::magnitude;
        match self {
            OllamaRecord::Request(r) => {
                (100..=599).contains(&r.status) && magnitude(r.latency_seconds)
            }
            OllamaRecord::RunnerStarted { load_seconds } => magnitude(*load_seconds),
            OllamaRecord::LoadedRunners { .. } => true,
        }
    }
}

/// Reads a line that contains one of [`ANCHORS`].
pub fn read(line: &str) -> Outcome<'_> {
    read_message(line).0
}

/// [`read`], and where the record it read begins in `line`: at its start, since every record
/// here is the whole line (its head, like gin's `[GIN] `, holds the anchor).
pub(crate) fn read_message(line: &str) -> (Outcome<'_>, usize) {
    let start = line.len() - line.trim_start().len();
    let line = without_desktop_time(line);
    let parsed = match gin::parse(line) {
        Some((time, request)) => Some((time, OllamaRecord::Request(request))),
        None => server::parse(line),
    };
    let outcome = match parsed {
        Some((time, record)) if record.possible() => Outcome::Parsed(Parsed {
            time: Some(time),
            process: None,
            record: crate::Record::Ollama(record),
        }),
        Some((_, record)) => Outcome::Rejected {
            grammar: record.grammar(),
        },
        None if gin::claims(line) => Outcome::Rejected {
            grammar: "ollama_request",
        },
        None if server::claims(line) => Outcome::Rejected {
            grammar: "ollama_runner",
        },
        None => return (Outcome::Unmatched, line.len()),
    };
    (outcome, start)
}

/// The line without the `2025-03-05 08:19:02 ` Docker Desktop puts in front of every line of a
/// container's log it shows or saves (ollama#9509): the time of the line's own head is kept.
fn without_desktop_time(line: &str) -> &str {
    let trimmed = line.trim_start();
    match crate::lex::time::year_first(trimmed) {
        Some((_, rest)) => rest.strip_prefix(' ').unwrap_or(line),
        None => line,
    }
}

/// [`read`], for callers that need only the parsed lines.
pub fn parse(line: &str) -> Option<Parsed<'_>> {
    read(line).parsed()
}
