//! The Ollama server's own records about its runners (the llama.cpp or Ollama-engine
//! subprocesses that hold a loaded model), in the two logger shapes Ollama has had:
//!
//! - `log/slog`'s text handler (0.1.3x onward): `time=2025-12-23T10:34:26.076Z level=INFO
//!   source=server.go:1332 msg="llama runner started in 8.62 seconds"`. The time is RFC 3339
//!   with milliseconds and the host's offset; `source` was a full path in the first slog builds
//!   and is a file name since; `msg` is quoted when it holds a space.
//! - the standard `log` package with `Lshortfile` (up to 0.1.1x, late 2023):
//!   `2023/12/03 14:58:42 llama.go:492: llama runner started in 9.200880 seconds`, local time.
//!
//! Two messages are read. `llama runner started in %0.2f seconds` (`llm/server.go`
//! `WaitUntilRunning`, INFO; `%f` at DEBUG in early 2024 builds, `%f` through `log.Printf` before)
//! is the time a model took to load. `loaded runners` with `count=N` (`server/sched.go`, INFO,
//! after every load) is how many runners the scheduler holds. Ollama logs prompts only at
//! DEBUG and TRACE, as attributes of other messages: a message is read only when `msg` itself
//! is the text, never when an attribute quotes it.

use nom::{
    branch::alt,
    bytes::complete::{tag, take_while, take_while1},
    character::complete::char,
    combinator::{all_consuming, opt},
    sequence::preceded,
    IResult, Parser,
};

use super::OllamaRecord;
use crate::lex::number::{float, uint};
use crate::lex::time;
use crate::LogTime;

/// The start of the runner-started message, in both shapes.
pub const RUNNER_STARTED: &str = "llama runner started in ";
/// The scheduler's message, as slog prints it (it never had a `log.Printf` form).
pub const LOADED_RUNNERS: &str = "msg=\"loaded runners\"";

/// A server record: its time and what its message says. `None` for every other record, and
/// for one of these two that is cut short or otherwise not as Ollama prints it (see [`claims`]).
pub fn parse(line: &str) -> Option<(LogTime, OllamaRecord<'static>)> {
    let line = line.trim();
    if let Ok((message, time)) = slog_head(line) {
        return Some((time, slog_message(message)?));
    }
    let (message, time) = std_head(line).ok()?;
    let record = all_consuming(runner_started).parse(message).ok()?.1;
    Some((time, record))
}

/// True for a record of either shape whose message is one of the two, whether or not the rest
/// of it reads: a line that does not [`parse`] is then one cut short or changed.
pub fn claims(line: &str) -> bool {
    let line = line.trim();
    if let Ok((message, _)) = slog_head(line) {
        let Some(text) = message.strip_prefix("msg=") else {
            return false;
        };
        let text = text.strip_prefix('"').unwrap_or(text);
        return text.starts_with(RUNNER_STARTED) || message.starts_with(LOADED_RUNNERS);
    }
    std_head(line).is_ok_and(|(message, _)| message.starts_with(RUNNER_STARTED))
}

/// `time=... level=LEVEL[ source=FILE:N] `: the time, and the rest from `msg=` on.
fn slog_head(input: &str) -> IResult<&str, LogTime> {
    let (rest, time) = preceded(tag("time="), rfc3339).parse(input)?;
    let (rest, _) = (tag(" level="), level, char(' ')).parse(rest)?;
    let (rest, _) = opt((tag("source="), value, char(' '))).parse(rest)?;
    Ok((rest, time))
}

/// slog's level names, with the offset it appends to a level between two named ones
/// (`DEBUG-4`); Ollama names its -8 level `TRACE`.
fn level(input: &str) -> IResult<&str, &str> {
    let (rest, name) = take_while1(|c: char| c.is_ascii_uppercase())(input)?;
    let (rest, _) = opt((alt((char('+'), char('-'))), uint)).parse(rest)?;
    Ok((rest, name))
}

