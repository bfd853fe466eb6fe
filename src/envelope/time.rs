//! Envelope timestamps: RFC 3339 (Docker, CRI, `journalctl -o short-iso`), Python's
//! `asctime` (`2026-11-22 15:08:18,376`) and syslog's `Nov 22 13:25:01`.
//!
//! They are kept as printed, in a [`LogTime`]: with their offset when the envelope printed one,
//! without (asctime, syslog: the writer's local time) otherwise. Turning one into an instant
//! needs the log's zone and, for syslog, the clock to pick the year: the pipeline does that per
//! line, so the envelope knows neither.
//!
//! Digits, clock and calendar checks are the grammars crate's (`llmtail_grammars::time`), the
//! ones every record head reads its time with; what an envelope reads differently (its
//! fraction and its offset, below) stays here.

use llmtail_grammars::time::{build, byte, clock, digits, offset_fields};
use llmtail_grammars::LogTime;

/// `.123` or `,123` after the seconds, as nanoseconds, and the rest of the input.
///
/// Unlike a record head's fraction (`llmtail_grammars::time::fraction`: 1 to 9 digits, else
/// none), any number of digits is taken and those past the ninth are dropped, and a bare `.`
/// is taken as zero: the envelope is the frame the whole line hangs on, and a writer that
/// prints picoseconds must not cost us the line.
fn fraction(s: &str) -> (u32, &str) {
    let b = s.as_bytes();
    if !matches!(b.first(), Some(b'.') | Some(b',')) {
        return (0, s);
    }
    let len = b[1..].iter().take_while(|c| c.is_ascii_digit()).count();
    let nanos = b[1..1 + len.min(9)]
        .iter()
        .chain(std::iter::repeat(&b'0'))
        .take(9)
        .fold(0u32, |n, d| n * 10 + u32::from(d - b'0'));
    (nanos, &s[1 + len..])
}

/// `Z` or `±HH[:]MM` as seconds east of UTC.
///
/// The range is not judged here, unlike a record head's offset (`time::utc_offset`, which
/// refuses `+24:00`): an envelope's offset goes to the clock as printed, which refuses what
/// no zone can be, and the line is kept either way.
fn offset(s: &str) -> Option<(i32, &str)> {
    let ((sign, hours, minutes), rest) = offset_fields(s)?;
    Some((sign * (hours * 3600 + minutes * 60) as i32, rest))
}

/// `YYYY-MM-DD?HH:MM:SS[.frac|,frac]`, then an optional `Z` or `±HH[:]MM`. Returns the time and
/// the rest of the input. Without a zone the time is the writer's local time; a sign or `Z`
/// that starts no offset makes it no time.
pub fn parse_datetime(s: &str) -> Option<(LogTime, &str)> {
    let (year, s) = digits(s, 4)?;
    let (month, s) = digits(byte(s, b'-')?, 2)?;
    let (day, s) = digits(byte(s, b'-')?, 2)?;
    let (hms, s) = clock(byte(s, b'T').or_else(|| byte(s, b' '))?)?;
    let (nanos, s) = fraction(s);
    let (utc_offset, s) = match s.as_bytes().first() {
        Some(b'Z' | b'+' | b'-') => {
            let (seconds, rest) = offset(s)?;
            (Some(seconds), rest)
        }
        _ => (None, s),
    };
    Some((build(Some(year), month, day, hms, nanos, utc_offset)?, s))
}

/// `Nov 22 13:25:01` (syslog, `journalctl -o short`): no year, no zone. Returns the rest of
/// the input.
///
/// journalctl prints the month with `strftime("%b")` in the host's locale, so a French host
/// writes `janv. 27`, a German one `Mär 03`, a Chinese one `5月 07`, a Japanese one ` 5月 07`
/// (see [`month_number`]); the
/// day is `%d` (`07`) from journalctl and `%e` (` 7`) from syslog daemons. `-o short-precise`
/// adds microseconds (`13:25:01.123456`).
pub fn parse_syslog_time(s: &str) -> Option<(LogTime, &str)> {
    // Japanese pads `%b` to two columns: ` 5月`.
    let s = match s.strip_prefix(' ') {
        Some(rest) if rest.starts_with(|c: char| c.is_ascii_digit()) => rest,
        _ => s,
    };
    let (month, rest) = s.split_once(' ')?;
    let month = month_number(month)?;
    let rest = rest.strip_prefix(' ').unwrap_or(rest);
    let day_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    if !(1..=2).contains(&day_len) {
        return None;
    }
    let (day, rest) = digits(rest, day_len)?;
    let (hms, rest) = clock(byte(rest, b' ')?)?;
    let (nanos, rest) = fraction(rest);
    Some((build(None, month, day, hms, nanos, None)?, rest))
}

