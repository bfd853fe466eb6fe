//! SGLang: the scheduler's `Decode batch` / `Prefill batch` lines in every era (0.1.14 to
//! 0.5.23), its retraction warnings and its startup capacity line.
//!
//! A line is a record head ([`head`]: `[date time{.ms} DPn TPn ...] `, `[HH:MM:SS TPn] `, or
//! none before 0.2.14, with Ray's and compose's prefixes in front) and a message; the message's
//! start says which record it is ([`batch`], [`startup`]). A line whose message does not start a
//! record (a request log quoting one, a traceback) is not SGLang's; one that starts a record and
//! does not parse, or carries an impossible value, is rejected whole.

pub mod batch;
pub mod head;
pub mod startup;

use serde::Serialize;

use crate::{Outcome, Parsed};

pub use batch::{Graph, SglangDecode, SglangPrefill, TokenUsage};
pub use head::Ranks;
pub use startup::{SglangCapacity, SglangRetract};

/// Substrings at least one of which every line this module parses contains: the queue field
/// every decode and prefill line has printed since 0.1.14 (and `#running-req: ` of the mixed
/// prefill label), `#new_token` of 0.1.14's `new fill batch` line (`#new_token: `) and of every
/// retraction line (`#new_token_ratio: `, since 0.1.x), and the capacity line's first key.
pub const ANCHORS: &[&str] = &["-req: ", "#new_token", "max_total_num_tokens="];

/// SGLang in the dispatch's registry ([`crate::ENGINES`]).
pub static GRAMMAR: crate::EngineGrammar = crate::EngineGrammar {
    engine: "sglang",
    anchors: || ANCHORS.to_vec(),
    first_stage: || FIRST_STAGE.to_vec(),
    known_stage: &[],
    banner: &["l_num_tokens="],
    grammar_names: &[
        "sglang_decode",
        "sglang_prefill",
        "sglang_retract",
        "sglang_capacity",
    ],
    read_message,
    read_foreign: Some(read_foreign),
};

/// The first stage's pieces of [`ANCHORS`] (see [`crate::PREFILTER`]), three new ones:
/// `-req: ` is in every decode and prefill line since 0.1.20 (`#running-req: `, `#queue-req: `)
/// and in 0.1.14's decode line; `#new_token` in 0.1.14's prefill line and every retraction line;
/// `l_num_tokens=` in the capacity line. Each starts with bytes rare in prose and in the request
/// lines vLLM writes (`_req`, in every `lora_request`, cost the one-shot benchmark 31%), and each
/// is four bytes or longer (a three-byte piece made Teddy fingerprint every piece by three bytes).
const FIRST_STAGE: &[&str] = &["-req: ", "#new_token", "l_num_tokens="];

/// The record [`crate::Record`] holds for this engine.
pub type EngineRecord<'a> = SglangRecord<'a>;

/// What one SGLang line says.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum SglangRecord<'a> {
    Decode {
        #[serde(flatten)]
        ranks: Ranks,
        #[serde(flatten)]
        stats: SglangDecode<'a>,
    },
    Prefill {
        #[serde(flatten)]
        ranks: Ranks,
        #[serde(flatten)]
        stats: SglangPrefill<'a>,
    },
    Retract {
        #[serde(flatten)]
        ranks: Ranks,
        #[serde(flatten)]
        retract: SglangRetract,
    },
    Capacity {
        #[serde(flatten)]
        ranks: Ranks,
        #[serde(flatten)]
        capacity: SglangCapacity,
    },
}

