//! Docker's json-file driver: `{"log":"...\n","stream":"stdout","time":"RFC 3339"}`.
//! Docker splits a line longer than 16 KiB into several records; only the last ends in `\n`.
use std::borrow::Cow;

use serde::Deserialize;

use super::time::parse_datetime;
use super::Decoded;

#[derive(Deserialize)]
struct DockerRecord<'a> {
    #[serde(borrow)]
    log: Cow<'a, str>,
    #[serde(borrow, default)]
    time: Option<Cow<'a, str>>,
}

/// Docker json-file: a line longer than 16 KiB is split, and only its last chunk ends in `\n`.
pub fn decode<'a>(line: &'a str, partial: &mut String, cap: usize) -> Option<Decoded<'a>> {
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

#[cfg(test)]
mod tests {
    use crate::envelope::tests_support::{decode_all, STATS};
    use crate::envelope::{Decoded, Decoder, EnvelopeKind};

    #[test]
    fn docker_json_file_with_a_split_long_line() {
        let whole = format!("{{\"log\":\"{STATS}\\n\",\"stream\":\"stdout\",\"time\":\"2026-11-22T13:25:01.123456789Z\"}}");
        let first = "{\"log\":\"INFO 11-22 13:25:01 [loggers.py:257] Engine 000: \",\"stream\":\"stdout\",\"time\":\"2026-11-22T13:25:01Z\"}";
        let last = "{\"log\":\"Avg prompt throughput: 1.0 tokens/s\\n\",\"stream\":\"stdout\",\"time\":\"2026-11-22T13:25:01Z\"}";
        assert_eq!(
            decode_all(EnvelopeKind::Docker, &[&whole, first, last, "garbage"]),
            [STATS, "<partial>", STATS, "<outside> garbage"]
        );
    }

    #[test]
    fn docker_time_is_the_envelope_time() {
        let mut decoder = Decoder::new(EnvelopeKind::Docker, 1 << 16);
        let line = "{\"log\":\"x\\n\",\"stream\":\"stdout\",\"time\":\"2026-11-22T13:25:01.5Z\"}";
        let Decoded::Message { text, time } = decoder.decode(line.as_bytes()) else {
            panic!("not a message");
        };
        assert_eq!(text, "x");
        assert_eq!(time.unwrap().to_string(), "2026-11-22 13:25:01.5 UTC");
    }
}
