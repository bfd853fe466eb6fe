//! 2024's `server_log()` records (`LOG_INFO(msg, json{...})`, early 2024 to about Sep 2024;
//! ik_llama.cpp still, and Ollama's embedded copy): one JSON object a line,
//!
//! `{"tid":"14964","timestamp":1717067386,"level":"INFO","function":"print_timings","line":321,
//! "msg":"prompt eval time     = ...","id_slot":0,"id_task":19,"t_prompt_processing":2684.386,...}`
//!
//! or with `--log-format text` the same fields as `INFO [%24s] msg | key=value ...`. Late 2023
//! wrote the JSON with `message` for `msg`; before about Apr 2024 the slot was `slot_id`; Ollama
//! and ipex-llm builds sort the keys. So the JSON is read as JSON, by name. The message text says
//! which record it is and is read as the text eras' bodies are; the exact fields, where the
//! record has them, replace the two-decimal figures of the text.

use std::borrow::Cow;

use serde::Deserialize;

use super::{timing, LlamacppRecord, Origin, Read};

/// The fields of a `server_log()` record that the stats records use.
#[derive(Deserialize, Default)]
struct Fields<'a> {
    #[serde(borrow, default)]
    level: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    function: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    msg: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Option<Cow<'a, str>>,
    #[serde(default)]
    id_slot: Option<i64>,
    #[serde(default)]
    slot_id: Option<i64>,
    #[serde(default)]
    t_prompt_processing: Option<f64>,
    #[serde(default)]
    n_prompt_tokens_processed: Option<f64>,
    #[serde(default)]
    t_token_generation: Option<f64>,
    #[serde(default)]
    n_decoded: Option<f64>,
    #[serde(default)]
    t_token: Option<f64>,
    #[serde(default)]
    n_tokens_second: Option<f64>,
    #[serde(default)]
    t_total: Option<f64>,
    #[serde(default)]
    n_past: Option<f64>,
}

/// The numbers a timing or slot record carries.
#[derive(Default, Clone, Copy)]
struct Numbers {
    t_prompt_processing: Option<f64>,
    n_prompt_tokens_processed: Option<f64>,
    t_token_generation: Option<f64>,
    n_decoded: Option<f64>,
    t_token: Option<f64>,
    n_tokens_second: Option<f64>,
    t_total: Option<f64>,
    n_past: Option<f64>,
}

/// Reads a JSON `server_log()` record. `None` for JSON that is not one (no `level`, `function`
/// and message text: another program's JSON).
pub fn json(object: &str, origin: Origin) -> Option<Read> {
    let fields: Fields<'_> = match serde_json::from_str(object) {
        Ok(fields) => fields,
        // llama.cpp's own record with a value of the wrong type (`"t_total":"x"`), or one cut
        // off: counted as rejected when it is a timing record.
        Err(_) if object.contains("\"print_timings\"") => return Some(Read::Rejected(TIMING)),
        Err(_) => return None,
    };
    fields.level.as_ref()?;
    let function = fields.function.as_deref()?;
    let text = fields.msg.as_deref().or(fields.message.as_deref())?;
    let slot = fields.id_slot.or(fields.slot_id);
    let slot = match slot.map(u32::try_from) {
        Some(Ok(slot)) => Some(slot),
        Some(Err(_)) => return Some(Read::Rejected(claim(function, text)?)),
        None => None,
    };
    let origin = Origin { slot, ..origin };
    let numbers = Numbers {
        t_prompt_processing: fields.t_prompt_processing,
        n_prompt_tokens_processed: fields.n_prompt_tokens_processed,
        t_token_generation: fields.t_token_generation,
        n_decoded: fields.n_decoded,
        t_token: fields.t_token,
        n_tokens_second: fields.n_tokens_second,
        t_total: fields.t_total,
        n_past: fields.n_past,
    };
    record(function, text, origin, numbers)
}

