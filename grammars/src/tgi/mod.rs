//! HuggingFace TGI (text-generation-inference), TEI (text-embeddings-inference) and LoRAX: the
//! per-request `Success` event and the batch capacity line.
//!
//! TGI prints no periodic stats. Its router logs one INFO `Success` event per finished request,
//! in the span of the route (`generate`, `generate_stream`, `chat_completions`, `completions`),
//! after recording the request's timings on that span as `Duration` `Debug` strings
//! (`router/src/server.rs`: `span.record("total_time", format!("{total_time:?}"))`, then
//! `tracing::info!("Success")`, next to the `metrics::histogram!` calls that feed
//! `tgi_request_duration` and its siblings with the same values). TEI does the same with
//! `total_time`, `tokenization_time`, `queue_time` and `inference_time` (`router/src/lib.rs`,
//! `ResponseMetadata::record_span`). The events reach a log in two shapes:
//!
//! - text ([`text`]): `TIME  INFO span{fields}: target: file:line: Success`, ANSI colours
//!   stripped by the agent, or left as literal `#033[..m` by CloudWatch (removed here);
//! - JSON ([`json`], `--json-output`): one object with the span's fields under `"span"`.
//!
//! Values are kept exact: a duration is read into integer nanoseconds (`*_ns`), which is what
//! the `Debug` text holds, so the agent can observe the very `as_secs_f64()` TGI observed.

pub mod duration;
pub mod json;
pub mod text;

use std::borrow::Cow;

use serde::Serialize;

use crate::{LogTime, Outcome, Parsed};

/// Substrings at least one of which every line this module parses contains: the target crates
/// of the events ([`text::TARGETS`]), which the text and the JSON form both print.
pub const ANCHORS: &[&str] = &text::TARGETS;

/// TGI, TEI and LoRAX in the dispatch's registry ([`crate::ENGINES`]).
pub static GRAMMAR: crate::EngineGrammar = crate::EngineGrammar {
    engine: "tgi",
    anchors: || ANCHORS.to_vec(),
    first_stage: || FIRST_STAGE.to_vec(),
    known_stage: &[],
    banner: &["_router"],
    grammar_names: &["tgi_request", "tgi_embed", "tgi_capacity"],
    read_message,
    read_foreign: None,
};

/// The first stage's piece of [`ANCHORS`] (see [`crate::PREFILTER`]): one for the three
/// crates and both forms. `_ro` is rare in prose, JSON keys and addresses (`_round`, `_row`
/// in code are the usual near misses), and the piece sits in every router event's target, so
/// the capacity line needs no piece of its own.
const FIRST_STAGE: &[&str] = &["_router"];

/// The record [`crate::Record`] holds for this engine.
pub type EngineRecord<'a> = TgiRecord<'a>;

/// What one TGI, TEI or LoRAX line says.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum TgiRecord<'a> {
    /// TGI's (and LoRAX's) `Success` event: one generation request finished.
    Request(Request<'a>),
    /// TEI's `Success` event: one embed, rerank, predict (...) request finished.
    Embed(Embed<'a>),
    /// `Setting max batch total tokens to N` (router start-up, after warm-up).
    MaxBatchTotalTokens { tokens: u64 },
}

/// The timings TGI records on a request's span before it logs `Success`, in nanoseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Request<'a> {
    /// The route's span: `generate`, `generate_stream`, `chat_completions`, `completions`.
    pub span: Cow<'a, str>,
    /// Arrival to response (`start_time.elapsed()`).
    pub total_ns: u64,
    /// Arrival to queued.
    pub validation_ns: u64,
    /// Queued to the start of inference.
    pub queue_ns: u64,
    /// The start of inference to the end.
    pub inference_ns: u64,
    /// `inference_time / generated_tokens` (a `Duration` divided by a `u32`, truncated).
    pub time_per_token_ns: u64,
}

/// The timings TEI records on a request's span before it logs `Success`, in nanoseconds (for a
/// batch, TEI records each stage's mean over the batch's inputs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Embed<'a> {
    /// The route's span: `embed`, `openai_embed`, `rerank`, `predict`, `embed_sparse`, ...
    pub span: Cow<'a, str>,
    pub total_ns: u64,
    pub tokenization_ns: u64,
    pub queue_ns: u64,
    pub inference_ns: u64,
}

