//! The periodic stats line of `LoggingStatLogger.log()` (`lmdeploy/metrics/loggers.py`), after
//! its head, in the two shapes it has had:
//!
//! - 0.9.2 to 0.12: `Avg prompt throughput: X tokens/s, Avg generation throughput: X tokens/s,
//!   Finished: N reqs, Unfinished: N reqs, Running: N reqs, Waiting: N reqs, GPU KV cache usage:
//!   X%` (an early 0.9.2 development state had no `Finished`/`Unfinished`), then from 0.12
//!   `, Prefix cache hit rate: X%` and, under speculative decoding, `, SpecDecoding metrics: ...`;
//! - PR #4297 (Feb 2026) onwards: `Avg thr (in/out): A / B tokens/s, Server
//!   (succeeded/failed/routed/waiting): a / b / c / d, Engine (running/waiting): r / w, KV cache:
//!   X%, ` (the PR's own form: `API server (completed/routed/waiting): a / b / c`), then the
//!   optional `Prefix cache hit rate: X%, ` (printed only when not 0), `External prefix cache
//!   hit rate: X%, ` and `Avg MM preprocess: X s/req, ` (development branch after 0.18) and
//!   `SpecDecoding metrics: ...`.
//!
//! Both are `Key: value` parts joined by `, `, so one loop reads both. A grouped part's values
//! are assigned by the names in its parenthesised header, in the header's order, so a release
//! that reorders them is still read right. The spec-decoding message, whose values hold `, `,
//! is always last. A known key with a value that is not exactly what LMDeploy prints rejects
//! the line; an unknown key is skipped, as a newer release's field.

use nom::{bytes::complete::tag, Parser};
use serde::Serialize;

use crate::lex::field::{find_pair, set_once as set, whole};
use crate::lex::number::{float, uint};

/// What a stats line says. Counts are what the line printed; `None` where the release does not
/// print the part.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LmdeployStats {
    /// The data-parallel rank whose logger printed the line (`DP1`, `Engine 001`).
    pub dp_rank: u32,
    /// Prompt tokens processed since the previous line, per second.
    pub prompt_throughput: f64,
    /// Generated tokens since the previous line, per second.
    pub generation_throughput: f64,
    /// 0.9.2-0.12 `Finished`: requests finished since the server started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished: Option<u64>,
    /// 0.9.2-0.12 `Unfinished`: requests received and not finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unfinished: Option<u64>,
    /// PR #4297's `completed`: requests completed since the server started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed: Option<u64>,
    /// 0.13+ `succeeded`: requests that succeeded since the server started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub succeeded: Option<u64>,
    /// 0.13+ `failed`: requests that failed since the server started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<u64>,
    /// 0.13+ `routed`: requests the API server has routed to a request handle, now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_routed: Option<u64>,
    /// 0.13+ the server's `waiting`: requests waiting for a free request handle, now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_waiting: Option<u64>,
    /// Requests in the engine's running batch.
    pub running: u64,
    /// Requests queued in the engine.
    pub waiting: u64,
    /// `GPU KV cache usage` (0.9.2-0.12) or `KV cache` (0.13+), in percent.
    pub kv_cache_usage_percent: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix_cache_hit_rate_percent: Option<f64>,
    /// `External prefix cache hit rate: X%` (development branch after 0.18, with an external KV
    /// cache).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_prefix_cache_hit_rate_percent: Option<f64>,
    /// `Avg MM preprocess: X s/req`: multimodal preprocessing time per request, in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mm_preprocess_s_per_req: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_decoding: Option<SpecDecoding>,
    /// A part with a key this grammar does not know was skipped.
    #[serde(skip)]
    pub skipped_fields: bool,
}

/// `SpecDecoding metrics: ...` (0.11+): sums over the interval since the previous line.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SpecDecoding {
    /// `Draft acceptance rate: X%` (`%.2f`; `nan` when nothing was drafted).
    pub draft_acceptance_rate_percent: f64,
    /// Accepted tokens per draft plus the bonus token.
    pub mean_acceptance_length: f64,
    pub accepted_tokens: u64,
    pub draft_tokens: u64,
    /// Accepted tokens per draft at each draft position, a fraction each (`%.3f`).
    pub per_position_acceptance_rate: Vec<f64>,
}

/// Which shape the line has, from its first part.
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    /// 0.9.2 to 0.12.
    Reqs,
    /// PR #4297 onwards.
    Grouped,
}

/// True when `message` starts as a stats line does: it is one, or a cut or changed one.
pub fn starts(message: &str) -> bool {
    message.starts_with("Avg prompt throughput: ") || message.starts_with("Avg thr (in/out): ")
}

