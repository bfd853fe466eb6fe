//! The vLLM record head: `[(Process pid=N) ]LEVEL MM-DD HH:MM:SS [file.py:N] `.
//!
//! Before 0.8.0 the file field has no opening bracket (`metrics.py:345] `); from 0.10.2 at
//! DEBUG level it is a short relative path (`[v1/metrics/loggers.py:335]`). The head is
//! searched for anywhere in the line: tqdm bars, `docker compose` and supervisors put text
//! in front of it. A line without a head (JSON logging, `journalctl -o cat` of a custom
//! format) is taken whole as the message; a message behind a head of another format is found
//! by the dispatch ([`crate::foreign`]).

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use nom::{
    bytes::complete::{tag, take_while1, take_while_m_n},
    character::complete::char,
    combinator::opt,
    IResult, Parser,
};

use crate::LogTime;

/// A line split into its record head (when it has one) and its message.
#[derive(Debug, Clone, PartialEq)]
pub struct Head<'a> {
    pub time: Option<LogTime>,
    pub process: Option<&'a str>,
    pub message: &'a str,
}

static LEVELS: LazyLock<AhoCorasick> =
    LazyLock::new(|| AhoCorasick::new(LEVEL_WORDS).expect("plain strings"));

/// Splits a line into head and message. Never fails: without a head the whole line,
/// less any leading process prefixes, is the message. Always inlined: with the foreign-head
/// reader as a second caller the compiler stopped inlining it into [`crate::vllm`]'s
/// `read_message`, which every stats line goes through (0.4% of a one-shot run's instructions).
#[inline(always)]
pub fn split(line: &str) -> Head<'_> {
    for found in LEVELS.find_iter(line) {
        if let Ok((message, time)) = after_level(&line[found.end()..]) {
            return Head {
                time: Some(time),
                process: last_process(&line[..found.start()]),
                message,
            };
        }
    }
    let mut message = line;
    let mut process = None;
    while let Some((name, rest)) = process_prefix(message) {
        process = Some(name);
        message = rest;
    }
    Head {
        time: None,
        process,
        message,
    }
}

/// The level words a head starts with (after any process prefixes).
pub const LEVEL_WORDS: [&str; 5] = ["DEBUG ", "INFO ", "WARNING ", "ERROR ", "CRITICAL "];

/// Where the message of a head whose level word ends at `level_end` begins, when the rest of a
/// head follows it (`MM-DD HH:MM:SS [file.py:N] `).
pub fn message_at(line: &str, level_end: usize) -> Option<usize> {
    let (message, _) = after_level(&line[level_end..]).ok()?;
    Some(line.len() - message.len())
}
/// Where a head whose level word is at `level_at` starts: before the `(Name pid=N) ` groups
/// right in front of it, looking no further back than `floor`. A record glued to the one before
/// keeps its process that way (`...hit rate: 0.0%(APIServer pid=1) INFO 07-28 ...`).
pub fn start(line: &str, level_at: usize, floor: usize) -> usize {
    let mut start = level_at;
    while let Some(before) = line[floor..start].strip_suffix(") ") {
        let Some(open) = opening_paren(before) else {
            break;
        };
        match process_prefix(&line[floor + open..start]) {
            Some((_, "")) => start = floor + open,
            _ => break,
        }
    }
    start
}

/// Where the `(` is that opens the group `text` ends inside (nested groups skipped); `None`
/// when the parentheses do not balance.
fn opening_paren(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in text.bytes().enumerate().rev() {
        match b {
            b')' => depth += 1,
            b'(' if depth == 0 => return Some(i),
            b'(' => depth -= 1,
            _ => {}
        }
    }
    None
}

// Always inlined for the same reason as [`split`]: with two copies of it the compiler stopped
// inlining this into them (0.2% of a one-shot run's instructions).
#[inline(always)]
fn two_digits(input: &str) -> IResult<&str, u8> {
    take_while_m_n(2, 2, |c: char| c.is_ascii_digit())
        .map_res(str::parse::<u8>)
        .parse(input)
}

/// `MM-DD HH:MM:SS [file.py:N] ` after the level word; returns the message. Always inlined:
/// with [`message_at`] as a second caller the compiler stopped inlining it into [`split`], which
/// every stats line goes through.
#[inline(always)]
fn after_level(input: &str) -> IResult<&str, LogTime> {
    let (input, (month, _, day, _, hour, _, minute, _, second, _)) = (
        two_digits,
        char('-'),
        two_digits,
        char(' '),
        two_digits,
        char(':'),
        two_digits,
        char(':'),
        two_digits,
        char(' '),
    )
        .parse(input)?;
    let (input, _) = (
        opt(char('[')),
        take_while1(|c: char| c != ']' && c != ':' && !c.is_whitespace()),
        char(':'),
        take_while1(|c: char| c.is_ascii_digit()),
        tag("] "),
    )
        .parse(input)?;
    let valid = LogTime::is_valid_clock(
        month.into(),
        day.into(),
        hour.into(),
        minute.into(),
        second.into(),
    );
    if !valid {
        return Err(nom::Err::Error(nom::error::Error::new(
            input,
            nom::error::ErrorKind::Verify,
        )));
    }
    Ok((
        input,
        LogTime {
            year: None,
            month,
            day,
            hour,
            minute,
            second,
            nanos: 0,
            utc_offset: None,
        },
    ))
}