impl TgiRecord<'_> {
    /// The `grammar` label for lines that produce this record.
    pub fn grammar(&self) -> &'static str {
        match self {
            TgiRecord::Request(_) => "tgi_request",
            TgiRecord::Embed(_) => "tgi_embed",
            TgiRecord::MaxBatchTotalTokens { .. } => "tgi_capacity",
        }
    }

    /// True when every value is one TGI can print: every duration within
    /// [`crate::domain::MAX_MAGNITUDE`] milliseconds (decades: a request is seconds), and the
    /// time per token the inference time divided by at least one token, so never more than
    /// it. (A duration is a `u64` of nanoseconds already: [`duration::nanos`] reads no sign and
    /// no unit `Debug` lacks.)
    pub fn possible(&self) -> bool {
        let within = |ns: &[u64]| {
            ns.iter()
                .all(|&ns| crate::domain::magnitude(ns as f64 / 1e6))
        };
        match self {
            TgiRecord::Request(r) => {
                within(&[
                    r.total_ns,
                    r.validation_ns,
                    r.queue_ns,
                    r.inference_ns,
                    r.time_per_token_ns,
                ]) && r.time_per_token_ns <= r.inference_ns
            }
            TgiRecord::Embed(e) => {
                within(&[e.total_ns, e.tokenization_ns, e.queue_ns, e.inference_ns])
            }
            TgiRecord::MaxBatchTotalTokens { .. } => true,
        }
    }

    /// The record without borrows, for a line that had to be cleaned first.
    pub fn into_owned(self) -> TgiRecord<'static> {
        match self {
            TgiRecord::Request(r) => TgiRecord::Request(Request {
                span: Cow::Owned(r.span.into_owned()),
                ..r
            }),
            TgiRecord::Embed(e) => TgiRecord::Embed(Embed {
                span: Cow::Owned(e.span.into_owned()),
                ..e
            }),
            TgiRecord::MaxBatchTotalTokens { tokens } => TgiRecord::MaxBatchTotalTokens { tokens },
        }
    }
}

/// Reads a line that contains one of [`ANCHORS`].
pub fn read(line: &str) -> Outcome<'_> {
    read_message(line).0
}

/// [`read`], and where the record begins in `line` (its time; 0 for JSON and cleaned lines).
pub(crate) fn read_message(line: &str) -> (Outcome<'_>, usize) {
    if let Some(clean) = text::without_literal_escapes(line) {
        let outcome = match read_clean(&clean).0 {
            Outcome::Parsed(Parsed { time, record, .. }) => {
                let crate::Record::Tgi(record) = record else {
                    unreachable!("this module makes only TGI records")
                };
                Outcome::Parsed(Parsed {
                    time,
                    process: None,
                    record: crate::Record::Tgi(record.into_owned()),
                })
            }
            Outcome::Rejected { grammar } => Outcome::Rejected { grammar },
            Outcome::Unmatched => Outcome::Unmatched,
        };
        return (outcome, 0);
    }
    read_clean(line)
}

/// [`read_message`] of a line without literal escapes.
fn read_clean(line: &str) -> (Outcome<'_>, usize) {
    let read = if line.trim_start().starts_with('{') {
        json::read(line.trim()).map(|read| (read, 0))
    } else {
        text::event(line).and_then(|event| Some((from_text(&event)?, event.start)))
    };
    match read {
        Some((Ok((time, record)), start)) if record.possible() => (
            Outcome::Parsed(Parsed {
                time: Some(time),
                process: None,
                record: crate::Record::Tgi(record),
            }),
            start,
        ),
        Some((Ok((_, record)), _)) => (
            Outcome::Rejected {
                grammar: record.grammar(),
            },
            line.len(),
        ),
        Some((Err(grammar), _)) => (Outcome::Rejected { grammar }, line.len()),
        None => (Outcome::Unmatched, line.len()),
    }
}