/// The month a `%b` abbreviation names, in the locales journald hosts commonly run: English,
/// French, German, Spanish, Italian, Portuguese, Dutch, the Scandinavian languages, Polish,
/// Czech, Finnish, Turkish, Russian, Ukrainian, and the `N月`/`N월` of Chinese, Japanese and
/// Korean. Case is ignored and a trailing `.` (`janv.`, `sept.`) is not part of the name. No
/// abbreviation means two different months in two of these locales. An English month is the
/// first thing asked, and nothing is allocated.
pub fn month_number(name: &str) -> Option<u32> {
    const ENGLISH: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    if let Some(i) = ENGLISH.iter().position(|m| *m == name) {
        return Some(i as u32 + 1);
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    if let Some(number) = name.strip_suffix('月').or_else(|| name.strip_suffix('월')) {
        let month: u32 = number.parse().ok()?;
        return (1..=12).contains(&month).then_some(month);
    }
    // Folded to lower case in a buffer on the stack: no name is longer.
    let mut buf = [0u8; 24];
    let mut len = 0;
    for c in name.chars().flat_map(char::to_lowercase) {
        let end = len + c.len_utf8();
        if end > buf.len() {
            return None;
        }
        c.encode_utf8(&mut buf[len..end]);
        len = end;
    }
    let folded = std::str::from_utf8(&buf[..len]).ok()?;
    let month = match folded {
        "jan" | "janv" | "jän" | "ene" | "gen" | "sty" | "led" | "tammi" | "oca" | "янв"
        | "січ" => 1,
        "feb" | "févr" | "fév" | "fev" | "lut" | "úno" | "helmi" | "şub" | "фев" | "лют" => {
            2
        }
        "mar" | "mars" | "mär" | "mrt" | "bře" | "maalis" | "мар" | "бер" => 3,
        "apr" | "avr" | "avril" | "abr" | "kwi" | "dub" | "huhti" | "nis" | "апр" | "кві" => {
            4
        }
        "may" | "mai" | "mag" | "mei" | "maj" | "kvě" | "touko" | "мая" | "май" | "тра" => {
            5
        }
        "jun" | "juni" | "juin" | "giu" | "cze" | "čen" | "čer" | "kesä" | "haz" | "июн"
        | "чер" => 6,
        "jul" | "juli" | "juil" | "lug" | "lip" | "čec" | "heinä" | "tem" | "июл" | "лип" => {
            7
        }
        "aug" | "août" | "ago" | "sie" | "srp" | "elo" | "ağu" | "авг" | "сер" => 8,
        "sep" | "sept" | "set" | "wrz" | "zář" | "syys" | "eyl" | "сен" | "вер" => 9,
        "oct" | "okt" | "ott" | "out" | "paź" | "říj" | "loka" | "eki" | "окт" | "жов" => {
            10
        }
        "nov" | "lis" | "marras" | "kas" | "ноя" | "лис" => 11,
        "dec" | "déc" | "dez" | "dic" | "des" | "gru" | "pro" | "joulu" | "ara" | "дек" | "гру" => {
            12
        }
        _ => return None,
    };
    Some(month)
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
    fn journalctl_prints_the_month_in_the_hosts_locale() {
        let cases = [
            ("janv. 27 17:06:44 h", "01-27 17:06:44"),
            ("févr. 03 08:00:00 h", "02-03 08:00:00"),
            ("Mär 03 08:00:00 h", "03-03 08:00:00"),
            ("avril 14 08:00:00 h", "04-14 08:00:00"),
            ("5月 07 06:59:38 master", "05-07 06:59:38"),
            (" 5月 07 06:59:38 master", "05-07 06:59:38"),
            ("1月 10 22:07:10 h", "01-10 22:07:10"),
            ("12월 24 23:59:59 h", "12-24 23:59:59"),
            ("jan 27 17:06:44 desktop", "01-27 17:06:44"),
            ("dic 24 10:00:00 h", "12-24 10:00:00"),
            ("Okt  1 10:00:00 h", "10-01 10:00:00"),
            ("août 15 10:00:00 h", "08-15 10:00:00"),
            ("déc. 31 23:00:00 h", "12-31 23:00:00"),
            ("мая 09 10:00:00 h", "05-09 10:00:00"),
            ("Şub 29 10:00:00 h", "02-29 10:00:00"),
            ("čen 01 10:00:00 h", "06-01 10:00:00"),
            ("paź 01 10:00:00 h", "10-01 10:00:00"),
            ("Nov 22 13:25:01.123456 h", "11-22 13:25:01.123456"),
        ];
        for (text, time) in cases {
            let (parsed, rest) = parse_syslog_time(text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(parsed.to_string(), time, "{text}");
            assert!(rest.starts_with(' '), "{text}: {rest:?}");
        }
    }

    #[test]
    fn what_names_no_month_is_no_syslog_time() {
        for text in [
            "13月 07 06:59:38 h",
            "Foo 07 06:59:38 h",
            "janv.. 07 06:59:38 h",
            "Nov 123 13:25:01 h",
            "Nov 22 13:25 h",
        ] {
            assert!(parse_syslog_time(text).is_none(), "{text}");
        }
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
