//! Speculative-decoding lines, logged right after the stats line they belong to:
//!
//! - V0 0.4.1 to 0.9.2: `Speculative metrics: Draft acceptance rate: 0.642, System efficiency: 0.521,
//!   Number of speculative tokens: 5, Number of accepted tokens: N, Number of draft tokens: N,
//!   Number of emitted tokens: N.` (0.4.1 to 0.5.2 say `tokens tokens`); counts are cumulative.
//! - V1 0.8.3 to 0.8.4: `SpecDecoding metrics: Draft acceptance rate: X%, Accepted: N tokens, Drafted: N tokens`;
//!   0.8.5 to 0.10.1 add `Mean acceptance length` and `Per-position acceptance rate`;
//!   0.10.2+: `Mean acceptance length: X, Accepted throughput: X tokens/s, Drafted throughput: X tokens/s,
//!   Accepted: N tokens, Drafted: N tokens, Per-position acceptance rate: 0.800, 0.600, Avg Draft acceptance rate: X%`.
//!   V1 counts are sums over the interval since the previous line.

use nom::{bytes::complete::tag, Parser};
use serde::Serialize;

use super::fields::{fields, set_once as set, whole, Field};
use super::VllmRecord;
use crate::number::{float, uint};

/// What a speculative-decoding line says.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SpecDecoding {
    /// True for V0's `Speculative metrics:` (counts since start), false for V1 (counts per interval).
    pub cumulative: bool,
    /// V0's `Draft acceptance rate`, a fraction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub draft_acceptance_rate: Option<f64>,
    /// V1's `Draft acceptance rate: X%` (0.8.3 to 0.10.1) or `Avg Draft acceptance rate: X%` (0.10.2+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub draft_acceptance_rate_percent: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_efficiency: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_speculative_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_acceptance_length: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepted_throughput: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drafted_throughput: Option<f64>,
    pub accepted_tokens: u64,
    pub draft_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emitted_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_position_acceptance_rate: Vec<f64>,
}

/// Parses a `Speculative metrics:` or `SpecDecoding metrics:` message.
pub fn parse(message: &str) -> Option<VllmRecord<'_>> {
    let (cumulative, list) = if let Some(rest) = message.strip_prefix("Speculative metrics: ") {
        (true, rest)
    } else if let Some(rest) = message.strip_prefix("SpecDecoding metrics: ") {
        (false, rest)
    } else {
        return None;
    };
    let list = list.trim_end();
    let list = if cumulative {
        list.strip_suffix('.')?
    } else {
        list
    };
    let mut spec = SpecDecoding {
        cumulative,
        ..SpecDecoding::default()
    };
    let (mut accepted, mut drafted) = (None, None);
    for field in fields(list) {
        let Field { key, value } = field.ok()?;
        match (cumulative, key) {
            (true, "Draft acceptance rate") => {
                set(&mut spec.draft_acceptance_rate, whole(value, float))?
            }
            (true, "System efficiency") => set(&mut spec.system_efficiency, whole(value, float))?,
            (true, "Number of speculative tokens") => {
                set(&mut spec.num_speculative_tokens, whole(value, uint))?
            }
            (true, "Number of accepted tokens") => set(&mut accepted, whole(value, uint))?,
            (true, "Number of draft tokens" | "Number of draft tokens tokens") => {
                set(&mut drafted, whole(value, uint))?
            }
            (true, "Number of emitted tokens" | "Number of emitted tokens tokens") => {
                set(&mut spec.emitted_tokens, whole(value, uint))?
            }
            (false, "Draft acceptance rate" | "Avg Draft acceptance rate") => set(
                &mut spec.draft_acceptance_rate_percent,
                whole(value, (float, tag("%")).map(|(v, _)| v)),
            )?,
            (false, "Mean acceptance length") => {
                set(&mut spec.mean_acceptance_length, whole(value, float))?
            }
            (false, "Accepted throughput") => set(
                &mut spec.accepted_throughput,
                whole(value, (float, tag(" tokens/s")).map(|(v, _)| v)),
            )?,
            (false, "Drafted throughput") => set(
                &mut spec.drafted_throughput,
                whole(value, (float, tag(" tokens/s")).map(|(v, _)| v)),
            )?,
            (false, "Accepted") => set(
                &mut accepted,
                whole(value, (uint, tag(" tokens")).map(|(v, _)| v)),
            )?,
            (false, "Drafted") => set(
                &mut drafted,
                whole(value, (uint, tag(" tokens")).map(|(v, _)| v)),
            )?,
            (false, "Per-position acceptance rate") => {
                if !spec.per_position_acceptance_rate.is_empty() {
                    return None;
                }
                for rate in value.split(", ") {
                    spec.per_position_acceptance_rate.push(whole(rate, float)?);
                }
            }
            _ => {}
        }
    }
    spec.accepted_tokens = accepted?;
    spec.draft_tokens = drafted?;
    if cumulative && (spec.draft_acceptance_rate.is_none() || spec.emitted_tokens.is_none()) {
        return None;
    }
    Some(VllmRecord::SpecDecoding(spec))
}
