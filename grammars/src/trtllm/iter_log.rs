//! Format C: the PyTorch backend's `print_iter_log` line (`trtllm-serve`, the LLM API,
//! Dynamo), the message after the Python logger head:
//!
//! - V1 (≈0.18-0.19): `iter = 198, global_rank = 0, rank = 0, currank_total_requests = 0/0,
//!   elapsed_time = 0.0050s, timestamp = 2025-04-28 09:56:44, states = {...}`;
//! - V2 (PR #3914): `num_scheduled_requests: 10, ` before `states`;
//! - V3 (PR #6906): `host_step_time = Xms, prev_device_step_time = Yms|N/A` replace `elapsed_time`;
//! - V4 (PR #14206): `num_scheduled_requests = n, kv_cache_util = 0.123|N/A` right after `rank`;
//! - V5 (PR #14734): `'cached_kv_tokens': N` in `states` (and maybe `cached_kv_len = N`);
//! - V6 (PR #16323): `, num_active = 14, num_fetched = 3, num_dummy = 1, num_unscheduled = 5` after `states`.
//!
//! So no fixed regex: the message must start with `iter = N, `, then it is split on commas at
//! bracket depth 0 into `key = value` (or the legacy `key: value`) pairs, and each key is read
//! on its own. Unknown keys are skipped. A known key whose value is not what TRT-LLM prints, or
//! unbalanced brackets (a cut-off line), reject the line. `states` is a Python dict `repr`
//! (single quotes) whose values have been seen printed as `tensor(256)`.

use super::clock;
use super::iteration::{Format, Iteration};

/// Parses an iteration message (logger head already removed).
pub fn parse(message: &str) -> Option<Iteration> {
    if !message.starts_with("iter = ") {
        return None;
    }
    let mut it = Iteration {
        format: Format::IterLog,
        ..Iteration::default()
    };
    let mut saw_rank = false;
    // `currank_total_requests` and `states` are in all six variants: a line with neither is
    // some other program's `iter = N, global_rank = G, ...`.
    let mut saw_trtllm_key = false;
    let mut first = true;
    for piece in split_top_level(message)? {
        let (key, value) = key_value(piece)?;
        if first {
            // `iter = N` must lead the line.
            first = false;
            if key != "iter" {
                return None;
            }
        }
        match key {
            "iter" => it.iteration = Some(int(value)?),
            "global_rank" => {
                it.rank = Some(u32::try_from(int(value)?).ok()?);
                saw_rank = true;
            }
            "rank" => it.dist_rank = Some(u32::try_from(int(value)?).ok()?),
            "currank_total_requests" => {
                saw_trtllm_key = true;
                let (a, b) = value.split_once('/')?;
                it.rank_fetched_requests_total = Some(int(a)?);
                it.fetched_requests_total = Some(int(b)?);
            }
            "elapsed_time" => it.iter_latency_ms = Some(number_with_unit(value, "s")? * 1000.0),
            "host_step_time" => it.iter_latency_ms = Some(number_with_unit(value, "ms")?),
            "prev_device_step_time" => {
                it.prev_device_step_time_ms =
                    not_available_or(value, |v| number_with_unit(v, "ms"))?
            }
            "timestamp" => it.timestamp = clock::stats_timestamp(value),
            "num_scheduled_requests" => it.scheduled_requests = Some(int(value)?),
            "kv_cache_util" => it.kv_used_fraction = not_available_or(value, float)?,
            "cached_kv_len" => it.cached_kv_len = Some(int(value)?),
            "num_active" => it.active_requests = Some(int(value)?),
            "num_fetched" => it.fetched_requests = Some(int(value)?),
            "num_dummy" => it.dummy_requests = Some(int(value)?),
            "num_unscheduled" => it.unscheduled_requests = Some(int(value)?),
            // Seen in third-party doc-strings of later builds; same meaning as A and B.
            "kv_hit_rate" => it.kv_cache_hit_rate = not_available_or(value, float)?,
            "kv_reused_blocks" => it.kv_reused_blocks = Some(int(value)?),
            "kv_free_blocks" => it.kv_free_blocks = Some(int(value)?),
            "states" => {
                saw_trtllm_key = true;
                states(value, &mut it)?;
            }
            _ => {}
        }
    }
    if !saw_rank || !saw_trtllm_key {
        return None;
    }
    Some(it)
}

/// Splits on `,` (and on a run of two or more spaces, seen between fields in one PR example)
/// at bracket depth 0, outside quotes. `None` when brackets do not balance.
fn split_top_level(s: &str) -> Option<Vec<&str>> {
    let mut pieces = Vec::with_capacity(16);
    let bytes = s.as_bytes();
    let mut depth: u32 = 0;
    let mut quote: Option<u8> = None;
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if let Some(q) = quote {
            if b == q {
                quote = None;
            }
        } else {
            match b {
                b'\'' | b'"' => quote = Some(b),
                b'{' | b'[' | b'(' => depth += 1,
                b'}' | b']' | b')' => depth = depth.checked_sub(1)?,
                b',' if depth == 0 => {
                    pieces.push(s[start..i].trim());
                    start = i + 1;
                }
                b' ' if depth == 0 && bytes.get(i + 1) == Some(&b' ') => {
                    let piece = s[start..i].trim();
                    if !piece.is_empty() {
                        pieces.push(piece);
                    }
                    while bytes.get(i + 1) == Some(&b' ') {
                        i += 1;
                    }
                    start = i + 1;
                }
                _ => {}
            }
        }
        i += 1;
    }
    if depth != 0 || quote.is_some() {
        return None;
    }
    let last = s[start..].trim();
    if !last.is_empty() {
        pieces.push(last);
    }
    Some(pieces)
}

