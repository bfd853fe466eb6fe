//! Envelope timestamps: RFC 3339 (Docker, CRI, `journalctl -o short-iso`), Python's
//! `asctime` (`2026-11-22 15:08:18,376`) and syslog's `Nov 22 13:25:01`.

use llmtail_grammars::time::days_from_civil;

fn digits(s: &str, from: usize, len: usize) -> Option<u32> {
    let part = s.get(from..from + len)?;
    if !part.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    part.parse().ok()
}

fn seconds(year: i32, month: u32, day: u32, h: u32, m: u32, sec: u32) -> Option<f64> {
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    Some((days_from_civil(year, month, day) * 86_400 + i64::from(h * 3600 + m * 60 + sec)) as f64)
}

/// `YYYY-MM-DD?HH:MM:SS[.frac|,frac]`, then an optional `Z` or `±HH[:]MM`. Returns epoch seconds
/// and the rest of the input. Without a zone the time is read as UTC.
pub fn parse_datetime(s: &str) -> Option<(f64, &str)> {
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
    let mut t = seconds(
        digits(s, 0, 4)? as i32,
        digits(s, 5, 2)?,
        digits(s, 8, 2)?,
        digits(s, 11, 2)?,
        digits(s, 14, 2)?,
        digits(s, 17, 2)?,
    )?;
    let mut i = 19;
    if matches!(b.get(i), Some(b'.') | Some(b',')) {
        let frac_len = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if frac_len > 0 {
            let frac: f64 = format!("0.{}", &s[i + 1..i + 1 + frac_len]).parse().ok()?;
            t += frac;
        }
        i += 1 + frac_len;
    }
    match b.get(i) {
        Some(b'Z') => i += 1,
        Some(sign @ (b'+' | b'-')) => {
            let hours = digits(s, i + 1, 2)?;
            let colon = usize::from(b.get(i + 3) == Some(&b':'));
            let minutes = digits(s, i + 3 + colon, 2)?;
            let offset = f64::from(hours * 3600 + minutes * 60);
            t += if *sign == b'+' { -offset } else { offset };
            i += 5 + colon;
        }
        _ => {}
    }
    Some((t, &s[i..]))
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `Nov 22 13:25:01` (syslog, `journalctl -o short`), in `year`. Returns the rest of the input.
pub fn parse_syslog_time(s: &str, year: i32) -> Option<(f64, &str)> {
    let month = MONTHS.iter().position(|m| s.starts_with(m))? as u32 + 1;
    let b = s.as_bytes();
    if b.len() < 15 || b[3] != b' ' || b[6] != b' ' || b[9] != b':' || b[12] != b':' {
        return None;
    }
    let day: u32 = s.get(4..6)?.trim_start().parse().ok()?;
    let t = seconds(
        year,
        month,
        day,
        digits(s, 7, 2)?,
        digits(s, 10, 2)?,
        digits(s, 13, 2)?,
    )?;
    Some((t, &s[15..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_with_nanoseconds_and_offsets() {
        let (t, rest) = parse_datetime("2026-11-22T13:25:01.5Z stderr").unwrap();
        assert_eq!((t, rest), (1_795_353_901.5, " stderr"));
        assert_eq!(
            parse_datetime("2026-11-22T14:25:01+01:00").unwrap().0,
            1_795_353_901.0
        );
        assert_eq!(
            parse_datetime("2026-11-22T14:25:01+0100").unwrap().0,
            1_795_353_901.0
        );
        assert_eq!(
            parse_datetime("2026-11-22 13:25:01,000").unwrap().0,
            1_795_353_901.0
        );
        assert!(parse_datetime("2026-13-22T13:25:01Z").is_none());
        assert!(parse_datetime("not a time at all").is_none());
    }

    #[test]
    fn syslog_time_takes_the_year_given() {
        let (t, rest) = parse_syslog_time("Nov 22 13:25:01 host", 2026).unwrap();
        assert_eq!((t, rest), (1_795_353_901.0, " host"));
        assert!(parse_syslog_time("Nov 2x 13:25:01", 2026).is_none());
    }
}
