//! The scheduler's retraction warning under KV-cache pressure (formats doc section 1.7), from
//! 0.4.7 (`KV cache pool is full. Retract requests. `); the earlier `Decode out of memory
//! happened. ` holds no first-stage piece and is not read.

use serde::Serialize;

use crate::number::{float, uint};
use crate::vllm::fields::{set_once as set, whole};

/// A retraction: `KV cache pool is full. Retract requests. #retracted_reqs: N, ...` (0.4.7+;
/// `#aborted_retracted_reqs` from 0.5.3, `#new_tokens_gained` from 0.5.10).
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
    message.strip_prefix("KV cache pool is full. Retract requests. ")
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
