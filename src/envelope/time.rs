//! Envelope timestamps: RFC 3339 (Docker, CRI, `journalctl -o short-iso`), Python's
//! `asctime` (`2026-11-22 15:08:18,376`) and syslog's `Nov 22 13:25:01`.
//!
//! They are kept as printed, in a [`LogTime`]: with their offset when the envelope printed one,
//! without (asctime, syslog: the writer's local time) otherwise. Turning one into an instant
//! needs the log's zone and, for syslog, the clock to pick the year: the pipeline does that per
//! line, so the envelope knows neither.

use llmtail_grammars::LogTime;

fn digits(s: &str, from: usize, len: usize) -> Option<u32> {
    let part = s.get(from..from + len)?;
    if !part.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    part.parse().ok()
}

/// A wall-clock time, if month, day and clock are in range.
fn wall_clock(year: Option<u32>, month: u32, day: u32, h: u32, m: u32, s: u32) -> Option<LogTime> {
    if !LogTime::is_valid_clock(month, day, h, m, s) {
        return None;
    }
    let year = match year {
        Some(year) => Some(u16::try_from(year).ok()?),
        None => None,
    };
    Some(LogTime {
        year,
        month: month as u8,
        day: day as u8,
        hour: h as u8,
        minute: m as u8,
        second: s as u8,
        nanos: 0,
        utc_offset: None,
    })
}

/// `.123` or `,123` after the seconds, as nanoseconds (digits past the ninth are dropped),
/// and how many bytes it took.
fn fraction(b: &[u8]) -> (u32, usize) {
    if !matches!(b.first(), Some(b'.') | Some(b',')) {
        return (0, 0);
    }
    let len = b[1..].iter().take_while(|c| c.is_ascii_digit()).count();
    let nanos = b[1..1 + len.min(9)]
        .iter()
        .chain(std::iter::repeat(&b'0'))
        .take(9)
        .fold(0u32, |n, d| n * 10 + u32::from(d - b'0'));
    (nanos, 1 + len)
}

/// `Z` or `±HH[:]MM` as seconds east of UTC, and how many bytes it took.
fn offset(s: &str, at: usize) -> Option<(i32, usize)> {
    let b = s.as_bytes();
    match b.get(at)? {
        b'Z' => Some((0, 1)),
        sign @ (b'+' | b'-') => {
            let hours = digits(s, at + 1, 2)?;
            let colon = usize::from(b.get(at + 3) == Some(&b':'));
            let minutes = digits(s, at + 3 + colon, 2)?;
            let seconds = (hours * 3600 + minutes * 60) as i32;
            Some((if *sign == b'+' { seconds } else { -seconds }, 5 + colon))
        }
        _ => None,
    }
}

/// `YYYY-MM-DD?HH:MM:SS[.frac|,frac]`, then an optional `Z` or `±HH[:]MM`. Returns the time and
/// the rest of the input. Without a zone the time is the writer's local time.
pub fn parse_datetime(s: &str) -> Option<(LogTime, &str)> {
    let b = s.as_bytes();
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || !(b[10] == b'T' || b[10] == b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let mut time = wall_clock(
        Some(digits(s, 0, 4)?),
        digits(s, 5, 2)?,
        digits(s, 8, 2)?,
        digits(s, 11, 2)?,
        digits(s, 14, 2)?,
        digits(s, 17, 2)?,
    )?;
    let (nanos, len) = fraction(&b[19..]);
    time.nanos = nanos;
    let mut i = 19 + len;
    if matches!(b.get(i), Some(b'Z' | b'+' | b'-')) {
        let (seconds, len) = offset(s, i)?;
        time.utc_offset = Some(seconds);
        i += len;
    }
    Some((time, &s[i..]))
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `Nov 22 13:25:01` (syslog, `journalctl -o short`): no year, no zone. Returns the rest of
/// the input.
pub fn parse_syslog_time(s: &str) -> Option<(LogTime, &str)> {
    let month = MONTHS.iter().position(|m| s.starts_with(m))? as u32 + 1;
    let b = s.as_bytes();
    if b.len() < 15 || b[3] != b' ' || b[6] != b' ' || b[9] != b':' || b[12] != b':' {
        return None;
    }
    let day: u32 = s.get(4..6)?.trim_start().parse().ok()?;
    let time = wall_clock(
        None,
        month,
        day,
        digits(s, 7, 2)?,
        digits(s, 10, 2)?,
        digits(s, 13, 2)?,
    )?;
    Some((time, &s[15..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(parsed: Option<(LogTime, &str)>) -> Option<(String, &str)> {
        parsed.map(|(time, rest)| (time.to_string(), rest))
    }

    #[test]
    fn rfc3339_keeps_its_fraction_and_offset() {
        let cases = [
            (
                "2026-11-22T13:25:01.5Z stderr",
                "2026-11-22 13:25:01.5 UTC",
                " stderr",
            ),
            (
                "2026-11-22T14:25:01+01:00",
                "2026-11-22 14:25:01 +01:00",
                "",
            ),
            ("2026-11-22T14:25:01+0100", "2026-11-22 14:25:01 +01:00", ""),
            (
                "2026-11-22T08:25:01-05:00 x",
                "2026-11-22 08:25:01 -05:00",
                " x",
            ),
            (
                "2026-11-22T13:25:01.123456789123Z",
                "2026-11-22 13:25:01.123456789 UTC",
                "",
            ),
        ];
        for (text, time, rest) in cases {
            assert_eq!(
                shown(parse_datetime(text)),
                Some((time.into(), rest)),
                "{text}"
            );
        }
    }

    #[test]
    fn python_asctime_has_no_zone() {
        assert_eq!(
            shown(parse_datetime("2026-11-22 13:25:01,376")),
            Some(("2026-11-22 13:25:01.376".into(), ""))
        );
    }

    #[test]
    fn what_is_not_a_time_is_refused() {
        assert!(parse_datetime("2026-13-22T13:25:01Z").is_none());
        assert!(parse_datetime("not a time at all").is_none());
        assert!(parse_syslog_time("Nov 2x 13:25:01").is_none());
        assert!(parse_syslog_time("Nov 22 25:25:01").is_none());
    }

    #[test]
    fn syslog_time_has_neither_year_nor_zone() {
        assert_eq!(
            shown(parse_syslog_time("Nov 22 13:25:01 host")),
            Some(("11-22 13:25:01".into(), " host"))
        );
        assert_eq!(
            shown(parse_syslog_time("Jan  1 00:00:05 host")),
            Some(("01-01 00:00:05".into(), " host"))
        );
    }
}