/// Reads the message of a stats line (after the head).
pub fn parse(dp_rank: u32, message: &str) -> Option<LmdeployStats> {
    let shape = if message.starts_with("Avg prompt throughput: ") {
        Shape::Reqs
    } else if message.starts_with("Avg thr (in/out): ") {
        Shape::Grouped
    } else {
        return None;
    };
    let mut stats = LmdeployStats {
        dp_rank,
        ..LmdeployStats::default()
    };
    let mut parts = Parts {
        throughput: [None, None],
        running: None,
        waiting: None,
        kv: None,
        server_group: false,
        skipped: 0,
    };
    let mut rest = message.trim_end();
    let mut last_skipped = false;
    while !rest.is_empty() {
        if let Some(spec) = rest.strip_prefix("SpecDecoding metrics: ") {
            stats.spec_decoding = Some(spec_decoding(spec)?);
            break;
        }
        let (part, after) = match find_pair(rest, b", ") {
            Some(at) => (&rest[..at], &rest[at + 2..]),
            // 0.13+ ends in `, `; a trimmed line keeps its `,`.
            None => (rest.strip_suffix(',').unwrap_or(rest), ""),
        };
        rest = after;
        let Some(colon) = find_pair(part, b": ") else {
            // A part without a key continues the value of a skipped part before it (a later
            // release's value may hold `, `); after a known part it is a cut line.
            if !last_skipped {
                return None;
            }
            continue;
        };
        let (key, value) = (&part[..colon], &part[colon + 2..]);
        let skipped = parts.skipped;
        read_part(shape, key, value, &mut stats, &mut parts)?;
        last_skipped = parts.skipped > skipped;
    }
    stats.skipped_fields = parts.skipped > 0;
    let [Some(prompt), Some(generation)] = parts.throughput else {
        return None;
    };
    stats.prompt_throughput = prompt;
    stats.generation_throughput = generation;
    stats.running = parts.running?;
    stats.waiting = parts.waiting?;
    stats.kv_cache_usage_percent = parts.kv?;
    let complete = match shape {
        Shape::Reqs => stats.finished.is_some() == stats.unfinished.is_some(),
        Shape::Grouped => parts.server_group,
    };
    complete.then_some(stats)
}

/// The parts every line prints, gathered while reading.
struct Parts {
    throughput: [Option<f64>; 2],
    running: Option<u64>,
    waiting: Option<u64>,
    kv: Option<f64>,
    server_group: bool,
    /// Parts with a key this grammar does not know, skipped.
    skipped: u32,
}

fn read_part(
    shape: Shape,
    key: &str,
    value: &str,
    stats: &mut LmdeployStats,
    parts: &mut Parts,
) -> Option<()> {
    let reqs = |value| whole(value, (uint, tag(" reqs")).map(|(n, _)| n));
    let tokens_per_s = |value| whole(value, (float, tag(" tokens/s")).map(|(v, _)| v));
    let percent = |value| whole(value, (float, tag("%")).map(|(v, _)| v));
    match (shape, key) {
        (Shape::Reqs, "Avg prompt throughput") => {
            set(&mut parts.throughput[0], tokens_per_s(value))
        }
        (Shape::Reqs, "Avg generation throughput") => {
            set(&mut parts.throughput[1], tokens_per_s(value))
        }
        (Shape::Reqs, "Finished") => set(&mut stats.finished, reqs(value)),
        (Shape::Reqs, "Unfinished") => set(&mut stats.unfinished, reqs(value)),
        (Shape::Reqs, "Running") => set(&mut parts.running, reqs(value)),
        (Shape::Reqs, "Waiting") => set(&mut parts.waiting, reqs(value)),
        (Shape::Reqs, "GPU KV cache usage") | (Shape::Grouped, "KV cache") => {
            set(&mut parts.kv, percent(value))
        }
        (_, "Prefix cache hit rate") => {
            set(&mut stats.prefix_cache_hit_rate_percent, percent(value))
        }
        (Shape::Grouped, "External prefix cache hit rate") => set(
            &mut stats.external_prefix_cache_hit_rate_percent,
            percent(value),
        ),
        (Shape::Grouped, "Avg MM preprocess") => set(
            &mut stats.mm_preprocess_s_per_req,
            whole(value, (float, tag(" s/req")).map(|(v, _)| v)),
        ),
        (Shape::Grouped, _) if key.ends_with(')') => group(key, value, stats, parts),
        _ if is_key(key) => {
            parts.skipped += 1;
            Some(())
        }
        _ => None,
    }
}

/// A grouped part, `Name (k1/k2/...): v1 / v2 / ...`: each value goes to its header name.
fn group(key: &str, value: &str, stats: &mut LmdeployStats, parts: &mut Parts) -> Option<()> {
    let (name, names) = key.strip_suffix(')')?.split_once(" (")?;
    match name {
        "Avg thr" => {
            let value = value.strip_suffix(" tokens/s")?;
            for_each_value(names, value, |name, text| {
                let slot = match name {
                    "in" => &mut parts.throughput[0],
                    "out" => &mut parts.throughput[1],
                    _ => return None,
                };
                set(slot, whole(text, float))
            })
        }
        "Server" | "API server" => {
            if parts.server_group {
                return None;
            }
            parts.server_group = true;
            for_each_value(names, value, |name, text| {
                let slot = match name {
                    "completed" => &mut stats.completed,
                    "succeeded" => &mut stats.succeeded,
                    "failed" => &mut stats.failed,
                    "routed" => &mut stats.api_routed,
                    "waiting" => &mut stats.api_waiting,
                    _ => return None,
                };
                set(slot, whole(text, uint))
            })
        }
        "Engine" => for_each_value(names, value, |name, text| {
            let slot = match name {
                "running" => &mut parts.running,
                "waiting" => &mut parts.waiting,
                _ => return None,
            };
            set(slot, whole(text, uint))
        }),
        _ if is_key(name) => {
            parts.skipped += 1;
            Some(())
        }
        _ => None,
    }
}