/// The name in the last `(Name pid=N)` (or Ray's `(Name pid=N, ip=A.B.C.D)`) group.
///
/// The name is read back to its matching `(`, so Ray Data's nested actor names
/// (`(MapWorker(MapBatches(vLLMEngineStageUDF)) pid=41262, ip=10.0.70.78)`) stay whole; SkyPilot's
/// `(task, pid=17433)` puts a comma before `pid`, which is not part of the name.
#[inline(always)]
pub(crate) fn last_process(before_head: &str) -> Option<&str> {
    // Each `=` from the right, not a `memmem` finder for ` pid=`: building the finder cost more
    // than searching the few bytes in front of a stats line's head (1% of a one-shot run's
    // instructions).
    let bytes = before_head.as_bytes();
    for equals in memchr::memrchr_iter(b'=', bytes) {
        let Some(at) = equals
            .checked_sub(4)
            .filter(|&at| &bytes[at..equals] == b" pid")
        else {
            continue;
        };
        let tail = &before_head[at + 5..];
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || !matches!(tail.as_bytes().get(digits), Some(b')') | Some(b',')) {
            continue;
        }
        if let Some(name) = group_name(&before_head[..at]) {
            return Some(name);
        }
    }
    None
}

/// The name that ends `before_pid`, back to the `(` that opens its group; `None` when the
/// parentheses do not balance or the name is empty.
fn group_name(before_pid: &str) -> Option<&str> {
    let open = opening_paren(before_pid)?;
    let name = before_pid[open + 1..].trim_end_matches(',');
    (!name.is_empty()).then_some(name)
}

/// One leading `(Name pid=N) ` group.
fn process_prefix(input: &str) -> Option<(&str, &str)> {
    let rest = input.strip_prefix('(')?;
    let at = rest.find(" pid=")?;
    let name = group_name(&input[..at + 1])
        .filter(|name| rest.starts_with(name) && name.len() + 1 >= at)?;
    let close = at + rest[at..].find(')')?;
    let after = rest[close + 1..].strip_prefix(' ')?;
    Some((name, after))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_head_after_process_prefixes() {
        let h = split("(APIServer pid=812) INFO 11-22 13:25:01 [loggers.py:257] Engine 000: x");
        assert_eq!(h.process, Some("APIServer"));
        assert_eq!(h.message, "Engine 000: x");
        assert_eq!(h.time.unwrap().to_string(), "11-22 13:25:01");
    }

    #[test]
    fn takes_the_innermost_of_nested_prefixes() {
        let h = split("(EngineCore_DP0 pid=2425173) (Worker pid=2425180) INFO 01-09 00:44:40 [acl_graph.py:194] m");
        assert_eq!(h.process, Some("Worker"));
    }

    #[test]
    fn reads_the_pre_0_8_file_field_without_bracket() {
        let h = split("INFO 02-28 21:48:18 metrics.py:161] Avg prompt");
        assert_eq!(h.message, "Avg prompt");
    }

    #[test]
    fn finds_a_head_glued_to_a_progress_bar() {
        let h = split("Processed prompts:   0%| | 0/4 [00:00<?, ?it/s]INFO 11-19 08:04:38 [loggers.py:236] Engine 000: m");
        assert_eq!(h.message, "Engine 000: m");
    }

    #[test]
    fn without_a_head_the_line_is_the_message() {
        let h = split("(APIServer pid=1) Engine 000: m");
        assert_eq!(
            (h.time, h.process, h.message),
            (None, Some("APIServer"), "Engine 000: m")
        );
    }

    #[test]
    fn reads_nested_ray_names_and_skypilot_commas() {
        let h = split("(MapWorker(MapBatches(vLLMEngineStageUDF)) pid=41262, ip=10.0.70.78) INFO 11-13 00:47:18 [loggers.py:147] m");
        assert_eq!(h.process, Some("MapWorker(MapBatches(vLLMEngineStageUDF))"));
        let h = split("(task, pid=17433) INFO 03-28 04:32:50 metrics.py:218] m");
        assert_eq!(h.process, Some("task"));
        let h = split("(task, pid=17433) Avg prompt");
        assert_eq!((h.process, h.message), (Some("task"), "Avg prompt"));
    }

    #[test]
    fn a_uvicorn_line_is_no_head() {
        let h = split("INFO:     127.0.0.1:46228 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK");
        assert!(h.time.is_none());
    }
}
