//! The LMDeploy stats head: `[%Y-%m-%d %H:%M:%S DP{rank}] ` (0.9.2 to 0.18) or
//! `[%Y-%m-%d %H:%M:%S Engine {rank:03d}] ` (the development branch after 0.18).
//!
//! `LoggingStatLogger.log()` writes its line with `print()`, not through a logger, so the head
//! is its own bracket: the local wall clock (`datetime.fromtimestamp(time.time())`) and the data
//! parallel rank whose logger printed it. The bracket starts the line, or follows what a writer
//! puts in front of whole lines: `docker compose logs`' `service-1  | `, or a progress bar that
//! ended in `\r`. Anything else in front (`prompt='[2026-...`) is a request log or a paste quoting
//! the line, not the engine's record.

use nom::{
    branch::alt,
    bytes::complete::{tag, take_while_m_n},
    character::complete::char,
    IResult, Parser,
};

use crate::lex::number::uint;
use crate::LogTime;

/// A stats line split into its head and its message.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Head<'a> {
    pub time: LogTime,
    /// The data-parallel rank of the logger that printed the line (`DP1`, `Engine 001`).
    pub dp_rank: u32,
    pub message: &'a str,
}

/// The head at the start of `line` (see the module's doc for what may come before it), or
/// `None`.
pub fn split(line: &str) -> Option<Head<'_>> {
    let blanks = line.len() - line.trim_start_matches([' ', '\t']).len();
    memchr::memchr_iter(b'[', line.as_bytes())
        .filter(|&at| at >= blanks && starts_a_line(&line[blanks..at]))
        .find_map(|at| {
            let (message, (time, dp_rank)) = head(&line[at..]).ok()?;
            Some(Head {
                time,
                dp_rank,
                message,
            })
        })
}

/// True when a head right after `before` (the line's text after its leading blanks) starts a
/// line as written: nothing, a carriage return, or a `docker compose` prefix (`service-1  | `;
/// its service name is short, which also keeps this constant-time for every `[` of a line).
fn starts_a_line(before: &str) -> bool {
    before.is_empty()
        || before.ends_with('\r')
        || (before.len() <= 80
            && before.strip_suffix(" | ").is_some_and(|service| {
                !service.trim().is_empty() && !service.contains(['\'', '"', '|'])
            }))
}

fn digits<'a>(n: usize) -> impl Parser<&'a str, Output = u32, Error = nom::error::Error<&'a str>> {
    take_while_m_n(n, n, |c: char| c.is_ascii_digit()).map_res(str::parse::<u32>)
}

/// `DP3` or `Engine 003`.
fn rank(input: &str) -> IResult<&str, u32> {
    alt((
        (tag("DP"), uint).map_res(|(_, n)| u32::try_from(n)),
        (tag("Engine "), digits(3)).map(|(_, n)| n),
    ))
    .parse(input)
}

fn head(input: &str) -> IResult<&str, (LogTime, u32)> {
    let (rest, (_, year, _, month, _, day, _, hour, _, minute, _, second, _, rank, _)) = (
        char('['),
        digits(4),
        char('-'),
        digits(2),
        char('-'),
        digits(2),
        char(' '),
        digits(2),
        char(':'),
        digits(2),
        char(':'),
        digits(2),
        char(' '),
        rank,
        tag("] "),
    )
        .parse(input)?;
    if !LogTime::is_valid_clock(month, day, hour, minute, second) {
        return Err(nom::Err::Error(nom::error::Error::new(
            input,
            nom::error::ErrorKind::Verify,
        )));
    }
    let time = LogTime {
        year: Some(year as u16),
        month: month as u8,
        day: day as u8,
        hour: hour as u8,
        minute: minute as u8,
        second: second as u8,
        nanos: 0,
        utc_offset: None,
    };
    Ok((rest, (time, rank)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_rank_spellings() {
        let h = split("[2026-02-05 17:05:17 DP12] Avg thr").unwrap();
        assert_eq!((h.dp_rank, h.message), (12, "Avg thr"));
        assert_eq!(h.time.to_string(), "2026-02-05 17:05:17");
        let h = split("[2026-07-01 08:00:00 Engine 003] Avg thr").unwrap();
        assert_eq!((h.dp_rank, h.message), (3, "Avg thr"));
    }

    #[test]
    fn other_brackets_are_no_head() {
        // SGLang's head carries more parts after DP; vLLM's file field has no date.
        assert!(split("[2026-07-10 17:00:22 DP0 TP0] Decode batch").is_none());
        assert!(split("[2026-07-10 17:00:22] Decode batch").is_none());
        assert!(split("[2026-13-10 17:00:22 DP0] Avg").is_none());
        assert!(split("[2026-07-10 17:00:22 Engine 0] Avg").is_none());
        assert!(split("x [2026-07-10 17:00:22 DP0] Avg").is_none());
        assert!(split("prompt='[2026-07-10 17:00:22 DP0] Avg").is_none());
    }

    #[test]
    fn compose_prefixes_and_carriage_returns_start_a_line() {
        let h = split("lmdeploy-1  | [2026-02-05 17:05:17 DP1] Avg thr").unwrap();
        assert_eq!((h.dp_rank, h.message), (1, "Avg thr"));
        assert!(split("100%|####| 4/4\r[2026-02-05 17:05:17 DP0] Avg thr").is_some());
        assert!(split("say 'a | [2026-02-05 17:05:17 DP0] Avg thr").is_none());
    }
}
