//! The grammar and state stages for one message: each record the grammars find in it is dated,
//! checked against the log's recent records, and applied to its engine's state; a record a
//! grammar rejected is counted and quoted.

use llmtail_grammars::{LogAnchors, Outcome, Parsed};

use super::dating::Dating;
use super::observer::{Applied, RecordObserver};
use crate::state::{LogState, StateSettings};
use crate::timezone::Resolved;

/// How much of a rejected line a warning quotes.
pub(super) const QUOTED_CHARS: usize = 200;

/// What every record of one batch is applied with, besides its log's state.
pub(super) struct Batch<'a> {
    pub dating: Dating,
    pub settings: &'a StateSettings,
    /// The series every log's engines cost, against `--max-series`.
    pub series: &'a mut usize,
    pub observer: Option<&'a mut (dyn RecordObserver + 'static)>,
}

/// Applies every record of one message to its log's state (`first_anchor`: where the log's
/// first stage first matches in it, when the reader knows); `raw_time` says when its line says
/// a record was written (given the log's previous time), the batch's dating turns that into the
/// time it is applied at. A line can hold several records (glued by two writers, a `/metrics`
/// dump): each is counted in `lines_parsed`/`lines_rejected`, while `lines_read` and
/// `lines_unmatched` stay counts of physical lines. A record that repeats a recent one
/// ([`crate::state::repeats`]) is counted as such and not applied. Returns whether the line held
/// any record.
pub(super) fn apply_records(
    text: &str,
    first_anchor: Option<usize>,
    anchors: &mut LogAnchors,
    raw_time: impl Fn(&Parsed<'_>, Option<f64>) -> Option<Resolved>,
    batch: &mut Batch<'_>,
    log_state: &mut LogState,
) -> bool {
    let mut any_record = false;
    let mut ordinal = 0u32;
    anchors.each_record_anchored(text, first_anchor, |outcome| match outcome {
        Outcome::Parsed(parsed) => {
            any_record = true;
            ordinal += 1;
            let raw = raw_time(parsed, log_state.latest_line_at);
            apply_parsed(parsed, raw, ordinal, text, batch, log_state);
        }
        Outcome::Rejected { grammar } => {
            any_record = true;
            reject(log_state, grammar, text);
        }
        Outcome::Unmatched => {}
    });
    any_record
}

/// Dates one parsed record (the `ordinal`th of `text`) and applies it, unless it repeats a
/// recent one; tells the observer of what its engine took.
fn apply_parsed(
    parsed: &Parsed<'_>,
    raw: Option<Resolved>,
    ordinal: u32,
    text: &str,
    batch: &mut Batch<'_>,
    log_state: &mut LogState,
) {
    if raw.is_some_and(|r| r.second_pass) {
        log_state.dst_second_pass += 1;
    }
    let line_time = batch.dating.date(raw.map(|r| r.at), log_state);
    let grammar = parsed.record.grammar();
    if log_state
        .recent
        .is_repeat(grammar, ordinal, line_time, text)
    {
        log_state.count_repeat(grammar);
        return;
    }
    let (now, settings) = (batch.dating.now, batch.settings);
    let engine = log_state.apply(parsed, line_time, now, settings, batch.series);
    if let Some(observer) = batch.observer.as_deref_mut() {
        let unit = log_state.engines.record_unit(parsed);
        let applied = Applied {
            engine,
            unit,
            line_time,
        };
        observer.applied(log_state, applied, settings);
    }
}

/// `text` cut after `chars` characters (on a character boundary).
pub(super) fn cut(text: &str, chars: usize) -> &str {
    text.char_indices()
        .nth(chars)
        .map_or(text, |(at, _)| &text[..at])
}

/// Counts a record `grammar` rejected in `line`. The 1st, 2nd, 4th, 8th... of a log is logged,
/// as skips are: a changed engine format rejects every stats line.
fn reject(log_state: &mut LogState, grammar: &'static str, line: &str) {
    let rejected = log_state.reject(grammar);
    if rejected.is_power_of_two() {
        tracing::warn!(
            log = %log_state.label,
            grammar,
            rejected_so_far = rejected,
            line = cut(line, QUOTED_CHARS),
            "a line looks like the engine's record but was rejected (cut off, a changed format, or an impossible value)"
        );
    }
}
