//! One small decoder per envelope, and the detection that picks one.

use std::borrow::Cow;

use serde::Deserialize;

use super::time::{parse_datetime, parse_syslog_time};
use super::{Decoded, EnvelopeKind};

/// Which envelope a line is in, when it clearly is in one.
pub fn detect(line: &str) -> Option<EnvelopeKind> {
    if line.starts_with("{\"log\":") && docker(line, &mut String::new(), usize::MAX).is_some() {
        return Some(EnvelopeKind::Docker);
    }
    if line.starts_with('{') && line.contains("\"message\"") && json(line).is_some() {
        return Some(EnvelopeKind::Json);
    }
    if cri_fields(line).is_some() {
        return Some(EnvelopeKind::Cri);
    }
    if journald(line, 2000).is_some() {
        return Some(EnvelopeKind::Journald);
    }
    // Plain vLLM or Triton records: settle at once, so a later JSON-looking line (a TRT-LLM
    // iteration record) is not taken for an envelope.
    if line.contains("] ") {
        return Some(EnvelopeKind::Plain);
    }
    None
}

pub fn decode<'a>(
    kind: EnvelopeKind,
    line: &'a str,
    partial: &mut String,
    cap: usize,
    year: i32,
) -> Decoded<'a> {
    match kind {
        EnvelopeKind::Auto | EnvelopeKind::Plain => Decoded::Message {
            text: Cow::Borrowed(line),
            time: None,
        },
        EnvelopeKind::Docker => match docker(line, partial, cap) {
            Some(decoded) => decoded,
            None => Decoded::Invalid,
        },
        EnvelopeKind::Cri => match cri_fields(line) {
            Some((time, is_partial, content)) => join(partial, content, is_partial, cap, time),
            None => Decoded::Invalid,
        },
        // JSON logging mixes in plain stderr (raw tracebacks): those pass through as they are.
        EnvelopeKind::Json => match json(line) {
            Some((text, time)) => Decoded::Message { text, time },
            None => Decoded::Message {
                text: Cow::Borrowed(line),
                time: None,
            },
        },
        EnvelopeKind::Journald => match journald(line, year) {
            Some((text, time)) => Decoded::Message {
                text: Cow::Borrowed(text),
                time: Some(time),
            },
            None => Decoded::Invalid,
        },
    }
}

/// Appends a part; on the last part returns the whole line.
fn join<'a>(
    partial: &mut String,
    content: &'a str,
    is_partial: bool,
    cap: usize,
    time: f64,
) -> Decoded<'a> {
    if is_partial {
        if partial.len() + content.len() <= cap {
            partial.push_str(content);
        }
        return Decoded::Partial;
    }
    if partial.is_empty() {
        return Decoded::Message {
            text: Cow::Borrowed(content),
            time: Some(time),
        };
    }
    let mut whole = std::mem::take(partial);
    whole.push_str(content);
    Decoded::Message {
        text: Cow::Owned(whole),
        time: Some(time),
    }
}

#[derive(Deserialize)]
struct DockerRecord<'a> {
    #[serde(borrow)]
    log: Cow<'a, str>,
    #[serde(borrow, default)]
    time: Option<Cow<'a, str>>,
}

/// Docker json-file: a line longer than 16 KiB is split, and only its last chunk ends in `\n`.
fn docker<'a>(line: &'a str, partial: &mut String, cap: usize) -> Option<Decoded<'a>> {
    let record: DockerRecord<'_> = serde_json::from_str(line).ok()?;
    let time = record
        .time
        .as_deref()
        .and_then(parse_datetime)
        .map(|(t, _)| t);
    let log = record.log.into_owned();
    let (content, is_partial) = match log.strip_suffix('\n') {
        Some(content) => (
            content.strip_suffix('\r').unwrap_or(content).to_string(),
            false,
        ),
        None => (log, true),
    };
    if is_partial {
        if partial.len() + content.len() <= cap {
            partial.push_str(&content);
        }
        return Some(Decoded::Partial);
    }
    let text = if partial.is_empty() {
        content
    } else {
        let mut whole = std::mem::take(partial);
        whole.push_str(&content);
        whole
    };
    Some(Decoded::Message {
        text: Cow::Owned(text),
        time,
    })
}

/// CRI: `<RFC3339Nano> <stdout|stderr> <P|F>[:more tags] <content>`.
fn cri_fields(line: &str) -> Option<(f64, bool, &str)> {
    let (time, rest) = parse_datetime(line)?;
    let rest = rest.strip_prefix(' ')?;
    let rest = rest
        .strip_prefix("stdout ")
        .or_else(|| rest.strip_prefix("stderr "))?;
    let (tag, content) = match rest.split_once(' ') {
        Some((tag, content)) => (tag, content),
        None => (rest, ""),
    };
    let is_partial = match tag.split(':').next()? {
        "P" => true,
        "F" => false,
        _ => return None,
    };
    Some((time, is_partial, content))
}

#[derive(Deserialize)]
struct JsonRecord<'a> {
    #[serde(borrow)]
    message: Cow<'a, str>,
    #[serde(borrow, default)]
    asctime: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
}

/// A JSON logging record; its `asctime` (local time, read as UTC) or `timestamp` is the time.
fn json(line: &str) -> Option<(Cow<'_, str>, Option<f64>)> {
    let record: JsonRecord<'_> = serde_json::from_str(line).ok()?;
    let time = record
        .asctime
        .as_deref()
        .or(record.timestamp.as_deref())
        .and_then(parse_datetime)
        .map(|(t, _)| t);
    Some((record.message, time))
}

