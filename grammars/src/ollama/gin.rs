//! Gin's access line, which Ollama's HTTP server writes for every request it answers:
//!
//! ```text
//! [GIN] 2025/12/23 - 10:34:40 | 200 | 57.956598944s |   192.168.0.131 | POST     "/api/chat"
//! ```
//!
//! Gin's `defaultLogFormatter` (gin-gonic/gin `logger.go`, v1.9 to v1.11, the versions Ollama has
//! shipped with) prints `[GIN] %v |%s %3d %s| %13v | %15s |%s %-7s %s %#v\n%s`: local time as
//! `2006/01/02 - 15:04:05`, the status, the latency as Go's `time.Duration.String` right-aligned
//! to 13 columns, the client address right-aligned to 15, the method left-aligned to 7, and the
//! path (with `?query` when there was one) as a Go-quoted string. The `%s` pairs around status
//! and method are ANSI colours on a terminal, which the agent strips before a grammar sees the
//! line; the error message after `\n` is a line of its own. Latencies over a minute are cut to
//! whole seconds (`1m43s`, `30m0s`).

use nom::{
    branch::alt,
    bytes::complete::{tag, take_while, take_while1},
    character::complete::char,
    combinator::opt,
    IResult, Parser,
};
use serde::Serialize;

use crate::lex::number::uint;
use crate::lex::time;
use crate::LogTime;

/// One request Ollama answered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Request<'a> {
    /// The HTTP status sent.
    pub status: u16,
    /// Time from the request's arrival to the handler's return (for a streamed chat, the whole
    /// stream), in seconds.
    pub latency_seconds: f64,
    /// The client address as gin saw it (`c.ClientIP()`, which honours `X-Forwarded-For` only
    /// from trusted proxies); may be empty.
    pub client: &'a str,
    pub method: &'a str,
    /// The path as printed between the quotes: Go escapes (`\"`, `\x00`) kept, `?query` kept.
    pub path: &'a str,
}

/// The whole access line (leading and trailing whitespace allowed): its time and request.
/// `None` when anything in it is not what gin prints, a line cut short included.
pub fn parse(line: &str) -> Option<(LogTime, Request<'_>)> {
    let line = line.trim();
    let (rest, time) = head(line).ok()?;
    let (rest, request) = request(rest).ok()?;
    rest.is_empty().then_some((time, request))
}

/// `[GIN] 2025/12/23 - 10:34:40`: the line's start, which is all [`claims`] looks at.
fn head(input: &str) -> IResult<&str, LogTime> {
    let (rest, _) = tag("[GIN] ")(input)?;
    match gin_time(rest) {
        Some((time, rest)) => Ok((rest, time)),
        None => Err(nom::Err::Error(nom::error::Error::new(
            rest,
            nom::error::ErrorKind::Verify,
        ))),
    }
}

/// True for a line that starts as a gin access line does, up to and including its time: one
/// that does not [`parse`] is then a gin line cut short (`journalctl` cuts lines at the
/// terminal's width with a `>`) or with a value gin cannot print. Gin's own `[GIN-debug]`
/// route table and warnings never start so. Gin before 1.4 (2019) printed the path bare
/// (`| GET      /api/books`): no Ollama ever did, so such a line is another service's.
pub fn claims(line: &str) -> bool {
    let line = line.trim();
    head(line).is_ok() && !bare_path(line)
}

/// True when the line ends in a method and a path without quotes.
fn bare_path(line: &str) -> bool {
    let Some((_, last)) = line.rsplit_once(" | ") else {
        return false;
    };
    let after_method = last
        .trim_start()
        .trim_start_matches(|c: char| c.is_ascii_alphabetic());
    after_method.starts_with(' ') && after_method.trim_start().starts_with('/')
}

/// `2006/01/02 - 15:04:05`, the writer's local time.
fn gin_time(s: &str) -> Option<(LogTime, &str)> {
    slashed_time(s, " - ")
}

