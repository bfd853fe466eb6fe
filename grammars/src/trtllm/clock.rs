//! The timestamps TensorRT-LLM and Triton print, each in its own shape.
//!
//! - Triton glog head: `I0510 07:57:30.770724` (level letter, month, day; no year);
//! - Triton `--log-format ISO8601` head: `2024-05-10T07:57:30Z`;
//! - Python logger: `[04/28/2025-09:56:44]` (the brackets are the caller's);
//! - C++ logger (2025-26 source variant) and the IterationStats `timestamp` value:
//!   `05-10-2024 07:57:30[.972719]` (month-day-year);
//! - the PyTorch iteration line's `timestamp = 2025-04-28 09:56:44` (year first).
//!
//! Triton's two heads are UTC: its logger formats them with `gmtime_r` (triton-inference-server
//! `common/src/logging.cc`), whatever the host's zone, so they carry a zero offset. The others
//! are the writer's local time (Python's `logging` converts with `time.localtime`; TRT-LLM's
//! `getCurrentTimestamp`, the IterationStats `timestamp`, with `std::localtime`): like
//! [`crate::lex::time`], we keep what was printed and leave their zone to the agent. Each function
//! returns the time and the rest of the input, or `None`.
//!
//! The small readers (`digits`, `byte`, `fraction`, `clock`, `build`) and the two whole-date
//! shapes other engines print too ([`iso`], [`year_first`]) are [`crate::lex::time`]'s.

use crate::lex::time::{build, byte, clock, digits, fraction};
pub use crate::lex::time::{iso_zulu as iso, year_first};
use crate::LogTime;

/// Triton's heads: its logger always prints UTC.
const TRITON_UTC: Option<i32> = Some(0);
/// Everything else: the writer's local time.
const LOCAL: Option<i32> = None;

/// Triton's glog head time after the level letter: `0510 07:57:30.770724` (UTC).
pub fn glog(s: &str) -> Option<(LogTime, &str)> {
    let (month, s) = digits(s, 2)?;
    let (day, s) = digits(s, 2)?;
    let (hms, s) = clock(byte(s, b' ')?)?;
    let (nanos, s) = fraction(s);
    Some((build(None, month, day, hms, nanos, TRITON_UTC)?, s))
}

/// The Python logger's `MM/DD/YYYY-HH:MM:SS`.
pub fn slashed(s: &str) -> Option<(LogTime, &str)> {
    let (month, s) = digits(s, 2)?;
    let (day, s) = digits(byte(s, b'/')?, 2)?;
    let (year, s) = digits(byte(s, b'/')?, 4)?;
    let (hms, s) = clock(byte(s, b'-')?)?;
    Some((build(Some(year), month, day, hms, 0, LOCAL)?, s))
}

/// `MM-DD-YYYY HH:MM:SS[.ffffff]` (IterationStats `timestamp`, the 2025-26 C++ logger).
pub fn month_first(s: &str) -> Option<(LogTime, &str)> {
    let (month, s) = digits(s, 2)?;
    let (day, s) = digits(byte(s, b'-')?, 2)?;
    let (year, s) = digits(byte(s, b'-')?, 4)?;
    let (hms, s) = clock(byte(s, b' ')?)?;
    let (nanos, s) = fraction(s);
    Some((build(Some(year), month, day, hms, nanos, LOCAL)?, s))
}

/// A whole timestamp value in either date order, nothing after it.
pub fn stats_timestamp(s: &str) -> Option<LogTime> {
    let s = s.trim();
    match month_first(s).or_else(|| year_first(s)) {
        Some((time, "")) => Some(time),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_shape() {
        assert_eq!(
            glog("0510 07:57:30.770724 21661").unwrap().0.to_string(),
            "05-10 07:57:30.770724 UTC"
        );
        assert_eq!(
            iso("2024-05-10T07:57:30Z I").unwrap().0.to_string(),
            "2024-05-10 07:57:30 UTC"
        );
        assert_eq!(
            slashed("04/28/2025-09:56:44]").unwrap().0.to_string(),
            "2025-04-28 09:56:44"
        );
        assert_eq!(
            stats_timestamp("01-23-2025 04:45:44.972719")
                .unwrap()
                .to_string(),
            "2025-01-23 04:45:44.972719"
        );
        assert_eq!(
            stats_timestamp("2025-04-28 09:56:44").unwrap().to_string(),
            "2025-04-28 09:56:44"
        );
    }

    #[test]
    fn rejects_what_is_not_a_time() {
        assert!(glog("1318 07:57:30.1").is_none());
        assert!(stats_timestamp("05-10-2024 07:57").is_none());
        assert!(stats_timestamp("05-10-2024 07:57:30 trailing").is_none());
        assert!(month_first("ab-cd-efgh").is_none());
        assert!(glog("").is_none());
    }
}
