//! Where a KoboldCpp stats line begins: `CtxLimit:` at the start of a line as written, after the
//! `[%02d:%02d:%02d] ` clock that releases after 1.76 print in front of it
//! (`get_timestamp_str()` in `otherarch/utils.cpp`: the local time of day, no date).
//!
//! KoboldCpp writes the line with `printf("\n...")` and no newline after it, so the line starts
//! at the newline before it. What a writer puts in front of whole lines is allowed before it:
//! blanks, `docker compose logs`' `service-1  | `, and a progress line that ended in `\r`
//! (`\rGenerating (78 / 387 tokens)` when no stop message followed it). Anything else in front
//! (an issue title quoting `` `CtxLimit: 111/111, ...` ``, a prompt) is a quote, not the record.

use nom::{bytes::complete::take_while_m_n, character::complete::char, IResult, Parser};

use crate::LogTime;

/// The word every stats line opens with (after the clock, when there is one).
pub const OPENING: &str = "CtxLimit:";

/// A stats line split at its message.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Head<'a> {
    /// The `[hh:mm:ss] ` clock, when the release prints one.
    pub time: Option<LogTime>,
    /// From `CtxLimit:` to the end of the line.
    pub message: &'a str,
}

/// The head of the line whose `CtxLimit:` is at byte `at`, or `None` when what stands before it
/// is not the start of a line (see the module's doc).
pub fn split(line: &str, at: usize) -> Option<Head<'_>> {
    let message = &line[at..];
    let before = &line[..at];
    if starts_a_line(before) {
        return Some(Head {
            time: None,
            message,
        });
    }
    // `[hh:mm:ss] ` is 11 bytes; what stands before it must start a line in turn.
    let clock_at = before.len().checked_sub(11)?;
    let clock_text = before.get(clock_at..)?;
    let (rest, time) = clock(clock_text).ok()?;
    (rest.is_empty() && starts_a_line(&before[..clock_at])).then_some(Head {
        time: Some(time),
        message,
    })
}

/// True when text ending right before a record starts a line as written: nothing but blanks,
/// a carriage return, or a short `docker compose` prefix (`service-1  | `). Only the blanks
/// right before the record are looked at, so a line of many `CtxLimit:` costs linear time.
fn starts_a_line(before: &str) -> bool {
    let before = before.trim_end_matches([' ', '\t']);
    before.is_empty()
        || before.ends_with('\r')
        || (before.len() <= 80
            && before.strip_suffix(" |").is_some_and(|service| {
                !service.trim().is_empty() && !service.contains(['\'', '"', '|', '`'])
            }))
}

fn two_digits(input: &str) -> IResult<&str, u8> {
    take_while_m_n(2, 2, |c: char| c.is_ascii_digit())
        .map_res(str::parse::<u8>)
        .parse(input)
}

/// `[hh:mm:ss] `, a valid clock.
fn clock(input: &str) -> IResult<&str, LogTime> {
    let (rest, (_, hour, _, minute, _, second, _)) = (
        char('['),
        two_digits,
        char(':'),
        two_digits,
        char(':'),
        two_digits,
        nom::bytes::complete::tag("] "),
    )
        .parse(input)?;
    if !LogTime::is_valid_clock(1, 1, hour.into(), minute.into(), second.into()) {
        return Err(nom::Err::Error(nom::error::Error::new(
            input,
            nom::error::ErrorKind::Verify,
        )));
    }
    Ok((rest, LogTime::time_only(hour, minute, second, 0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_line(line: &str) -> Option<Head<'_>> {
        split(line, line.find(OPENING)?)
    }

    #[test]
    fn a_line_that_opens_with_the_word_has_no_clock() {
        let h = split_line("CtxLimit: 3768/4096, Process:0.44s").unwrap();
        assert_eq!(
            (h.time, h.message),
            (None, "CtxLimit: 3768/4096, Process:0.44s")
        );
    }

    #[test]
    fn the_clock_of_later_releases_is_a_time_of_day() {
        let h = split_line("[21:07:45] CtxLimit:1754/8192, Amt:78/387").unwrap();
        assert_eq!(h.time, Some(LogTime::time_only(21, 7, 45, 0)));
        assert_eq!(h.message, "CtxLimit:1754/8192, Amt:78/387");
        assert!(split_line("[25:07:45] CtxLimit:1754/8192").is_none());
        assert!(split_line("[21:07] CtxLimit:1754/8192").is_none());
    }

    #[test]
    fn writers_prefixes_start_a_line_and_quotes_do_not() {
        assert!(split_line("koboldcpp-1  | CtxLimit: 1/2").is_some());
        assert!(split_line("koboldcpp-1  | [10:00:00] CtxLimit:1/2").is_some());
        assert!(split_line("Generating (387 / 387 tokens)\rCtxLimit: 1/2").is_some());
        assert!(split_line(" CtxLimit: 1/2").is_some());
        assert!(split_line("please move a line with `CtxLimit: 111/111, ...`").is_none());
        assert!(split_line("x [10:00:00] CtxLimit:1/2").is_none());
        assert!(split_line("say 'a | CtxLimit: 1/2").is_none());
    }

    #[test]
    fn many_openings_after_many_blanks_take_linear_time() {
        let line = format!("{}{}", " ".repeat(200_000), "CtxLimit:x ".repeat(100_000));
        let started = std::time::Instant::now();
        let heads = memchr::memmem::find_iter(line.as_bytes(), OPENING)
            .filter(|&at| split(&line, at).is_some())
            .count();
        assert_eq!(heads, 1);
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }
}
