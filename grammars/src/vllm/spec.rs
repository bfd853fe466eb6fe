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

use super::fields::{fields, Field};
use super::VllmRecord;
use crate::lex::field::{set_once as set, whole};
use crate::lex::number::{float, uint};

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
    /// One rate per draft position, in order; `None` where vLLM printed `nan` because no draft
    /// reached that position in the interval (the position keeps its index).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_position_acceptance_rate: Vec<Option<f64>>,
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
                    spec.per_position_acceptance_rate.push(position_rate(rate)?);
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
    // Every V1 release prints the rate: first up to 0.10.1, last (`Avg Draft acceptance rate`)
    // from 0.10.2. A 0.10.2+ line cut anywhere before its end lacks it.
    if !cumulative && spec.draft_acceptance_rate_percent.is_none() {
        return None;
    }
    Some(VllmRecord::SpecDecoding(spec))
}

/// One element of `Per-position acceptance rate`: vLLM joins `f"{p:.3f}"`, so an element is
/// `nan` (no sample: `Some(None)`) or has exactly three decimals. Anything else is a list cut
/// off mid-element (`None`).
fn position_rate(rate: &str) -> Option<Option<f64>> {
    if rate == "nan" {
        return Some(None);
    }
    let decimals = rate.split_once('.').map(|(_, d)| d.len());
    (decimals == Some(3)).then_some(())?;
    whole(rate, float).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(message: &str) -> Option<SpecDecoding> {
        match parse(message)? {
            VllmRecord::SpecDecoding(s) => Some(s),
            _ => None,
        }
    }

    #[test]
    fn reads_the_per_position_list_whose_commas_are_the_field_separator() {
        let s = spec("SpecDecoding metrics: Draft acceptance rate: 15.5%, Mean acceptance length: 1.77, Accepted: 17 tokens, Drafted: 110 tokens, Per-position acceptance rate: 0.333, 0.182, nan").unwrap();
        assert_eq!(
            s.per_position_acceptance_rate,
            [Some(0.333), Some(0.182), None]
        );
    }

    #[test]
    fn a_per_position_element_without_three_decimals_is_a_cut_line() {
        assert!(position_rate("0.52").is_none());
        assert!(position_rate("0").is_none());
        assert_eq!(position_rate("0.520"), Some(Some(0.52)));
        assert_eq!(position_rate("nan"), Some(None));
        assert!(position_rate("nan0").is_none());
    }

    #[test]
    fn a_v1_line_without_its_acceptance_rate_is_cut() {
        let line = "SpecDecoding metrics: Mean acceptance length: 3.45, Accepted throughput: 59.29 tokens/s, Drafted throughput: 72.59 tokens/s, Accepted: 593 tokens, Drafted: 726 tokens, Per-position acceptance rate: 0.917, 0.839";
        assert!(spec(line).is_none());
        assert!(spec(&format!("{line}, 0.694, Avg Draft acceptance rate: 81.7%")).is_some());
    }

    #[test]
    fn the_v0_line_needs_its_final_dot() {
        let line = "Speculative metrics: Draft acceptance rate: 0.675, System efficiency: 0.531, Number of speculative tokens: 4, Number of accepted tokens: 8485, Number of draft tokens: 12564, Number of emitted tokens: 8347";
        assert!(spec(line).is_none());
        assert_eq!(
            spec(&format!("{line}.")).unwrap().emitted_tokens,
            Some(8347)
        );
    }
}
