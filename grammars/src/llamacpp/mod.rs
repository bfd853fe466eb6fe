//! llama.cpp's `llama-server` (and the forks that embed it): the per-request timing summary,
//! speculative-decoding acceptance, progress lines and the slot busy/free lines, in four eras.
//!
//! - late 2023 (`examples/server/server.cpp`): `print_timings: prompt eval time = ...` text
//!   lines, `slot 0 is processing [task id: 0]`, `slot 0 released (N tokens in cache)`, beside
//!   JSON records for HTTP events;
//! - 2024 (to about Sep): `server_log()` records, JSON or `--log-format text` ([`server_log`]);
//! - about Oct 2024 to spring 2026 (`common/log.cpp`): one `slot print_timing: id  0 | task 0 | `
//!   header, then the timing lines with no head at all (they are the rest of one message);
//! - 2026 on: every line with the full `slot print_timing: id  N | task M | ` head.
//!
//! Heads ([`head`]): the router's `[port] `, the time since start and level, the slot or
//! server head. A block-era continuation line is read as a record of its own with no slot;
//! the agent gives it the slot of the header before it. The task id is read and dropped.
//! Values stay as printed: times in milliseconds, the acceptance rate a fraction.

pub mod head;
pub mod server_log;
pub mod timing;

use serde::Serialize;

use crate::{Outcome, Parsed};

pub use timing::{DraftAcceptance, Eval, Total};

/// Substrings at least one of which every line this module parses contains. `time = ` is in
/// every prompt-eval, eval and total line but 2024's padded `prompt eval time     =` (whose
/// record holds `id_slot` or `slot_id`), the acceptance lines have their own, and `slot` is in
/// every slot head, slot line and 2024 record (`id_slot`, `slot_id`, `update_slots`).
pub const ANCHORS: &[&str] = &["time = ", "acceptance = ", "acceptance rate = ", "slot"];

/// The first stage's pieces: the two this engine adds (see [`crate::PREFILTER`]). `e = `
/// covers the head-less lines (the block era's continuation lines, late 2023's
/// `print_timings:`), `slot` everything with a head. Both are four bytes on purpose: with a
/// three-byte piece (` / ` was tried) the searcher fingerprints every piece by three bytes
/// only, and a plain miss cost 2.5 times the instructions (5 times on prose with slashes);
/// with these two it costs 0.2% more. Left out: the block era's `   graphs reused = N`
/// continuation holds neither piece; no series needs it.
const FIRST_STAGE: &[&str] = &["e = ", "slot"];

/// llama-server in the dispatch's registry ([`crate::ENGINES`]).
pub static GRAMMAR: crate::EngineGrammar = crate::EngineGrammar {
    engine: "llamacpp",
    anchors: || ANCHORS.to_vec(),
    first_stage: || FIRST_STAGE.to_vec(),
    known_stage: &[],
    banner: &["slot"],
    grammar_names: &[
        "llamacpp_timing",
        "llamacpp_draft",
        "llamacpp_progress",
        "llamacpp_slot",
    ],
    read_message,
    read_foreign: Some(read_foreign),
};

/// Where a record was written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Origin {
    /// The slot (`id N` of a slot head, `id_slot` of a 2024 record). `None` on a block-era
    /// continuation line: it belongs to the slot of the `print_timing` header before it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slot: Option<u32>,
    /// The router child's port (`[42027] `), which names the model in router mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// The time since the server started (`M.SS.mmm.uuu`), in microseconds: for order only, it
    /// is no wall-clock time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uptime_us: Option<u64>,
}

/// The record [`crate::Record`] holds for this engine.
pub type EngineRecord<'a> = LlamacppRecord;

