//! What happened to a followed file, counted in its log's state: opened, gone, rotated,
//! truncated, bytes skipped, how far it was read. These are the agent's own per-log series.

use crate::source::{SkipReason, TailEvent};
use crate::state::{CannotOpen, LogState};

/// Counts `event` (at agent time `now`) in the state of the file's log.
pub(super) fn count(log_state: &mut LogState, event: TailEvent, now: f64) {
    let io = &mut log_state.io;
    match event {
        TailEvent::Discovered { .. } => {}
        TailEvent::Opened(_) => {
            io.open = true;
            log_state.cannot_open = None;
            log_state.gone_since = None;
            log_state.expired = false;
        }
        TailEvent::Gone => log_state.gone_since = Some(now),
        TailEvent::Closed => io.open = false,
        TailEvent::Rotated => io.rotations += 1,
        TailEvent::Truncated => io.truncations += 1,
        TailEvent::OpenFailed(error) => {
            io.open_errors += 1;
            log_state.cannot_open = Some(CannotOpen::failed(&error));
        }
        TailEvent::Missing => log_state.cannot_open = Some(CannotOpen::missing()),
        TailEvent::Skipped(reason) => count_skip(log_state, reason),
        TailEvent::Offset(offset) => io.offset = offset,
    }
}

/// Counts bytes that did not become a line; the 1st, 2nd, 4th, 8th... skip of a log is logged.
fn count_skip(log_state: &mut LogState, reason: SkipReason) {
    let io = &mut log_state.io;
    io.count_skip(reason);
    let total = io.skipped_too_long + io.skipped_truncated_partial;
    if total.is_power_of_two() {
        let why = match reason {
            SkipReason::TooLong => "a line longer than --max-line-bytes was skipped",
            SkipReason::TruncatedPartial => {
                "an unterminated line was dropped (file truncated, rotated away or closed)"
            }
        };
        tracing::warn!(log = %log_state.label, skipped_so_far = total, "{why}");
    }
}
