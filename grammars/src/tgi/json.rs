//! The JSON form (`--json-output`, the default of Google's TGI images): tracing-subscriber's
//! `json().flatten_event(true)` writes one object per event, the event's fields at the top
//! (`message`), the current span's fields and name under `"span"`, every span under `"spans"`:
//!
//! ```text
//! {"timestamp":"2024-03-09T05:08:19.961164Z","level":"INFO","message":"Success","target":"text_generation_router::server","filename":"router/src/server.rs","line_number":299,"span":{"inference_time":"610.405028ms",...,"name":"generate"},"spans":[...]}
//! ```
//!
//! The agent hands such a line over whole (its JSON envelope keeps `message` alone otherwise).
//! Keys are read by name: tracing-subscriber's key order is not part of the format.

use std::borrow::Cow;

use super::{capacity, text, timed, Read};
use crate::lex::loose::{self, Loose};
use crate::lex::time;

/// Reads one JSON event object; `None` when it is no event of ours.
pub fn read(line: &str) -> Option<Read<'_>> {
    let Some(entries) = loose::object(line) else {
        return claimed(line).map(Err);
    };
    let get = |key: &str| entries.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let target = get("target")?.as_str()?;
    if !text::TARGETS.iter().any(|t| target.starts_with(t)) {
        return None;
    }
    if get("level")?.as_str()? != "INFO" {
        return None;
    }
    let message = get("message")?.as_str()?;
    let time = get("timestamp")
        .and_then(Loose::as_str)
        .and_then(|t| time::iso_zulu(t).filter(|(_, rest)| rest.is_empty()));
    if let Some(tokens) = message.strip_prefix("Setting max batch total tokens to ") {
        let record = capacity(tokens);
        return Some(match time {
            Some((time, _)) => record.map(|r| (time, r)),
            None => Err("tgi_capacity"),
        });
    }
    let span = get("span")?.as_map()?;
    if !span.iter().any(|(k, _)| k == "total_time") {
        return None;
    }
    let fields = span
        .iter()
        .filter(|(k, _)| k != "name")
        .map(|(k, v)| (k.as_ref(), v.as_str()));
    let grammar = if span.iter().any(|(k, _)| k == "tokenization_time") {
        "tgi_embed"
    } else {
        "tgi_request"
    };
    if message != "Success" {
        return Some(Err(grammar));
    }
    let (Some((time, _)), Some(name)) = (time, span_name(span)) else {
        return Some(Err(grammar));
    };
    // The record outlives the parsed map: the span name is copied out of it (a short word).
    Some(timed(Cow::Owned(name.to_owned()), fields).map(|r| (time, r)))
}

fn span_name<'a>(span: &'a [(Cow<'_, str>, Loose<'_>)]) -> Option<&'a str> {
    span.iter().find(|(k, _)| k == "name")?.1.as_str()
}

/// The grammar of a JSON `Success` event of ours that does not parse (cut off): one that
/// starts as tracing-subscriber's objects do and names our message and a target of ours.
fn claimed(line: &str) -> Option<&'static str> {
    if !line.starts_with("{\"timestamp\":\"") || !line.contains("\"message\":\"Success\"") {
        return None;
    }
    let (_, target) = line.split_once("\"target\":\"")?;
    text::TARGETS
        .iter()
        .any(|t| target.starts_with(t))
        .then_some(if line.contains("\"tokenization_time\"") {
            "tgi_embed"
        } else {
            "tgi_request"
        })
}