/// Reads a `--log-format text` record: `INFO [           print_timings] msg | tid="1" ...`.
pub fn text(message: &str, origin: Origin) -> Option<Read> {
    let level_end = message.find(" [")?;
    let level = &message[..level_end];
    if level.is_empty() || level.len() > 5 || !level.bytes().all(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let rest = &message[level_end + 2..];
    let close = rest.find("] ")?;
    let function = rest[..close].trim_start();
    let rest = &rest[close + 2..];
    let (text, pairs) = match rest.find(" | ") {
        Some(bar) => (&rest[..bar], &rest[bar + 3..]),
        None => (rest.trim_end().strip_suffix(" |").unwrap_or(rest), ""),
    };
    let number = |key: &str| -> Result<Option<f64>, ()> {
        match pair(pairs, key) {
            // nlohmann's `dump` writes a NaN as `null`.
            None | Some("null") => Ok(None),
            Some(v) => v.parse::<f64>().map(Some).map_err(|_| ()),
        }
    };
    let read = || -> Result<(Option<f64>, Numbers), ()> {
        let slot = match number("id_slot")? {
            Some(slot) => Some(slot),
            None => number("slot_id")?,
        };
        let numbers = Numbers {
            t_prompt_processing: number("t_prompt_processing")?,
            n_prompt_tokens_processed: number("n_prompt_tokens_processed")?,
            t_token_generation: number("t_token_generation")?,
            n_decoded: number("n_decoded")?,
            t_token: number("t_token")?,
            n_tokens_second: number("n_tokens_second")?,
            t_total: number("t_total")?,
            n_past: number("n_past")?,
        };
        Ok((slot, numbers))
    };
    let Ok((slot, numbers)) = read() else {
        return Some(Read::Rejected(claim(function, text)?));
    };
    let slot = match slot {
        Some(s) if s >= 0.0 && s.fract() == 0.0 && s <= f64::from(u32::MAX) => Some(s as u32),
        Some(_) => return Some(Read::Rejected(claim(function, text)?)),
        None => None,
    };
    record(function, text, Origin { slot, ..origin }, numbers)
}

const TIMING: &str = "llamacpp_timing";

/// The grammar a record of `function` saying `text` is, when it is a stats record.
fn claim(function: &str, text: &str) -> Option<&'static str> {
    let text = text.trim_start();
    if function == "print_timings" || timing::starts_as_timing(text) {
        Some(TIMING)
    } else if is_slot_line(text) {
        Some("llamacpp_slot")
    } else {
        None
    }
}

fn is_slot_line(text: &str) -> bool {
    text == "slot is processing task"
        || text == "slot released"
        || text.starts_with("all slots are idle")
}

/// The record a `server_log()` message says, its exact numbers in place of the text's.
fn record(function: &str, text: &str, origin: Origin, n: Numbers) -> Option<Read> {
    let trimmed = text.trim();
    match trimmed {
        "slot is processing task" => {
            return Some(Read::Record(LlamacppRecord::SlotBusy { origin }))
        }
        "slot released" => {
            let n_tokens = n.n_past.map(|v| count(v).ok_or(()));
            return Some(match n_tokens.transpose() {
                Ok(n_tokens) => Read::Record(LlamacppRecord::SlotFree { origin, n_tokens }),
                Err(()) => Read::Rejected("llamacpp_slot"),
            });
        }
        _ if trimmed.starts_with("all slots are idle") => {
            return Some(Read::Record(LlamacppRecord::AllIdle { origin }))
        }
        _ => {}
    }
    if function != "print_timings" && !timing::starts_as_timing(trimmed) {
        return None;
    }
    let Some(mut record) = timing::parse(trimmed, origin) else {
        return Some(Read::Rejected(TIMING));
    };
    if exact(&mut record, n).is_none() {
        return Some(Read::Rejected(TIMING));
    }
    Some(Read::Record(record))
}

/// The record with the JSON's own numbers where it has them (`None`: a count that is not one).
fn exact(record: &mut LlamacppRecord, n: Numbers) -> Option<()> {
    match record {
        LlamacppRecord::PromptEval(e) => {
            e.time_ms = n.t_prompt_processing.unwrap_or(e.time_ms);
            if let Some(tokens) = n.n_prompt_tokens_processed {
                e.tokens = count(tokens)?;
            }
            e.ms_per_token = n.t_token.or(e.ms_per_token);
            e.tokens_per_second = n.n_tokens_second.or(e.tokens_per_second);
        }
        LlamacppRecord::Eval(e) => {
            e.time_ms = n.t_token_generation.unwrap_or(e.time_ms);
            if let Some(tokens) = n.n_decoded {
                e.tokens = count(tokens)?;
            }
            e.ms_per_token = n.t_token.or(e.ms_per_token);
            e.tokens_per_second = n.n_tokens_second.or(e.tokens_per_second);
        }
        LlamacppRecord::Total(t) => t.time_ms = n.t_total.unwrap_or(t.time_ms),
        _ => {}
    }
    Some(())
}

/// A count printed as a JSON number: whole and not negative.
fn count(value: f64) -> Option<u64> {
    (value >= 0.0 && value.fract() == 0.0 && value < 1.8e19).then_some(value as u64)
}

/// The value of ` key=` in a text record's `key=value` list (numbers only: up to the next
/// space).
fn pair<'a>(pairs: &'a str, key: &str) -> Option<&'a str> {
    let mut from = 0;
    while let Some(at) = pairs[from..].find(key) {
        let start = from + at;
        let end = start + key.len();
        let before_ok = start == 0 || pairs.as_bytes()[start - 1] == b' ';
        if before_ok && pairs[end..].starts_with('=') {
            let value = &pairs[end + 1..];
            let len = value.find(' ').unwrap_or(value.len());
            return Some(&value[..len]);
        }
        from = end;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_found_by_whole_key() {
        let pairs = "tid=\"1\" timestamp=17 id_slot=0 id_task=0 t_token=18.5 n_tokens_second=53.8";
        assert_eq!(pair(pairs, "t_token"), Some("18.5"));
        assert_eq!(pair(pairs, "id_slot"), Some("0"));
        assert_eq!(pair(pairs, "slot"), None);
    }
}