/// What one llama-server line says.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum LlamacppRecord {
    /// The block era's `slot print_timing: id  0 | task 0 | ` with nothing after it: the
    /// timing lines that follow (no head) are this slot's.
    TimingHeader {
        #[serde(flatten)]
        origin: Origin,
    },
    /// `prompt eval time = T ms / N tokens (...)`: prompt tokens computed (cache hits
    /// excluded) and the time they took.
    PromptEval(Eval),
    /// `eval time = T ms / N tokens (...)`: tokens generated and the time they took.
    Eval(Eval),
    /// `total time = T ms[ / N tokens]`.
    Total(Total),
    /// `graphs reused = N`: CUDA graphs the context reused, since the process started.
    GraphsReused {
        #[serde(flatten)]
        origin: Origin,
        graphs_reused: u64,
    },
    /// `draft acceptance[ rate] = r (a accepted / g generated)[, mean len = m]`, per task.
    DraftAcceptance(DraftAcceptance),
    /// `n_gen = N, tg = x t/s, tg_3s = y t/s`: a generating slot's progress.
    GenerationProgress {
        #[serde(flatten)]
        origin: Origin,
        generated: u64,
        tokens_per_second: f64,
        /// The rate over the last window (`tg_3s`, `tg(last 5s)`), when printed.
        #[serde(skip_serializing_if = "Option::is_none")]
        recent_tokens_per_second: Option<f64>,
    },
    /// `prompt processing, n_tokens = N, progress = p, t = s s / r tokens per second`.
    PromptProgress {
        #[serde(flatten)]
        origin: Origin,
        tokens: u64,
        /// A fraction.
        progress: f64,
        elapsed_s: f64,
        tokens_per_second: f64,
    },
    /// A slot took a task (`processing task`, `slot 0 is processing [task id: 0]`, `slot is
    /// processing task`).
    SlotBusy {
        #[serde(flatten)]
        origin: Origin,
    },
    /// A slot finished its task (`stop processing: n_tokens = N, truncated = 0`, `slot 0
    /// released (N tokens in cache)`, `slot released`).
    SlotFree {
        #[serde(flatten)]
        origin: Origin,
        /// Tokens in the slot's cache when it was released (`n_tokens`, earlier `n_past`).
        #[serde(skip_serializing_if = "Option::is_none")]
        n_tokens: Option<u64>,
    },
    /// `all slots are idle`: no slot is busy.
    AllIdle {
        #[serde(flatten)]
        origin: Origin,
    },
}

impl LlamacppRecord {
    /// The `grammar` label for lines that produce this record.
    pub fn grammar(&self) -> &'static str {
        match self {
            LlamacppRecord::TimingHeader { .. }
            | LlamacppRecord::PromptEval(_)
            | LlamacppRecord::Eval(_)
            | LlamacppRecord::Total(_)
            | LlamacppRecord::GraphsReused { .. } => "llamacpp_timing",
            LlamacppRecord::DraftAcceptance(_) => "llamacpp_draft",
            LlamacppRecord::GenerationProgress { .. } | LlamacppRecord::PromptProgress { .. } => {
                "llamacpp_progress"
            }
            LlamacppRecord::SlotBusy { .. }
            | LlamacppRecord::SlotFree { .. }
            | LlamacppRecord::AllIdle { .. } => "llamacpp_slot",
        }
    }

    /// Where the record was written.
    pub fn origin(&self) -> Origin {
        match self {
            LlamacppRecord::PromptEval(e) | LlamacppRecord::Eval(e) => e.origin,
            LlamacppRecord::Total(t) => t.origin,
            LlamacppRecord::DraftAcceptance(d) => d.origin,
            LlamacppRecord::TimingHeader { origin }
            | LlamacppRecord::GraphsReused { origin, .. }
            | LlamacppRecord::GenerationProgress { origin, .. }
            | LlamacppRecord::PromptProgress { origin, .. }
            | LlamacppRecord::SlotBusy { origin }
            | LlamacppRecord::SlotFree { origin, .. }
            | LlamacppRecord::AllIdle { origin } => *origin,
        }
    }

    /// True when every value is one llama-server can print (see [`crate::domain`]): times and
    /// rates finite and not negative, no more accepted draft tokens than generated ones, a
    /// rate that is their quotient (as `%0.5f` prints it), progress at most whole.
    pub fn possible(&self) -> bool {
        use crate::domain::{fraction, magnitude, opt};
        match self {
            LlamacppRecord::PromptEval(e) | LlamacppRecord::Eval(e) => {
                magnitude(e.time_ms)
                    && opt(e.ms_per_token, magnitude)
                    && opt(e.tokens_per_second, magnitude)
            }
            LlamacppRecord::Total(t) => magnitude(t.time_ms),
            LlamacppRecord::DraftAcceptance(d) => {
                fraction(d.acceptance_rate)
                    && d.accepted <= d.generated
                    && (d.generated == 0
                        || (d.acceptance_rate - d.accepted as f64 / d.generated as f64).abs()
                            <= 0.5e-5 + 1e-12)
                    && opt(d.mean_len, magnitude)
            }
            LlamacppRecord::GenerationProgress {
                tokens_per_second,
                recent_tokens_per_second,
                ..
            } => magnitude(*tokens_per_second) && opt(*recent_tokens_per_second, magnitude),
            LlamacppRecord::PromptProgress {
                progress,
                elapsed_s,
                tokens_per_second,
                ..
            } => fraction(*progress) && magnitude(*elapsed_s) && magnitude(*tokens_per_second),
            LlamacppRecord::TimingHeader { .. }
            | LlamacppRecord::GraphsReused { .. }
            | LlamacppRecord::SlotBusy { .. }
            | LlamacppRecord::SlotFree { .. }
            | LlamacppRecord::AllIdle { .. } => true,
        }
    }
}

