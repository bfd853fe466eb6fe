//! The vLLM record head: `[(Process pid=N) ]LEVEL MM-DD HH:MM:SS [file.py:N] `.
//!
//! Before 0.8.0 the file field has no opening bracket (`metrics.py:345] `); from 0.10.2 at
//! DEBUG level it is a short relative path (`[v1/metrics/loggers.py:335]`). The head is
//! searched for anywhere in the line: tqdm bars, `docker compose` and supervisors put text
//! in front of it. A line without a head (JSON logging, `journalctl -o cat` of a custom
//! format) is taken whole as the message; a message behind a head of another format is found
//! by the dispatch ([`crate::foreign`]).

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

/// Splits a line into head and message. Never fails: without a head the whole line,
/// less any leading process prefixes, is the message. Always inlined: with the foreign-head
/// reader as a second caller the compiler stopped inlining it into [`crate::vllm`]'s
/// `read_message`, which every stats line goes through (0.4% of a one-shot run's instructions).
#[inline(always)]
pub fn split(line: &str) -> Head<'_> {
    for (start, end) in level_words(line) {
        if let Ok((message, time)) = after_level(&line[end..]) {
            return Head {
                time: Some(time),
                process: last_process(&line[..start]),
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

/// Where each level word stands in `line` (its start and end), in order. A level word ends with
/// the only space in it, so the words cannot overlap and each is found at a space, by the
/// letters before it: a few bytes checked per space, where a multi-pattern automaton cost a
/// fifth of a stats line's parse.
#[inline(always)]
fn level_words(line: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let bytes = line.as_bytes();
    memchr::memchr_iter(b' ', bytes).filter_map(move |space| {
        let last_letter = *bytes.get(space.checked_sub(1)?)?;
        if !matches!(last_letter, b'G' | b'O' | b'R' | b'L') {
            return None;
        }
        let through_space = &bytes[..=space];
        let word = LEVEL_WORDS
            .iter()
            .find(|word| through_space.ends_with(word.as_bytes()))?;
        Some((space + 1 - word.len(), space + 1))
    })
}

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

/// `MM-DD HH:MM:SS [file.py:N] ` after the level word; returns the message. Read byte by byte
/// (a stats line's head is read once per line, and nom's char-wise productions cost most of the
/// head); a file name that is not ASCII is left to [`after_level_by_chars`], whose
/// `char::is_whitespace` ends it where this could not tell.
#[inline(always)]
fn after_level(input: &str) -> IResult<&str, LogTime> {
    let not_a_head =
        || nom::Err::Error(nom::error::Error::new(input, nom::error::ErrorKind::Verify));
    let bytes = input.as_bytes();
    let clock = bytes.get(..15).ok_or_else(not_a_head)?;
    let two = |at: usize| -> Option<u8> {
        let (tens, ones) = (clock[at], clock[at + 1]);
        (tens.is_ascii_digit() && ones.is_ascii_digit()).then(|| (tens - b'0') * 10 + (ones - b'0'))
    };
    let separators = clock[2] == b'-'
        && clock[5] == b' '
        && clock[8] == b':'
        && clock[11] == b':'
        && clock[14] == b' ';
    let (Some(month), Some(day), Some(hour), Some(minute), Some(second), true) =
        (two(0), two(3), two(6), two(9), two(12), separators)
    else {
        return Err(not_a_head());
    };
    let name_at = if bytes.get(15) == Some(&b'[') { 16 } else { 15 };
    let name_len = bytes[name_at..]
        .iter()
        .take_while(|&&b| {
            b != b']' && b != b':' && !matches!(b, b'\t'..=b'\r' | b' ') && b.is_ascii()
        })
        .count();
    let colon = name_at + name_len;
    match bytes.get(colon) {
        Some(b':') if name_len > 0 => {}
        Some(b) if !b.is_ascii() => return after_level_by_chars(input),
        _ => return Err(not_a_head()),
    }
    let line_digits = bytes[colon + 1..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let rest = &input[colon + 1 + line_digits..];
    let message = match rest.strip_prefix("] ") {
        Some(message) if line_digits > 0 => message,
        _ => return Err(not_a_head()),
    };
    if !LogTime::is_valid_clock(
        month.into(),
        day.into(),
        hour.into(),
        minute.into(),
        second.into(),
    ) {
        return Err(not_a_head());
    }
    Ok((message, clock_time([month, day, hour, minute, second])))
}

/// A head's `MM-DD HH:MM:SS`: no year, no zone.
fn clock_time([month, day, hour, minute, second]: [u8; 5]) -> LogTime {
    LogTime {
        year: None,
        month,
        day,
        hour,
        minute,
        second,
        nanos: 0,
        utc_offset: None,
    }
}

fn two_digits(input: &str) -> IResult<&str, u8> {
    take_while_m_n(2, 2, |c: char| c.is_ascii_digit())
        .map_res(str::parse::<u8>)
        .parse(input)
}

/// [`after_level`] read char by char: the head whose file name holds a byte that is not ASCII.
#[cold]
#[inline(never)]
fn after_level_by_chars(input: &str) -> IResult<&str, LogTime> {
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
    Ok((input, clock_time([month, day, hour, minute, second])))
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
    fn the_head_read_by_bytes_is_the_head_read_by_chars() {
        let after_levels = [
            "11-22 13:25:01 [loggers.py:257] Engine 000: m",
            "02-28 21:48:18 metrics.py:161] Avg prompt",
            "01-09 00:44:40 [v1/metrics/loggers.py:335] m",
            "11-22 13:25:01 [loggers.py:257]",
            "11-22 13:25:01 [loggers.py:257]x",
            "11-22 13:25:01 [loggers.py:] m",
            "11-22 13:25:01 [:257] m",
            "11-22 13:25:01 [] m",
            "11-22 13:25:01 [logg ers.py:257] m",
            "11-22 13:25:01 [logg\u{b}ers.py:257] m",
            "11-22 13:25:01 [logg\u{a0}ers.py:257] m",
            "11-22 13:25:01 [lögger.py:257] m",
            "11-22 13:25:01 [logger.py:257\u{e9}] m",
            "13-22 13:25:01 [loggers.py:257] m",
            "11-22 24:25:01 [loggers.py:257] m",
            "11-22 13:25:0 [loggers.py:257] m",
            "11/22 13:25:01 [loggers.py:257] m",
            "1١-22 13:25:01 [loggers.py:257] m",
            "11-22 13:25:01",
            "",
        ];
        for text in after_levels {
            assert_eq!(
                after_level(text).ok(),
                after_level_by_chars(text).ok(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_uvicorn_line_is_no_head() {
        let h = split("INFO:     127.0.0.1:46228 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK");
        assert!(h.time.is_none());
    }
}