/// `2025-12-23T10:34:26.076Z` or `2026-08-30T03:30:19.446+03:30` (slog's RFC 3339 with
/// milliseconds).
fn rfc3339(input: &str) -> IResult<&str, LogTime> {
    let parsed = (|| {
        let (year, s) = time::digits(input, 4)?;
        let (month, s) = time::digits(time::byte(s, b'-')?, 2)?;
        let (day, s) = time::digits(time::byte(s, b'-')?, 2)?;
        let (hms, s) = time::clock(time::byte(s, b'T')?)?;
        let (nanos, s) = time::fraction(s);
        let (offset, s) = crate::lex::time::utc_offset(s)?;
        Some((
            time::build(Some(year), month, day, hms, nanos, Some(offset))?,
            s,
        ))
    })();
    match parsed {
        Some((time, rest)) => Ok((rest, time)),
        None => Err(nom::Err::Error(nom::error::Error::new(
            input,
            nom::error::ErrorKind::Verify,
        ))),
    }
}

/// A slog value: a quoted Go string as printed (escapes kept, quotes dropped), or a bare word.
fn value(input: &str) -> IResult<&str, &str> {
    if input.starts_with('"') {
        super::gin::quoted(input)
    } else {
        take_while1(|c: char| c != ' ')(input)
    }
}

/// ` key=value` attributes after the message, as (key, value) pairs.
fn attribute(input: &str) -> IResult<&str, (&str, &str)> {
    let (rest, (_, key, _, value)) = (
        char(' '),
        take_while1(|c: char| c != '=' && c != ' '),
        char('='),
        value,
    )
        .parse(input)?;
    Ok((rest, (key, value)))
}

/// `msg=...` and its attributes, for the two messages read.
fn slog_message(input: &str) -> Option<OllamaRecord<'static>> {
    let (attributes, text) = preceded(tag("msg="), value).parse(input).ok()?;
    if text.starts_with(RUNNER_STARTED) {
        if !attributes.is_empty() {
            return None;
        }
        return all_consuming(runner_started)
            .parse(text)
            .ok()
            .map(|(_, r)| r);
    }
    if text == "loaded runners" {
        let (rest, (key, count)) = attribute(attributes).ok()?;
        if key != "count" || !rest.is_empty() {
            return None;
        }
        let (_, count) = all_consuming(uint).parse(count).ok()?;
        return Some(OllamaRecord::LoadedRunners { count });
    }
    None
}

/// `llama runner started in 8.62 seconds` (`%0.2f`; `%f` in the older shapes).
fn runner_started(input: &str) -> IResult<&str, OllamaRecord<'static>> {
    let (rest, (_, load_seconds, _)) =
        (tag(RUNNER_STARTED), float, tag(" seconds")).parse(input)?;
    Ok((rest, OllamaRecord::RunnerStarted { load_seconds }))
}

/// `2023/12/03 14:58:42 llama.go:492: ` (Go's `log` with `LstdFlags | Lshortfile`), then the
/// message; `INFO ` after the file was Ollama's level word in its early 2024 `log` lines.
fn std_head(input: &str) -> IResult<&str, LogTime> {
    let Some((time, rest)) = super::gin::slashed_time(input, " ") else {
        return Err(nom::Err::Error(nom::error::Error::new(
            input,
            nom::error::ErrorKind::Verify,
        )));
    };
    let (rest, _) = (
        char(' '),
        take_while1(|c: char| c != ':' && c != ' '),
        char(':'),
        take_while1(|c: char| c.is_ascii_digit()),
        tag(": "),
        opt(tag("INFO ")),
        take_while(|c| c == ' '),
    )
        .parse(rest)?;
    Ok((rest, time))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slog_times_keep_their_offset() {
        let shown = |s| rfc3339(s).map(|(rest, t)| (rest, t.to_string()));
        assert_eq!(
            shown("2025-12-23T10:34:26.076Z "),
            Ok((" ", "2025-12-23 10:34:26.076 UTC".into()))
        );
        assert_eq!(
            shown("2026-08-30T03:30:19.446+03:30"),
            Ok(("", "2026-08-30 03:30:19.446 +03:30".into()))
        );
        assert_eq!(
            shown("2024-01-09T09:00:00.000-05:00"),
            Ok(("", "2024-01-09 09:00:00 -05:00".into()))
        );
        assert!(rfc3339("2024-01-09T09:00:00.000").is_err());
    }

    #[test]
    fn the_message_must_be_msg_itself() {
        let quoted = r#"time=2025-12-23T10:34:26.076Z level=DEBUG source=routes.go:1 msg="chat request" prompt="llama runner started in 8.62 seconds""#;
        assert_eq!(parse(quoted), None);
        assert!(!claims(quoted));
    }
}