/// `key = value` or the V2/V3 `key: value`, whichever separator comes first.
fn key_value(piece: &str) -> Option<(&str, &str)> {
    let eq = piece.find(" = ");
    let colon = piece.find(": ");
    let (at, len) = match (eq, colon) {
        (Some(e), Some(c)) if c < e => (c, 2),
        (Some(e), _) => (e, 3),
        (None, Some(c)) => (c, 2),
        (None, None) => return None,
    };
    let key = &piece[..at];
    if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    Some((key, piece[at + len..].trim()))
}

/// An unsigned integer, also as PyTorch prints a 0-d tensor: `tensor(256)`,
/// `tensor(256, device='cuda:0')`.
fn int(value: &str) -> Option<u64> {
    let value = value.trim();
    let inner = match value.strip_prefix("tensor(") {
        Some(rest) => {
            let rest = rest.strip_suffix(')')?;
            rest.split(',').next()?.trim()
        }
        None => value,
    };
    if inner.is_empty() || !inner.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    inner.parse().ok()
}

fn float(value: &str) -> Option<f64> {
    let value = value.trim();
    let ok = !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'));
    if ok {
        value.parse().ok()
    } else {
        None
    }
}

/// `0.0050s`, `12.5ms`: the number before the unit suffix.
fn number_with_unit(value: &str, unit: &str) -> Option<f64> {
    float(value.strip_suffix(unit)?)
}

/// `N/A` is `Some(None)`; otherwise the parsed value, and `None` when it does not parse.
fn not_available_or(value: &str, read: impl Fn(&str) -> Option<f64>) -> Option<Option<f64>> {
    if value == "N/A" {
        Some(None)
    } else {
        read(value).map(Some)
    }
}

/// `{'num_ctx_requests': 0, 'num_ctx_tokens': 0, 'num_generation_tokens': 16, ...}`.
fn states(value: &str, it: &mut Iteration) -> Option<()> {
    let inner = value.strip_prefix('{')?.strip_suffix('}')?;
    for piece in split_top_level(inner)? {
        let (key, value) = piece.split_once(':')?;
        let key = key.trim().trim_matches(|c| c == '\'' || c == '"');
        let value = value.trim();
        match key {
            "num_ctx_requests" => it.context_requests = Some(int(value)?),
            "num_ctx_tokens" => it.context_tokens = Some(int(value)?),
            "num_generation_tokens" => it.generation_tokens = Some(int(value)?),
            "cached_kv_tokens" => it.cached_kv_tokens = Some(int(value)?),
            _ => {}
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_converts_seconds() {
        let it = parse("iter = 198, global_rank = 0, rank = 0, currank_total_requests = 0/0, elapsed_time = 0.005s, timestamp = 2025-04-28 09:56:44, states = {'num_ctx_requests': 0, 'num_ctx_tokens': 0, 'num_generation_tokens': 16}").unwrap();
        assert_eq!(
            (it.iteration, it.rank, it.generation_tokens),
            (Some(198), Some(0), Some(16))
        );
        assert!((it.iter_latency_ms.unwrap() - 5.0).abs() < 1e-9);
    }

    #[test]
    fn v4_with_n_a_and_tensor_values() {
        let it = parse("iter = 0, global_rank = 1, rank = 1, num_scheduled_requests = 2, kv_cache_util = N/A, currank_total_requests = 2/4, host_step_time = 30.5ms, prev_device_step_time = N/A, timestamp = 2026-05-20 10:00:00, states = {'num_ctx_requests': tensor(2), 'num_ctx_tokens': tensor(256), 'num_generation_tokens': 0}").unwrap();
        assert_eq!(
            (
                it.kv_used_fraction,
                it.prev_device_step_time_ms,
                it.context_tokens
            ),
            (None, None, Some(256))
        );
        assert_eq!(
            (it.rank_fetched_requests_total, it.fetched_requests_total),
            (Some(2), Some(4))
        );
    }

    #[test]
    fn rejects_cut_and_foreign_lines() {
        assert!(parse(
            "iter = 5, global_rank = 0, rank = 0, states = {'num_ctx_requests': 0, 'num_ctx"
        )
        .is_none());
        assert!(parse("iter = 5, loss = 0.3").is_none());
        assert!(parse("iter = x, global_rank = 0").is_none());
        assert!(parse("step = 5, global_rank = 0").is_none());
        assert!(parse("iter = 5, global_rank = 0, loss = 0.25").is_none());
    }

    #[test]
    fn unknown_keys_and_double_space_separators() {
        let it = parse("iter = 1, global_rank = 0, rank = 0, cached_kv_len = 0   states = {'num_ctx_requests': 1, 'new_key': 'x'}, kv_cache_gpu_pool_util = [0:0.900;1:0.500]").unwrap();
        assert_eq!((it.cached_kv_len, it.context_requests), (Some(0), Some(1)));
    }
}