/// Go's `2006/01/02` date, `between`, and a `15:04:05` clock: gin's time and the `log`
/// package's. The writer's local time.
pub(super) fn slashed_time<'a>(s: &'a str, between: &str) -> Option<(LogTime, &'a str)> {
    let (year, s) = time::digits(s, 4)?;
    let (month, s) = time::digits(time::byte(s, b'/')?, 2)?;
    let (day, s) = time::digits(time::byte(s, b'/')?, 2)?;
    let (hms, s) = time::clock(s.strip_prefix(between)?)?;
    Some((time::build(Some(year), month, day, hms, 0, None)?, s))
}

/// ` | 200 | 57.956598944s |   192.168.0.131 | POST     "/api/chat"`.
fn request(input: &str) -> IResult<&str, Request<'_>> {
    let (rest, (_, status, _)) = (tag(" | "), padded(status), tag(" | ")).parse(input)?;
    let (rest, latency_seconds) = padded(duration).parse(rest)?;
    let (rest, _) = tag(" | ")(rest)?;
    let (rest, client) = client(rest)?;
    let (rest, _) = tag(" | ")(rest)?;
    let (rest, method) = take_while1(|c: char| c.is_ascii_alphabetic())(rest)?;
    let (rest, _) = take_while1(|c| c == ' ')(rest)?;
    let (rest, path) = quoted(rest)?;
    let request = Request {
        status,
        latency_seconds,
        client,
        method,
        path,
    };
    Ok((rest, request))
}

/// `%3d` of the status: gin writes whatever status the handler set, three digits in practice.
fn status(input: &str) -> IResult<&str, u16> {
    uint.map_res(u16::try_from).parse(input)
}

/// A right-aligned value: the padding spaces, then the value.
fn padded<'a, T>(
    value: impl Parser<&'a str, Output = T, Error = nom::error::Error<&'a str>>,
) -> impl Parser<&'a str, Output = T, Error = nom::error::Error<&'a str>> {
    (take_while(|c| c == ' '), value).map(|(_, v)| v)
}

/// `%15s` of the client address: an IPv4 or IPv6 address, right-aligned, or nothing at all (gin
/// prints an empty `ClientIP()` as fifteen spaces). The address is what stands before ` | `.
fn client(input: &str) -> IResult<&str, &str> {
    let end = input.find(" | ").ok_or_else(|| {
        nom::Err::Error(nom::error::Error::new(
            input,
            nom::error::ErrorKind::TakeUntil,
        ))
    })?;
    let address = input[..end].trim_start_matches(' ');
    if address.contains(' ') {
        return Err(nom::Err::Error(nom::error::Error::new(
            input,
            nom::error::ErrorKind::Space,
        )));
    }
    Ok((&input[end..], address))
}

/// `%#v` of a Go string: `"` ... `"` with backslash escapes, returned as printed (without the
/// quotes). An unescaped `"` ends it.
pub(crate) fn quoted(input: &str) -> IResult<&str, &str> {
    let (body, _) = char('"')(input)?;
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Ok((&body[i + 1..], &body[..i])),
            _ => i += 1,
        }
    }
    Err(nom::Err::Error(nom::error::Error::new(
        input,
        nom::error::ErrorKind::Char,
    )))
}

/// Go's `time.Duration.String`, in seconds: `0s`; under a second one unit with a decimal
/// fraction (`16.52µs`, `971.777µs`, `2.5ms`, `800ns`); else `[Nh][Nm]S[.frac]s` (`4.709180529s`,
/// `1m43s`, `1h2m3s`, `30m0s`). `µ` is U+00B5 as Go prints it; U+03BC (Greek mu, what a paste
/// through Unicode normalisation makes of it) and `us` are read alike, as Go's `ParseDuration`
/// does. A leading `-` (a negative duration, which gin never prints) is read, and left for
/// [`super::OllamaRecord::possible`] to reject.
pub fn duration(input: &str) -> IResult<&str, f64> {
    let (rest, negative) = opt(char('-')).parse(input)?;
    let (rest, seconds) = alt((sub_second, clock_duration)).parse(rest)?;
    Ok((
        rest,
        if negative.is_some() {
            -seconds
        } else {
            seconds
        },
    ))
}

