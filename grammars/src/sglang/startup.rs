//! The scheduler's other lines worth a series: its capacity at startup, and retraction under
//! KV-cache pressure (formats doc section 1.7).

use serde::Serialize;

use crate::lex::field::{set_once as set, whole};
use crate::lex::number::{float, uint};

/// `max_total_num_tokens=N, chunked_prefill_size=N, max_prefill_tokens=N,
/// max_running_requests=N, context_len=N` (other `key=value` parts skipped).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SglangCapacity {
    pub max_total_num_tokens: u64,
    pub max_running_requests: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunked_prefill_size: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_prefill_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_len: Option<u64>,
}

/// A retraction: `Decode out of memory happened. #retracted_reqs: N, ...` (to 0.4.6; 0.1.x in
/// lower case with `, `) or `KV cache pool is full. Retract requests. #retracted_reqs: N, ...`
/// (0.4.7+).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SglangRetract {
    pub retracted_reqs: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aborted_retracted_reqs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_tokens_gained: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mamba_num_gained: Option<u64>,
    /// `#new_token_ratio: a -> b`.
    pub new_token_ratio_before: f64,
    pub new_token_ratio_after: f64,
}

/// The start of a retraction message, or `None`.
pub fn retract_body(message: &str) -> Option<&str> {
    message
        .strip_prefix("KV cache pool is full. Retract requests. ")
        .or_else(|| message.strip_prefix("Decode out of memory happened. "))
        .or_else(|| message.strip_prefix("decode out of memory happened, "))
}

pub fn retract(body: &str) -> Option<SglangRetract> {
    let mut r = SglangRetract::default();
    let (mut retracted, mut ratio) = (None, None);
    for part in body.trim_end().split(", ") {
        let (key, value) = part.split_once(": ")?;
        match key {
            "#retracted_reqs" => set(&mut retracted, whole(value, uint))?,
            "#aborted_retracted_reqs" => set(&mut r.aborted_retracted_reqs, whole(value, uint))?,
            "#new_tokens_gained" => set(&mut r.new_tokens_gained, whole(value, uint))?,
            "#mamba_num_gained" => set(&mut r.mamba_num_gained, whole(value, uint))?,
            "#new_token_ratio" => {
                let (a, b) = value.split_once(" -> ")?;
                let b = b.strip_suffix('.').unwrap_or(b);
                set(&mut ratio, whole(a, float).zip(decimal(b)))?
            }
            _ if key.starts_with('#') && whole(value, uint).is_some() => {}
            _ => return None,
        }
    }
    r.retracted_reqs = retracted?;
    (r.new_token_ratio_before, r.new_token_ratio_after) = ratio?;
    Some(r)
}

/// A `:.4f` float with its decimals (a cut `0.` is not one).
fn decimal(value: &str) -> Option<f64> {
    let (_, decimals) = value.split_once('.')?;
    (!decimals.is_empty()).then_some(())?;
    whole(value, float)
}

/// True when `message` is the capacity line (it starts with its first key).
pub fn is_capacity(message: &str) -> bool {
    message.starts_with("max_total_num_tokens=")
}

pub fn capacity(message: &str) -> Option<SglangCapacity> {
    let mut c = SglangCapacity::default();
    let (mut total, mut running) = (None, None);
    for part in message.trim_end().split(", ") {
        let (key, value) = part.split_once('=')?;
        match key {
            "max_total_num_tokens" => set(&mut total, whole(value, uint))?,
            "max_running_requests" => set(&mut running, whole(value, uint))?,
            // -1 disables chunked prefill.
            "chunked_prefill_size" => set(
                &mut c.chunked_prefill_size,
                whole(value, crate::lex::number::int),
            )?,
            "max_prefill_tokens" => set(&mut c.max_prefill_tokens, whole(value, uint))?,
            "context_len" => set(&mut c.context_len, whole(value, uint))?,
            _ if !key.is_empty()
                && key.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
                && !value.is_empty()
                && value.len() <= 32 => {}
            _ => return None,
        }
    }
    c.max_total_num_tokens = total?;
    c.max_running_requests = running?;
    Some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ratio_cut_after_its_arrow_is_no_retraction() {
        assert!(retract("#retracted_reqs: 1, #new_token_ratio: 0.5000 -> 0.6000").is_some());
        assert!(retract("#retracted_reqs: 1, #new_token_ratio: 0.5000 -> 0.").is_none());
        assert!(retract("#retracted_reqs: 1, #new_token_ratio: 0.5000 ->").is_none());
    }
}