/// What reading a message gave: a record, or the engine's own record that did not read.
pub enum Read {
    Record(LlamacppRecord),
    Rejected(&'static str),
}

/// Reads a line that contains one of [`ANCHORS`].
pub fn read(line: &str) -> Outcome<'_> {
    read_message(line).0
}

/// [`read`], and where the message it read begins in `line` (after the log heads).
pub(crate) fn read_message(line: &str) -> (Outcome<'_>, usize) {
    let head = head::split(line);
    let message_at = line.len() - head.message.len();
    let origin = Origin {
        slot: None,
        port: head.port,
        uptime_us: head.uptime_us,
    };
    (outcome(message(head.message, origin)), message_at)
}

/// A server message behind a head no grammar knows ([`crate::foreign`]): only one with its own
/// `slot ` or `srv  ` head, since a bare `prompt eval time = ` is also how other programs
/// (`llama_perf_context_print: `) end their lines. Behind llama.cpp's own log heads, the message
/// is the one after them, which [`read_message`] did not read.
fn read_foreign<'a>(before: &'a str, text: &'a str) -> Outcome<'a> {
    if !(text.starts_with("slot ") || text.starts_with("srv ")) {
        return Outcome::Unmatched;
    }
    let known = head::split(before);
    if known.port.is_some() || known.uptime_us.is_some() {
        return Outcome::Unmatched;
    }
    outcome(message(text, Origin::default()))
}

/// What a message read to is to the dispatch.
fn outcome(read: Option<Read>) -> Outcome<'static> {
    match read {
        Some(Read::Record(record)) if record.possible() => Outcome::Parsed(Parsed {
            time: None,
            process: None,
            record: crate::Record::Llamacpp(record),
        }),
        Some(Read::Record(record)) => Outcome::Rejected {
            grammar: record.grammar(),
        },
        Some(Read::Rejected(grammar)) => Outcome::Rejected { grammar },
        None => Outcome::Unmatched,
    }
}

/// [`read`], for callers that need only the parsed lines.
pub fn parse(line: &str) -> Option<Parsed<'_>> {
    read(line).parsed()
}

/// The record a message (log heads removed) says; `None` when it is no llama-server record.
fn message(message: &str, origin: Origin) -> Option<Read> {
    // Continuation lines start with padding; pasted and indented lines with more.
    let message = message.trim();
    if let Some(slot) = head::slot_head(message) {
        let origin = Origin {
            slot: Some(slot.slot),
            ..origin
        };
        return slot_message(slot, origin);
    }
    if let Some((function, body)) = head::server_head(message) {
        return (function == "update_slots" && body.starts_with("all slots are idle"))
            .then_some(Read::Record(LlamacppRecord::AllIdle { origin }));
    }
    if message.starts_with('{') {
        return server_log::json(message, origin);
    }
    if let Some(body) = message.strip_prefix("print_timings:") {
        return timed(body, origin);
    }
    if let Some(rest) = message.strip_prefix("slot ") {
        return slot_2023(rest, origin);
    }
    if message.starts_with("all slots are idle") {
        return Some(Read::Record(LlamacppRecord::AllIdle { origin }));
    }
    if message
        .as_bytes()
        .first()
        .is_some_and(u8::is_ascii_uppercase)
        && message.contains(" [")
    {
        return server_log::text(message, origin);
    }
    // A block-era continuation line: a timing body with no head of its own.
    timed(message, origin)
}

