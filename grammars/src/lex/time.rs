//! Timestamps as record heads print them.
//!
//! Engines rarely print a year (vLLM: `11-22 13:25:01`; Triton's glog: `I1122 13:25:01.123456`),
//! and hardly ever a zone. A grammar keeps exactly what the line says, plus the zone when the
//! format fixes one (Triton's logger always writes UTC); the agent supplies the year and the
//! log's zone for the rest, because only it knows the clock and the host. No calendar here:
//! the agent's `timezone` module turns a `LogTime` into an instant.
//!
//! Some heads print only the clock (SGLang's `[03:51:54] `, a custom logging format's
//! `%H:%M:%S`): such a time has no date at all, and the agent reads it on the day the line
//! arrived, in the log's zone ([`LogTime::time_only`]).
//!
//! The small readers below (`digits`, `byte`, `fraction`, `clock`, `build`, `utc_offset`) are
//! what every engine's head, and the agent's envelopes, read their times with: one copy of the
//! calendar checks. [`iso_zulu`] and [`year_first`] are the whole-date shapes several engines print. [`first_stamp`] finds a
//! time in a head no grammar knows.

use serde::{Serialize, Serializer};

/// A wall-clock time as a record head (or an envelope) prints it. `year` is `None` when the
/// line has none; `month` and `day` are 0 when it printed only the clock
/// ([`LogTime::time_only`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LogTime {
    pub year: Option<u16>,
    pub month: u8,
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub nanos: u32,
    /// Seconds east of UTC when the format fixes the zone: printed (`Z`, `+09:00`) or by the
    /// writer's convention (Triton's logger formats with `gmtime_r`). `None` is the writer's
    /// local time, which the agent reads in the log's zone (`--log-timezone`).
    pub utc_offset: Option<i32>,
}

impl LogTime {
    /// A time whose head printed only the clock (`03:51:54`): no year, month 0, day 0. The agent
    /// reads it on the date the line arrived, in the log's zone.
    pub fn time_only(hour: u8, minute: u8, second: u8, nanos: u32) -> LogTime {
        LogTime {
            year: None,
            month: 0,
            day: 0,
            hour,
            minute,
            second,
            nanos,
            utc_offset: None,
        }
    }

    /// True for a time made by [`LogTime::time_only`]: the line printed no date.
    pub fn is_time_only(&self) -> bool {
        self.year.is_none() && self.month == 0 && self.day == 0
    }

    /// Whether month, day and clock are in range (a second of 60 is a leap second): what every
    /// record-head grammar checks before it calls digits a time.
    pub fn is_valid_clock(month: u32, day: u32, hour: u32, minute: u32, second: u32) -> bool {
        (1..=12).contains(&month)
            && (1..=31).contains(&day)
            && hour < 24
            && minute < 60
            && second < 61
    }
}

/// Case files compare times as text: `11-22 13:25:01`, `2025-04-28 09:56:44`,
/// `05-10 07:57:30.770724 UTC`, `2026-11-22 14:25:01 +01:00`, and only the clock for a time
/// without a date: `03:51:54`.
impl Serialize for LogTime {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl std::fmt::Display for LogTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(year) = self.year {
            write!(f, "{year:04}-")?;
        }
        if !self.is_time_only() {
            write!(f, "{:02}-{:02} ", self.month, self.day)?;
        }
        write!(f, "{:02}:{:02}:{:02}", self.hour, self.minute, self.second)?;
        if self.nanos != 0 {
            let frac = format!("{:09}", self.nanos);
            write!(f, ".{}", frac.trim_end_matches('0'))?;
        }
        match self.utc_offset {
            None => Ok(()),
            Some(0) => write!(f, " UTC"),
            Some(offset) => {
                let sign = if offset < 0 { '-' } else { '+' };
                let minutes = offset.unsigned_abs() / 60;
                write!(f, " {sign}{:02}:{:02}", minutes / 60, minutes % 60)
            }
        }
    }
}