/// What a line read as: a record and its time, or the grammar of a record of ours that does not
/// read (cut off, a value `Debug` does not print).
pub(crate) type Read<'a> = Result<(LogTime, TgiRecord<'a>), &'static str>;

/// The record of a text event, `None` when it is no event we read.
fn from_text<'a>(event: &text::Event<'a>) -> Option<Read<'a>> {
    if event.level != "INFO" {
        return None;
    }
    if let Some(tokens) = event
        .message
        .strip_prefix("Setting max batch total tokens to ")
    {
        return Some(capacity(tokens).map(|record| (event.time, record)));
    }
    let fields = text::timings(event.spans)?;
    if text::holds_a_head(event.spans) {
        // Two events glued (a lost newline): the path runs from the first event's spans to the
        // last one's, and a record read from it would mix the two. Counted, never guessed.
        return Some(Err(grammar_of(fields)));
    }
    if event.message != "Success" {
        // A span with recorded timings logs nothing else at INFO: a message that `Success`
        // starts with was cut short. Anything else is text around a quoted event (a request
        // log's prompt), not ours.
        return "Success"
            .starts_with(event.message)
            .then(|| Err(grammar_of(fields)));
    }
    let Some(span) = text::span_name(event.spans) else {
        return Some(Err(grammar_of(fields)));
    };
    Some(timed(Cow::Borrowed(span), fields).map(|record| (event.time, record)))
}

/// `N` of `Setting max batch total tokens to N`.
pub(crate) fn capacity(tokens: &str) -> Result<TgiRecord<'static>, &'static str> {
    match crate::lex::number::uint(tokens) {
        Ok(("", tokens)) => Ok(TgiRecord::MaxBatchTotalTokens { tokens }),
        _ => Err("tgi_capacity"),
    }
}

/// The grammar of a span's timings: TEI's when it has a `tokenization_time`.
fn grammar_of<'a>(mut fields: impl Iterator<Item = (&'a str, Option<&'a str>)>) -> &'static str {
    if fields.any(|(key, _)| key == "tokenization_time") {
        "tgi_embed"
    } else {
        "tgi_request"
    }
}

/// A request record from a span's fields (`key`, value): TGI's when it has a `validation_time`
/// and a `time_per_token`, TEI's when it has a `tokenization_time`. A timing that is missing or
/// is no `Duration` `Debug` text rejects the record; other fields (`parameters`, `seed`) are
/// skipped.
pub(crate) fn timed<'a, 'f>(
    span: Cow<'a, str>,
    fields: impl Iterator<Item = (&'f str, Option<&'f str>)>,
) -> Result<TgiRecord<'a>, &'static str> {
    // Each timing: absent, or its text read (`None` for a text that does not read).
    let mut timings: [Option<Option<u64>>; 6] = [None; 6];
    const KEYS: [&str; 6] = [
        "total_time",
        "validation_time",
        "queue_time",
        "inference_time",
        "time_per_token",
        "tokenization_time",
    ];
    let mut well_formed = true;
    for (key, value) in fields {
        well_formed &= value.is_some();
        if let Some(i) = KEYS.iter().position(|k| *k == key) {
            timings[i] = Some(value.and_then(duration::nanos));
        }
    }
    let [total, validation, queue, inference, per_token, tokenization] = timings;
    let embed = tokenization.is_some();
    let grammar = if embed { "tgi_embed" } else { "tgi_request" };
    let read = |t: Option<Option<u64>>| t.flatten().ok_or(grammar);
    if !well_formed {
        return Err(grammar);
    }
    if embed {
        Ok(TgiRecord::Embed(Embed {
            span,
            total_ns: read(total)?,
            tokenization_ns: read(tokenization)?,
            queue_ns: read(queue)?,
            inference_ns: read(inference)?,
        }))
    } else {
        Ok(TgiRecord::Request(Request {
            span,
            total_ns: read(total)?,
            validation_ns: read(validation)?,
            queue_ns: read(queue)?,
            inference_ns: read(inference)?,
            time_per_token_ns: read(per_token)?,
        }))
    }
}