/// Pairs the `/`-separated header names with the ` / `-separated values, in order; `None` when
/// their numbers differ (a cut line) or `each` refuses one.
fn for_each_value(
    names: &str,
    values: &str,
    mut each: impl FnMut(&str, &str) -> Option<()>,
) -> Option<()> {
    let mut values = values.split(" / ");
    for name in names.split('/') {
        each(name, values.next()?)?;
    }
    values.next().is_none().then_some(())
}

/// A plausible part name: what LMDeploy's future parts will look like, and what text that merely
/// holds `: ` after a comma does not.
fn is_key(key: &str) -> bool {
    key.bytes().next().is_some_and(|b| b.is_ascii_uppercase())
        && key.len() <= 64
        && key.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b' ' | b'-' | b'_' | b'/' | b'(' | b')')
        })
}

/// `Draft acceptance rate: X%, Mean acceptance length: X, Accepted: N tokens, Drafted: N tokens,
/// Per-position acceptance rate: a, b, c`: the fixed order of `get_spec_msg()`.
fn spec_decoding(text: &str) -> Option<SpecDecoding> {
    let (rest, (_, rate, _, mean, _, accepted, _, drafted, _)) = (
        tag("Draft acceptance rate: "),
        float,
        tag("%, Mean acceptance length: "),
        float,
        tag(", Accepted: "),
        uint,
        tag(" tokens, Drafted: "),
        uint,
        tag(" tokens, Per-position acceptance rate: "),
    )
        .parse(text)
        .ok()?;
    let rest = rest.trim_end();
    let mut per_position = Vec::new();
    for rate in rest.split(", ") {
        per_position.push(position_rate(rate)?);
    }
    Some(SpecDecoding {
        draft_acceptance_rate_percent: rate,
        mean_acceptance_length: mean,
        accepted_tokens: accepted,
        draft_tokens: drafted,
        per_position_acceptance_rate: per_position,
    })
}

/// One `f'{p:.3f}'` element: exactly three decimals, or the list was cut inside it.
fn position_rate(rate: &str) -> Option<f64> {
    let (_, decimals) = rate.split_once('.')?;
    (decimals.len() == 3).then_some(())?;
    whole(rate, float)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_values_follow_their_header() {
        let s = parse(
            0,
            "Avg thr (in/out): 1.0 / 2.0 tokens/s, Server (waiting/routed/failed/succeeded): 4 / 3 / 2 / 1, Engine (waiting/running): 6 / 5, KV cache: 7.0%, ",
        )
        .unwrap();
        assert_eq!(
            (
                s.succeeded,
                s.failed,
                s.api_routed,
                s.api_waiting,
                s.running,
                s.waiting
            ),
            (Some(1), Some(2), Some(3), Some(4), 5, 6)
        );
    }

    #[test]
    fn a_group_with_fewer_values_than_names_is_cut() {
        assert!(parse(0, "Avg thr (in/out): 1.0 / 2.0 tokens/s, Server (succeeded/failed/routed/waiting): 1 / 2 / 3, Engine (running/waiting): 5 / 6, KV cache: 7.0%, ").is_none());
        assert!(parse(0, "Avg thr (in/out): 1.0 / 2.0 tokens/s, Server (succeeded/failed/routed/waiting): 1 / 2 / 3 / 4 / 5, Engine (running/waiting): 5 / 6, KV cache: 7.0%, ").is_none());
    }

    #[test]
    fn a_skipped_part_keeps_its_commas_and_a_known_one_does_not() {
        let line = "Avg thr (in/out): 1.0 / 2.0 tokens/s, Server (succeeded/failed/routed/waiting): 1 / 2 / 3 / 4, Engine (running/waiting): 5 / 6, KV cache: 7.0%, ";
        let s = parse(0, &format!("{line}KV fetch: 1 waiting, 2 in progress, ")).unwrap();
        assert!(s.skipped_fields);
        assert!(parse(
            0,
            &format!("{line}Prefix cache hit rate: 1.0%, 2 in progress, ")
        )
        .is_none());
        assert!(parse(0, &format!("{line}Prefix cac")).is_none());
    }

    #[test]
    fn a_per_position_element_without_three_decimals_is_a_cut_line() {
        assert_eq!(position_rate("0.520"), Some(0.52));
        assert!(position_rate("0.52").is_none());
        assert!(position_rate("0").is_none());
    }
}