/// Exactly `n` ASCII digits at the start of `s`.
pub fn digits(s: &str, n: usize) -> Option<(u32, &str)> {
    let head = s.get(..n)?;
    if !head.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((head.parse().ok()?, &s[n..]))
}

pub fn byte(s: &str, b: u8) -> Option<&str> {
    if s.as_bytes().first() == Some(&b) {
        Some(&s[1..])
    } else {
        None
    }
}

/// `.ffffff` (1 to 9 digits) as nanoseconds, or nothing.
pub fn fraction(s: &str) -> (u32, &str) {
    fraction_after(s, b'.')
}

/// A fraction after `separator` (`.`, or the `,` of Python's `asctime`), 1 to 9 digits, as
/// nanoseconds; or nothing.
pub fn fraction_after(s: &str, separator: u8) -> (u32, &str) {
    let Some(rest) = byte(s, separator) else {
        return (0, s);
    };
    let n = rest.bytes().take_while(u8::is_ascii_digit).count();
    if n == 0 || n > 9 {
        return (0, s);
    }
    let value: u32 = rest[..n].parse().unwrap_or(0);
    (value * 10u32.pow((9 - n) as u32), &rest[n..])
}

/// `HH:MM:SS`.
pub fn clock(s: &str) -> Option<((u8, u8, u8), &str)> {
    let (h, s) = digits(s, 2)?;
    let (m, s) = digits(byte(s, b':')?, 2)?;
    let (sec, s) = digits(byte(s, b':')?, 2)?;
    Some(((h as u8, m as u8, sec as u8), s))
}

pub fn build(
    year: Option<u32>,
    month: u32,
    day: u32,
    (hour, minute, second): (u8, u8, u8),
    nanos: u32,
    utc_offset: Option<i32>,
) -> Option<LogTime> {
    let valid = LogTime::is_valid_clock(month, day, hour.into(), minute.into(), second.into());
    if !valid {
        return None;
    }
    let year = match year {
        Some(y) => Some(u16::try_from(y).ok()?),
        None => None,
    };
    Some(LogTime {
        year,
        month: month as u8,
        day: day as u8,
        hour,
        minute,
        second,
        nanos,
        utc_offset,
    })
}

/// `Z`, `+09:00`, `-0330` right after a time, as seconds east of UTC; hours past 23 and
/// minutes past 59 are no offset.
pub fn utc_offset(s: &str) -> Option<(i32, &str)> {
    let ((sign, hours, minutes), rest) = offset_fields(s)?;
    (hours < 24 && minutes < 60).then(|| (sign * (hours * 3600 + minutes * 60) as i32, rest))
}

/// `Z`, `+09:00` or `-0330` as its sign (`Z` is `+`), hours and minutes, unchecked: for
/// [`utc_offset`], and for a reader that judges the range itself.
pub fn offset_fields(s: &str) -> Option<((i32, u32, u32), &str)> {
    if let Some(rest) = byte(s, b'Z') {
        return Some(((1, 0, 0), rest));
    }
    let sign = match s.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let (hours, rest) = digits(&s[1..], 2)?;
    let rest = byte(rest, b':').unwrap_or(rest);
    let (minutes, rest) = digits(rest, 2)?;
    Some(((sign, hours, minutes), rest))
}

/// `YYYY-MM-DDTHH:MM:SS[.f]Z`: RFC 3339 in UTC, as Triton's `--log-format ISO8601` head and
/// TGI's tracing print it.
pub fn iso_zulu(s: &str) -> Option<(LogTime, &str)> {
    let (year, s) = digits(s, 4)?;
    let (month, s) = digits(byte(s, b'-')?, 2)?;
    let (day, s) = digits(byte(s, b'-')?, 2)?;
    let (hms, s) = clock(byte(s, b'T')?)?;
    let (nanos, s) = fraction(s);
    let s = byte(s, b'Z')?;
    Some((build(Some(year), month, day, hms, nanos, Some(0))?, s))
}