/// `[<PRI>]Nov 22 13:25:01 host ident[pid]: message` or `2026-11-22T13:25:01+0000 host ident[pid]: message`.
fn journald(line: &str, year: i32) -> Option<(&str, f64)> {
    let mut rest = line;
    if let Some(after) = rest.strip_prefix('<') {
        let close = after.find('>')?;
        if close == 0 || close > 3 || !after[..close].bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        rest = &after[close + 1..];
    }
    let (time, rest) = parse_syslog_time(rest, year).or_else(|| parse_datetime(rest))?;
    let rest = rest.strip_prefix(' ')?;
    let (_host, rest) = rest.split_once(' ')?;
    let colon = rest.find(": ")?;
    let ident = &rest[..colon];
    if ident.is_empty() || ident.contains(' ') {
        return None;
    }
    Some((&rest[colon + 2..], time))
}

#[cfg(test)]
mod tests {
    use super::super::Decoder;
    use super::*;

    const STATS: &str =
        "INFO 11-22 13:25:01 [loggers.py:257] Engine 000: Avg prompt throughput: 1.0 tokens/s";

    fn decode_all(kind: EnvelopeKind, lines: &[&str]) -> Vec<String> {
        let mut decoder = Decoder::new(kind, 1 << 16, 2026);
        let mut out = Vec::new();
        for line in lines {
            match decoder.decode(line.as_bytes()) {
                Decoded::Message { text, .. } => out.push(text.into_owned()),
                Decoded::Partial => out.push("<partial>".into()),
                Decoded::Invalid => out.push("<invalid>".into()),
            }
        }
        out
    }

    #[test]
    fn plain_lines_lose_their_colours_and_carriage_return() {
        let line = format!("\x1b[1;36m(APIServer pid=1)\x1b[0;0m {STATS}\r");
        assert_eq!(
            decode_all(EnvelopeKind::Auto, &[&line]),
            [format!("(APIServer pid=1) {STATS}")]
        );
    }

    #[test]
    fn docker_json_file_with_a_split_long_line() {
        let whole = format!("{{\"log\":\"{STATS}\\n\",\"stream\":\"stdout\",\"time\":\"2026-11-22T13:25:01.123456789Z\"}}");
        let first = "{\"log\":\"INFO 11-22 13:25:01 [loggers.py:257] Engine 000: \",\"stream\":\"stdout\",\"time\":\"2026-11-22T13:25:01Z\"}";
        let last = "{\"log\":\"Avg prompt throughput: 1.0 tokens/s\\n\",\"stream\":\"stdout\",\"time\":\"2026-11-22T13:25:01Z\"}";
        assert_eq!(
            decode_all(EnvelopeKind::Auto, &[&whole, first, last, "garbage"]),
            [STATS, "<partial>", STATS, "<invalid>"]
        );
    }

    #[test]
    fn docker_time_is_the_envelope_time() {
        let mut decoder = Decoder::new(EnvelopeKind::Docker, 1 << 16, 2026);
        let line = "{\"log\":\"x\\n\",\"stream\":\"stdout\",\"time\":\"2026-11-22T13:25:01.5Z\"}";
        assert_eq!(
            decoder.decode(line.as_bytes()),
            Decoded::Message {
                text: "x".into(),
                time: Some(1_795_353_901.5)
            }
        );
    }

    #[test]
    fn cri_partials_join_with_the_final_part() {
        let lines = [
            "2026-11-22T13:25:01.123456789Z stdout P INFO 11-22 13:25:01 [loggers.py:257] Engine 000: ",
            "2026-11-22T13:25:01.123456789Z stdout F Avg prompt throughput: 1.0 tokens/s",
            &format!("2026-11-22T13:25:11.000000000Z stderr F {STATS}"),
        ];
        assert_eq!(
            decode_all(EnvelopeKind::Auto, &lines),
            ["<partial>", STATS, STATS]
        );
    }

    #[test]
    fn json_logging_keeps_the_message_and_passes_raw_stderr_through() {
        let line = "{\"asctime\": \"2026-11-22 15:08:18,376\", \"levelname\": \"INFO\", \"message\": \"Engine 000: x\"}";
        assert_eq!(
            decode_all(
                EnvelopeKind::Auto,
                &[line, "Traceback (most recent call last):"]
            ),
            ["Engine 000: x", "Traceback (most recent call last):"]
        );
    }

    #[test]
    fn journald_short_and_iso_and_syslog_pri() {
        let short = format!("Aug 19 18:30:11 vllm vllm[8707]: (APIServer pid=8707) {STATS}");
        let iso = format!("2026-08-19T18:30:11+0000 vllm vllm[8707]: {STATS}");
        let pri = format!("<14>Aug 19 18:30:11 vllm vllm: {STATS}");
        assert_eq!(
            decode_all(EnvelopeKind::Journald, &[&short, &iso, &pri]),
            [
                format!("(APIServer pid=8707) {STATS}"),
                STATS.to_string(),
                STATS.to_string()
            ]
        );
        assert_eq!(detect(&short), Some(EnvelopeKind::Journald));
    }

    #[test]
    fn a_trtllm_json_lines_file_is_plain() {
        assert_eq!(detect("{\"cpuMemUsage\":1,\"iter\":3}"), None);
        assert_eq!(
            decode_all(EnvelopeKind::Auto, &["{\"cpuMemUsage\":1,\"iter\":3}"]),
            ["{\"cpuMemUsage\":1,\"iter\":3}"]
        );
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        let mut decoder = Decoder::new(EnvelopeKind::Plain, 1 << 16, 2026);
        let decoded = decoder.decode(b"Engine 000: \xff\xfe ok");
        assert_eq!(
            decoded,
            Decoded::Message {
                text: "Engine 000: \u{fffd}\u{fffd} ok".into(),
                time: None
            }
        );
    }
}
