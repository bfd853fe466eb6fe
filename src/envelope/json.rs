//! JSON logging (python-json-logger, vLLM 0.32+'s `--logging-config.formatter json`): one object
//! per line, the engine's text in `message`, the time in `asctime` (local time, without a zone).
//!
//! Rust's tracing-subscriber JSON (TGI and TEI with `--json-output`) is the exception: its
//! `message` is only `Success`, and what the event says is in the span fields beside it
//! (`"span":{"total_time":..}`). Such a record, known by its `target` key (python's loggers
//! write `name`), is handed to the grammars whole.
use std::borrow::Cow;

use llmtail_grammars::LogTime;
use serde::Deserialize;

use super::time::parse_datetime;

#[derive(Deserialize)]
struct JsonRecord<'a> {
    #[serde(borrow)]
    message: Cow<'a, str>,
    #[serde(borrow, default)]
    asctime: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(default)]
    target: Option<serde::de::IgnoredAny>,
}

/// A JSON logging record; its `asctime` (local time) or `timestamp` is the time.
pub fn decode(line: &str) -> Option<(Cow<'_, str>, Option<LogTime>)> {
    let record: JsonRecord<'_> = serde_json::from_str(line).ok()?;
    let time = record
        .asctime
        .as_deref()
        .or(record.timestamp.as_deref())
        .and_then(parse_datetime)
        .map(|(t, _)| t);
    if record.target.is_some() {
        return Some((Cow::Borrowed(line), time));
    }
    Some((record.message, time))
}

#[cfg(test)]
mod tests {
    use crate::envelope::tests_support::decode_all;
    use crate::envelope::EnvelopeKind;

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
    fn tracing_json_is_kept_whole_for_its_span_fields() {
        let line = r#"{"timestamp":"2024-03-09T05:12:44.213540Z","level":"INFO","message":"Success","target":"text_generation_router::server","span":{"total_time":"1s","name":"generate"}}"#;
        assert_eq!(decode_all(EnvelopeKind::Json, &[line]), [line]);
    }
}