/// `N[.frac]` followed by `ns`, `µs` or `ms`.
fn sub_second(input: &str) -> IResult<&str, f64> {
    let (rest, value) = decimal(input)?;
    let (rest, scale) = alt((
        tag("ns").map(|_| 1e-9),
        tag("\u{b5}s").map(|_| 1e-6),
        tag("\u{3bc}s").map(|_| 1e-6),
        tag("us").map(|_| 1e-6),
        tag("ms").map(|_| 1e-3),
    ))
    .parse(rest)?;
    Ok((rest, value * scale))
}

/// `[Nh][Nm]S[.frac]s`.
fn clock_duration(input: &str) -> IResult<&str, f64> {
    let (rest, hours) = opt((uint, char('h')).map(|(h, _)| h)).parse(input)?;
    // `5ms` is not 5 minutes: a minute is an `m` not followed by `s`.
    let (rest, minutes) = opt((uint, char('m')).map(|(m, _)| m)).parse(rest)?;
    let (rest, seconds) = (decimal, char('s')).map(|(s, _)| s).parse(rest)?;
    let whole = hours.unwrap_or(0) as f64 * 3600.0 + minutes.unwrap_or(0) as f64 * 60.0;
    Ok((rest, whole + seconds))
}

/// Digits with an optional fraction, as Go's `fmtFrac` prints them (no exponent, no sign).
fn decimal(input: &str) -> IResult<&str, f64> {
    let int = input.bytes().take_while(u8::is_ascii_digit).count();
    if int == 0 {
        return Err(nom::Err::Error(nom::error::Error::new(
            input,
            nom::error::ErrorKind::Digit,
        )));
    }
    let frac = match input.as_bytes().get(int) {
        Some(b'.') => input[int + 1..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count(),
        _ => 0,
    };
    let len = if frac > 0 { int + 1 + frac } else { int };
    crate::lex::number::float(&input[..len]).map(|(_, value)| (&input[len..], value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seconds(text: &str) -> Option<f64> {
        nom::combinator::all_consuming(duration)
            .parse(text)
            .ok()
            .map(|(_, s)| s)
    }

    #[test]
    fn every_spelling_of_a_go_duration() {
        let cases = [
            ("0s", 0.0),
            ("800ns", 800e-9),
            ("16.52\u{b5}s", 16.52e-6),
            ("971.777\u{b5}s", 971.777e-6),
            ("971.777\u{3bc}s", 971.777e-6),
            ("2.5ms", 2.5e-3),
            ("4.709180529s", 4.709180529),
            ("57.956598944s", 57.956598944),
            ("1m43s", 103.0),
            ("29m59s", 1799.0),
            ("30m0s", 1800.0),
            ("1h2m3s", 3723.0),
            ("1h0m0.5s", 3600.5),
            ("-1.5s", -1.5),
        ];
        for (text, value) in cases {
            let got = seconds(text).unwrap_or_else(|| panic!("{text}: no duration"));
            assert!(
                (got - value).abs() <= 1e-12 * value.abs().max(1.0),
                "{text}: {got}"
            );
        }
    }

    #[test]
    fn what_go_never_prints_is_no_duration() {
        for text in ["", "s", "1.s", "5m", "1h", "1d", "1.5", "ms", "1e3s", "1 s"] {
            assert_eq!(seconds(text), None, "{text}");
        }
    }

    #[test]
    fn quoted_keeps_escapes_and_stops_at_the_closing_quote() {
        assert_eq!(quoted(r#""/api/chat""#), Ok(("", "/api/chat")));
        assert_eq!(quoted(r#""/a\"b" x"#), Ok((" x", r#"/a\"b"#)));
        assert!(quoted(r#""/api/ch"#).is_err());
    }
}
