//! The envelope stage for one batch of a log's lines, and the hand-over to the grammars: the
//! batch is searched for the log's anchors, the lines without one only counted; each line with
//! one is taken out of its envelope, dated in the log's zone, and its records applied
//! ([`super::records`]). (In an envelope every line is decoded first: see below.)

use std::borrow::Cow;
use std::cell::Cell;

use llmtail_grammars::{LogTime, Parsed};

use super::dating::Reading;
use super::followed::FollowedLog;
use super::records::{apply_records, cut, Batch, QUOTED_CHARS};
use super::zone_warning::warn_of_zone_offset;
use crate::envelope::{Decoded, Decoder};
use crate::source::Lines;
use crate::state::{LogState, UNRECOGNISED_AFTER_LINES};

/// Reads one batch of `log`'s lines into its state.
pub(super) fn ingest(
    lines: &mut Lines<'_>,
    log: &mut FollowedLog,
    log_state: &mut LogState,
    batch: &mut Batch<'_>,
) {
    let now = batch.dating.now;
    // The log's first stage as it is after the last line read: a record may change it (the
    // splitter searches afresh after each line it hits, the only lines that can).
    let first_stage = Cell::new(log.anchors);
    let search = |raw: &[u8]| first_stage.get().first_anchor(raw);
    let searched = log.decoder.is_plain();
    let anchors: &dyn Fn(&[u8]) -> Option<usize> = if searched { &search } else { &every_line };
    let mut passed = 0;
    while let Some((raw, hit)) = lines.next_hit(anchors, &mut passed) {
        log_state.io.lines_read += 1;
        let Some((text, envelope_time)) = decode(&mut log.decoder, raw, log_state) else {
            continue;
        };
        // Where the first stage matched, if the text is the raw line's own bytes (no colour
        // codes taken out), so the grammars need not search it again.
        let first_anchor =
            (searched && text.as_ptr() == raw.as_ptr() && hit < text.len()).then_some(hit);
        let zone = &log.zone;
        let time = |parsed: &Parsed<'_>, previous: Option<f64>| {
            // Per record, in this log's zone: a syslog log read across New Year changes
            // year between two lines. The envelope's time wins over the head's.
            let resolve = |t: LogTime| zone.resolve_in_order(&t, now, previous);
            envelope_time
                .and_then(resolve)
                .or_else(|| parsed.time.and_then(resolve))
        };
        if !apply_records(
            &text,
            first_anchor,
            &mut log.anchors,
            time,
            batch,
            log_state,
        ) {
            log_state.io.lines_unmatched += 1;
        }
        first_stage.set(log.anchors);
    }
    // A line passed over holds no anchor: read, and no engine's.
    log_state.io.lines_read += passed;
    log_state.io.lines_unmatched += passed;
    warn_of_zone_offset(log_state, log, now);
    if batch.dating.reading == Reading::Following {
        warn_if_nothing_recognised(log_state);
    }
}

/// Says once, when a followed log passes [`UNRECOGNISED_AFTER_LINES`] lines with none an
/// engine's, that it may not be a log llmtail reads: otherwise only a counter says so. (A
/// whole log read at once is judged when it is read: [`crate::run::one_shot`].)
fn warn_if_nothing_recognised(log_state: &mut LogState) {
    if !log_state.told_nothing_recognised
        && log_state.nothing_recognised_in(UNRECOGNISED_AFTER_LINES)
    {
        log_state.told_nothing_recognised = true;
        tracing::warn!("{}", log_state.nothing_recognised_warning());
    }
}

// How a batch's lines are judged before they are decoded: nine lines in ten hold no anchor, so
// in a plain-text log they are judged on their raw bytes, with one search of the log's first
// stage over the whole batch, before UTF-8 validation and parsing. Lossy UTF-8 decoding only
// replaces bytes that are not ASCII and the anchors are ASCII, so a line without a match there
// yields nothing once decoded either. ANSI colour codes need no stripping first: engines colour
// the record head (process, level, date, file), never the message text the anchors are taken
// from (looking for ESC in every line first cost a tenth of a one-shot run). In an envelope the
// message is escaped, so every line is decoded first.

/// Flags every line as one to decode.
fn every_line(_: &[u8]) -> Option<usize> {
    Some(0)
}

/// Takes the envelope off a raw line: the engine's message and the envelope's time for it, or
/// `None` for the first part of a split line (held until its last part comes). A line outside
/// the detected envelope is read as plain text, and counted.
fn decode<'a>(
    decoder: &'a mut Decoder,
    raw: &'a [u8],
    log_state: &mut LogState,
) -> Option<(Cow<'a, str>, Option<LogTime>)> {
    // Before decoding, which borrows the decoder: a line is outside an envelope only once one
    // was detected, so this is the envelope it was measured against.
    let envelope = decoder.kind();
    match decoder.decode(raw) {
        Decoded::Message { text, time } => Some((text, time)),
        Decoded::Partial => None,
        Decoded::Outside { text } => {
            // Counted under its old name (`invalid_envelope`): the series is kept.
            log_state.io.skipped_invalid_envelope += 1;
            let outside = log_state.io.skipped_invalid_envelope;
            if outside.is_power_of_two() {
                tracing::info!(
                    log = %log_state.label,
                    envelope = envelope.as_str(),
                    outside_so_far = outside,
                    line = cut(&text, QUOTED_CHARS),
                    "a line is not in this log's envelope; read as plain text (see --envelope)"
                );
            }
            Some((text, None))
        }
    }
}