impl SglangRecord<'_> {
    /// The `grammar` label for lines that produce this record.
    pub fn grammar(&self) -> &'static str {
        match self {
            SglangRecord::Decode { .. } => "sglang_decode",
            SglangRecord::Prefill { .. } => "sglang_prefill",
            SglangRecord::Retract { .. } => "sglang_retract",
            SglangRecord::Capacity { .. } => "sglang_capacity",
        }
    }

    /// The head's rank tags.
    pub fn ranks(&self) -> &Ranks {
        match self {
            SglangRecord::Decode { ranks, .. }
            | SglangRecord::Prefill { ranks, .. }
            | SglangRecord::Retract { ranks, .. }
            | SglangRecord::Capacity { ranks, .. } => ranks,
        }
    }

    /// True when every value is one SGLang can print (see [`crate::domain`]): usages and the
    /// acceptance rate are fractions, the cache hit rate a percentage, rates finite and `>= 0`.
    pub fn possible(&self) -> bool {
        use crate::domain::{fraction, magnitude, opt, percent};
        match self {
            SglangRecord::Decode { stats: d, .. } => {
                d.usage.possible()
                    && opt(d.gen_throughput, magnitude)
                    && opt(d.accept_len, magnitude)
                    && opt(d.accept_rate, fraction)
                    && opt(d.pre_allocated_usage, fraction)
            }
            SglangRecord::Prefill { stats: p, .. } => {
                p.usage.possible()
                    && opt(p.cache_hit_rate_percent, percent)
                    && opt(p.input_throughput, magnitude)
            }
            SglangRecord::Retract { retract: r, .. } => {
                magnitude(r.new_token_ratio_before) && magnitude(r.new_token_ratio_after)
            }
            SglangRecord::Capacity { capacity: c, .. } => c.max_total_num_tokens > 0,
        }
    }
}

/// Reads a line that contains one of [`ANCHORS`].
pub fn read(line: &str) -> Outcome<'_> {
    read_message(line).0
}

/// The record a message holds: `Err(grammar)` when it starts one that does not parse, `Ok(None)`
/// when it starts none.
fn record<'a>(ranks: Ranks, message: &'a str) -> Result<Option<SglangRecord<'a>>, &'static str> {
    use batch::Label;
    if let Some(label) = batch::label(message) {
        return match label {
            Label::Decode { iteration, body } => batch::decode(iteration, body)
                .map(|stats| Some(SglangRecord::Decode { ranks, stats }))
                .ok_or("sglang_decode"),
            Label::Prefill {
                iteration,
                mixed_running,
                body,
            } => batch::prefill(iteration, mixed_running, body)
                .map(|stats| Some(SglangRecord::Prefill { ranks, stats }))
                .ok_or("sglang_prefill"),
            Label::NewFill(body) => batch::new_fill(body)
                .map(|stats| Some(SglangRecord::Prefill { ranks, stats }))
                .ok_or("sglang_prefill"),
            Label::Broken(grammar) => Err(grammar),
        };
    }
    if let Some(body) = startup::retract_body(message) {
        return startup::retract(body)
            .map(|retract| Some(SglangRecord::Retract { ranks, retract }))
            .ok_or("sglang_retract");
    }
    if startup::is_capacity(message) {
        return startup::capacity(message)
            .map(|capacity| Some(SglangRecord::Capacity { ranks, capacity }))
            .ok_or("sglang_capacity");
    }
    Ok(None)
}

/// [`read`], and where the message it read begins in `line` (after the head; the end of the
/// line when it read none).
pub(crate) fn read_message(line: &str) -> (Outcome<'_>, usize) {
    let head = head::split(line);
    match outcome(head.ranks, head.time, head.message) {
        Outcome::Unmatched => (Outcome::Unmatched, line.len()),
        outcome => (outcome, line.len() - head.message.len()),
    }
}

/// A message behind a head no grammar knows ([`crate::foreign`]): no rank tags, and the time
/// the dispatch takes from that head. Behind SGLang's own bracket, the message is the one after
/// it, which [`read_message`] found no record in.
fn read_foreign<'a>(before: &'a str, message: &'a str) -> Outcome<'a> {
    if head::split(before).time.is_some() {
        return Outcome::Unmatched;
    }
    outcome(Ranks::default(), None, message)
}

/// What the record a message holds (see [`record`]) is to the dispatch.
fn outcome<'a>(ranks: Ranks, time: Option<crate::LogTime>, message: &'a str) -> Outcome<'a> {
    match record(ranks, message) {
        Ok(Some(record)) if record.possible() => Outcome::Parsed(Parsed {
            time,
            process: None,
            record: crate::Record::Sglang(record),
        }),
        Ok(Some(record)) => Outcome::Rejected {
            grammar: record.grammar(),
        },
        Err(grammar) => Outcome::Rejected { grammar },
        Ok(None) => Outcome::Unmatched,
    }
}

/// [`read`], for callers that need only the parsed lines.
pub fn parse(line: &str) -> Option<Parsed<'_>> {
    read(line).parsed()
}