/// `YYYY-MM-DD HH:MM:SS[.ffffff]` without a zone: the writer's local time (TensorRT-LLM's
/// PyTorch iteration line; the stamp Docker Desktop puts in front of a saved container log).
pub fn year_first(s: &str) -> Option<(LogTime, &str)> {
    let (year, s) = digits(s, 4)?;
    let (month, s) = digits(byte(s, b'-')?, 2)?;
    let (day, s) = digits(byte(s, b'-')?, 2)?;
    let (hms, s) = clock(byte(s, b' ')?)?;
    let (nanos, s) = fraction(s);
    Some((build(Some(year), month, day, hms, nanos, None)?, s))
}

/// The time of a head no grammar knows: the first stamp in `head` that reads as one of
///
/// - ISO 8601 `YYYY-MM-DD`, `T` or a space, `HH:MM:SS`, a fraction after `.` or `,` (Python's
///   `asctime` writes `,796`), and an offset (`Z`, `+09:00`, `+0900`) when printed;
/// - `MM-DD HH:MM:SS[.fff]` (vLLM's own date format, kept by formats that copy it);
/// - `HH:MM:SS[.fff]`, a time of day alone ([`LogTime::time_only`]).
///
/// A stamp starts where a number starts (not inside one: `pid=14521` holds no `14:52`) and ends
/// where no digit follows, so a version or an address is no time.
pub fn first_stamp(head: &str) -> Option<LogTime> {
    let bytes = head.as_bytes();
    (0..bytes.len())
        .filter(|&at| bytes[at].is_ascii_digit() && (at == 0 || !bytes[at - 1].is_ascii_digit()))
        .find_map(|at| stamp(&head[at..]))
}

/// One stamp of [`first_stamp`]'s shapes at the start of `s`.
fn stamp(s: &str) -> Option<LogTime> {
    let (time, rest) = iso_stamp(s)
        .or_else(|| month_day_stamp(s))
        .or_else(|| clock_stamp(s))?;
    let ends = !rest.as_bytes().first().is_some_and(u8::is_ascii_digit);
    ends.then_some(time)
}

fn iso_stamp(s: &str) -> Option<(LogTime, &str)> {
    let (year, s) = digits(s, 4)?;
    let (month, s) = digits(byte(s, b'-')?, 2)?;
    let (day, s) = digits(byte(s, b'-')?, 2)?;
    let s = byte(s, b'T').or_else(|| byte(s, b' '))?;
    let (hms, s) = clock(s)?;
    let (nanos, s) = any_fraction(s);
    let (offset, s) = match utc_offset(s) {
        Some((offset, rest)) => (Some(offset), rest),
        None => (None, s),
    };
    Some((build(Some(year), month, day, hms, nanos, offset)?, s))
}

fn month_day_stamp(s: &str) -> Option<(LogTime, &str)> {
    let (month, s) = digits(s, 2)?;
    let (day, s) = digits(byte(s, b'-')?, 2)?;
    let (hms, s) = clock(byte(s, b' ')?)?;
    let (nanos, s) = any_fraction(s);
    Some((build(None, month, day, hms, nanos, None)?, s))
}

fn clock_stamp(s: &str) -> Option<(LogTime, &str)> {
    let ((hour, minute, second), s) = clock(s)?;
    let (nanos, s) = any_fraction(s);
    // Any valid month and day: only the clock is checked.
    LogTime::is_valid_clock(1, 1, hour.into(), minute.into(), second.into())
        .then(|| (LogTime::time_only(hour, minute, second, nanos), s))
}

