//! What the agent says when a log's times stand a whole number of quarter hours from its own
//! clock: the engine writes them in another zone than they are read in.

use super::followed::FollowedLog;
use crate::state::LogState;
use crate::timezone::zone_explaining;

/// Warns once per log when its times read a whole number of quarter hours (at least half an
/// hour) from the agent's clock.
pub(super) fn warn_of_zone_offset(log_state: &mut LogState, log: &FollowedLog, now: f64) {
    let Some(offset) = log_state.clock.zone_offset_to_warn() else {
        return;
    };
    let writer_zone = zone_explaining(offset, log.zone.zone(), now);
    tracing::warn!(
        log = %log_state.label,
        offset_seconds = offset,
        read_in = %log.zone_name,
        "{}",
        zone_offset_advice(offset, &log.zone_name, &writer_zone)
    );
}

/// What the agent says of a log whose times read `offset` seconds from its clock: the offset,
/// the zone that would explain it, and the fix.
pub fn zone_offset_advice(offset: f64, read_in: &str, writer_zone: &str) -> String {
    let direction = if offset < 0.0 { "behind" } else { "ahead of" };
    let hours = offset.abs() / 3600.0;
    let fix = if writer_zone.starts_with("UTC+") || writer_zone.starts_with("UTC-") {
        "--log-timezone auto (or the timezone of that [[log]] entry) to learn it".to_string()
    } else {
        format!("--log-timezone {writer_zone} (or --log-timezone auto)")
    };
    format!(
        "the log's times read {hours:.2} h {direction} the agent's clock: its engine most likely \
         writes them in {writer_zone}, while they are read in {read_in}; liveness is judged on the \
         agent's clock regardless, but the history's times are off by that much\n  fix: {fix}"
    )
}