/// A timing body: a record, rejected when it starts as one and does not read, else nothing.
fn timed(body: &str, origin: Origin) -> Option<Read> {
    let body = body.trim_start();
    if !timing::starts_as_timing(body) {
        return None;
    }
    Some(match timing::parse(body, origin) {
        Some(record) => Read::Record(record),
        None => Read::Rejected(claimed_grammar(body)),
    })
}

/// The grammar of a timing body that did not read, by how it starts.
fn claimed_grammar(body: &str) -> &'static str {
    if body.starts_with("draft acceptance") {
        "llamacpp_draft"
    } else if body.starts_with("n_gen")
        || body.starts_with("n_decoded")
        || body.starts_with("prompt processing")
    {
        "llamacpp_progress"
    } else {
        "llamacpp_timing"
    }
}

/// The body of a `slot ...: id N | task M | ` line.
fn slot_message(slot: head::SlotHead<'_>, origin: Origin) -> Option<Read> {
    let body = slot.body;
    match slot.function {
        "print_timing" if body.is_empty() => {
            Some(Read::Record(LlamacppRecord::TimingHeader { origin }))
        }
        "print_timing" => timed(body, origin),
        // `processing task` (2024 Oct on), `, is_child = 0` since the 2025 child tasks.
        "launch_slot_" => {
            let rest = body.strip_prefix("processing task")?;
            (rest.is_empty() || rest.starts_with(", is_child = "))
                .then_some(Read::Record(LlamacppRecord::SlotBusy { origin }))
        }
        // `stop processing: n_tokens = N, truncated = T` (`n_past` until late 2025).
        "release" => {
            let rest = body.strip_prefix("stop processing: ")?;
            Some(match stop_processing(rest) {
                Some(n_tokens) => Read::Record(LlamacppRecord::SlotFree {
                    origin,
                    n_tokens: Some(n_tokens),
                }),
                None => Read::Rejected("llamacpp_slot"),
            })
        }
        _ => None,
    }
}

/// `n_tokens = N, truncated = T`: N.
fn stop_processing(rest: &str) -> Option<u64> {
    use nom::{branch::alt, bytes::complete::tag, Parser};
    let (rest, (_, n_tokens, _, _)) = (
        alt((tag("n_tokens = "), tag("n_past = "))),
        crate::lex::number::uint,
        tag(", truncated = "),
        crate::lex::number::uint,
    )
        .parse(rest)
        .ok()?;
    rest.is_empty().then_some(n_tokens)
}

/// Late 2023's `slot %d is processing [task id: %d]` and `slot %d released (%d tokens in
/// cache)` (after `slot `).
fn slot_2023(rest: &str, origin: Origin) -> Option<Read> {
    use crate::lex::number::uint;
    use nom::{bytes::complete::tag, Parser};
    let (rest, slot) = uint(rest).ok()?;
    let origin = Origin {
        slot: Some(u32::try_from(slot).ok()?),
        ..origin
    };
    if let Some(task) = rest.strip_prefix(" is processing [task id: ") {
        let (after, _) = uint(task).ok()?;
        return (after == "]").then_some(Read::Record(LlamacppRecord::SlotBusy { origin }));
    }
    let released = rest.strip_prefix(" released (")?;
    let parsed: nom::IResult<&str, (u64, &str)> = (uint, tag(" tokens in cache)")).parse(released);
    Some(match parsed {
        Ok(("", (n_tokens, _))) => Read::Record(LlamacppRecord::SlotFree {
            origin,
            n_tokens: Some(n_tokens),
        }),
        _ => Read::Rejected("llamacpp_slot"),
    })
}