/// A fraction after `.` or `,`.
fn any_fraction(s: &str) -> (u32, &str) {
    match s.as_bytes().first() {
        Some(b',') => fraction_after(s, b','),
        _ => fraction(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_omits_what_the_line_did_not_print() {
        let t = LogTime {
            year: None,
            month: 5,
            day: 10,
            hour: 7,
            minute: 57,
            second: 30,
            nanos: 770_724_000,
            utc_offset: None,
        };
        assert_eq!(t.to_string(), "05-10 07:57:30.770724");
        let utc = LogTime {
            utc_offset: Some(0),
            ..t
        };
        assert_eq!(utc.to_string(), "05-10 07:57:30.770724 UTC");
        let west = LogTime {
            utc_offset: Some(-(3 * 3600 + 30 * 60)),
            ..t
        };
        assert_eq!(west.to_string(), "05-10 07:57:30.770724 -03:30");
    }

    #[test]
    fn a_time_without_a_date_shows_only_its_clock() {
        let t = LogTime::time_only(3, 51, 54, 0);
        assert!(t.is_time_only());
        assert_eq!(t.to_string(), "03:51:54");
        assert_eq!(
            LogTime::time_only(3, 51, 54, 120_000_000).to_string(),
            "03:51:54.12"
        );
        assert!(!first_stamp("11-22 13:25:01").unwrap().is_time_only());
    }

    #[test]
    fn the_first_stamp_of_a_head_is_its_time() {
        let read = |head: &str| first_stamp(head).map(|t| t.to_string());
        assert_eq!(
            read(
                "(APIServer pid=14521) [vllm-rbln] INFO 2026-10-07 22:01:17,796 [loggers.py:248] "
            ),
            Some("2026-10-07 22:01:17.796".into())
        );
        assert_eq!(
            read("2026-10-07T22:01:17.796+09:00 - vllm - INFO - "),
            Some("2026-10-07 22:01:17.796 +09:00".into())
        );
        assert_eq!(
            read("2026-10-07T22:01:17Z "),
            Some("2026-10-07 22:01:17 UTC".into())
        );
        assert_eq!(
            read("2026-10-07 22:01:17-0330 "),
            Some("2026-10-07 22:01:17 -03:30".into())
        );
        assert_eq!(
            read("INFO 10-07 22:01:17.5 x "),
            Some("10-07 22:01:17.5".into())
        );
        assert_eq!(read("[03:51:54] "), Some("03:51:54".into()));
    }

    #[test]
    fn numbers_that_are_no_time_give_none() {
        let read = |head: &str| first_stamp(head);
        assert_eq!(read("(APIServer pid=14521) [loggers.py:248] "), None);
        assert_eq!(read("v0.11.2 10.0.70.78:8000 "), None);
        assert_eq!(read("[25:61:00] "), None);
        assert_eq!(read("112:01:17 "), None);
        assert_eq!(read("12:01:173 "), None);
    }

    #[test]
    fn an_offset_is_seconds_east_of_utc_and_in_range() {
        assert_eq!(utc_offset("Z x"), Some((0, " x")));
        assert_eq!(utc_offset("+09:00"), Some((9 * 3600, "")));
        assert_eq!(utc_offset("-0330]"), Some((-(3 * 3600 + 30 * 60), "]")));
        assert_eq!(utc_offset("+24:00"), None);
        assert_eq!(offset_fields("+24:00"), Some(((1, 24, 0), "")));
        assert_eq!(utc_offset("+9:00"), None);
    }

    #[test]
    fn whole_dates_read_with_their_zone_or_without() {
        fn read(time: Option<(LogTime, &str)>) -> Option<(String, &str)> {
            time.map(|(t, rest)| (t.to_string(), rest))
        }
        assert_eq!(
            read(iso_zulu("2024-05-10T07:57:30.5Z I")),
            Some(("2024-05-10 07:57:30.5 UTC".into(), " I"))
        );
        assert_eq!(iso_zulu("2024-05-10T07:57:30+01:00"), None);
        assert_eq!(
            read(year_first("2025-04-28 09:56:44 x")),
            Some(("2025-04-28 09:56:44".into(), " x"))
        );
        assert_eq!(year_first("2025-04-28T09:56:44"), None);
    }
}
