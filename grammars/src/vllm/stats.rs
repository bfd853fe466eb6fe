//! The periodic stats summary, every shape it has had:
//!
//! - 0.1.7 to 0.11.0 (V0): `Avg prompt throughput: X tokens/s, Avg generation throughput: X tokens/s,
//!   Running: N reqs, Swapped: N reqs, Pending: N reqs, GPU KV cache usage: X%, CPU KV cache usage: X%`
//!   (a trailing `.` from 0.4.3), plus the separate `Prefix cache hit rate: GPU: X%, CPU: Y%` (0.5.5+);
//! - 0.6.4 to 0.6.6 (experimental V1): `RUNNING: N | WAITING: N`; 0.7.0: `Running: N reqs, Waiting: N reqs `;
//! - 0.7.1+ (V1): the throughputs, `Running`, `Waiting`, then optional fields and
//!   `<DEVICE> KV cache usage: X%`, behind `Engine NNN: ` (0.8.3+) or `N Engines Aggregated: ` (0.11.1+);
//! - `Iteration(N): ...` detail lines (0.14+, opt-in).
//!
//! A line is only a stats line when its message *starts* with the stats text: request logs
//! and tracebacks that quote it further in are not stats. A known key with a value that is not
//! exactly what vLLM prints (a cut-off line) rejects the whole line; an unknown key is skipped.

use nom::{
    bytes::complete::{tag, take_while1},
    combinator::opt,
    IResult, Parser,
};
use serde::Serialize;

use super::fields::{fields, Field};
use super::VllmRecord;
use crate::lex::field::{set_once as set, whole};
use crate::lex::number::{float, uint};

/// The stats summary. Every field is what the line printed, `None` where it printed nothing.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct VllmStats<'a> {
    /// `Engine 003: ` gives 3.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<u32>,
    /// `2 Engines Aggregated: ` gives 2.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggregated_engines: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_throughput: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation_throughput: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running: Option<u64>,
    /// V1's `Waiting` (which includes `Deferred` from 0.20).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting: Option<u64>,
    /// V0's `Pending`: the same queue V1 calls waiting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<u64>,
    /// V0's `Swapped`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swapped: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deferred: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_fetch_waiting_to_start: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_fetch_in_progress: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_fetch_completed_waiting: Option<u64>,
    /// Preemptions in this interval (V1 0.11.1+, printed only when non-zero).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preemptions: Option<u64>,
    /// The device word before `KV cache usage`: `GPU`, `XPU`, `NPU`, `CPU`, ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_cache_device: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_cache_usage_percent: Option<f64>,
    /// V0's `CPU KV cache usage`: the swap space, not a device.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_swap_usage_percent: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix_cache_hit_rate_percent: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub corrupted: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_prefix_cache_hit_rate_percent: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mm_cache_hit_rate_percent: Option<f64>,
    /// A field with a key this grammar does not know was skipped (a newer vLLM's). Without one,
    /// every byte of the line is a known field's, so nothing is glued after the record.
    #[serde(skip)]
    pub skipped_fields: bool,
}

/// V0's prefix-cache line, `Prefix cache hit rate: GPU: X%, CPU: Y%`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PrefixCacheV0 {
    pub gpu_hit_rate_percent: f64,
    pub cpu_hit_rate_percent: f64,
}

/// One scheduler step, from `--enable-logging-iteration-details`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Iteration<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<u32>,
    pub iteration: u64,
    pub context_requests: u64,
    pub context_tokens: u64,
    pub generation_requests: u64,
    pub generation_tokens: u64,
    pub elapsed_ms: f64,
    /// A data-parallel padding step (0.23+ prints ` (dummy)`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dummy: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_cache_device: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_cache_usage_percent: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoder_inputs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoder_output_embeddings: Option<u64>,
}

/// Which engine a line speaks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scope {
    pub engine: Option<u32>,
    pub aggregated_engines: Option<u32>,
}

/// `Engine 003: `, `2 Engines Aggregated: `, or nothing.
pub fn scope(message: &str) -> (Scope, &str) {
    let engine = message
        .strip_prefix("Engine ")
        .and_then(|rest| number_then(rest, ": "));
    if let Some((n, rest)) = engine {
        let scope = Scope {
            engine: Some(n),
            aggregated_engines: None,
        };
        return (scope, rest);
    }
    if let Some((n, rest)) = number_then(message, " Engines Aggregated: ") {
        let scope = Scope {
            engine: None,
            aggregated_engines: Some(n),
        };
        return (scope, rest);
    }
    (Scope::default(), message)
}

/// A `%d` that fits in a u32, followed by `then`; the text after both.
fn number_then<'a>(text: &'a str, then: &str) -> Option<(u32, &'a str)> {
    let (rest, n) = uint(text).ok()?;
    Some((u32::try_from(n).ok()?, rest.strip_prefix(then)?))
}

/// Parses a message that may be a stats, V0 prefix-cache or iteration line.
pub fn parse(message: &str) -> Option<VllmRecord<'_>> {
    if let Some(rest) = message.strip_prefix("Prefix cache hit rate: GPU: ") {
        return prefix_cache_v0(rest).map(VllmRecord::PrefixCacheV0);
    }
    let (scope, body) = scope(message);
    if body.starts_with("Iteration(") {
        return iteration(scope, body).map(VllmRecord::Iteration);
    }
    if let Some(rest) = body.strip_prefix("RUNNING: ") {
        return running_waiting_0_6(scope, rest).map(VllmRecord::Stats);
    }
    if body.starts_with("Avg prompt throughput: ") || body.starts_with("Running: ") {
        return summary(scope, body).map(VllmRecord::Stats);
    }
    None
}

/// A number (`number`: [`float`] or [`uint`]) followed by `unit`. A closure rather than a nom
/// sequence: every value of every stats line is read through this, and the sequence's tuple and
/// map cost 2% of a one-shot run's instructions.
fn number_with_unit<'a, T>(
    number: fn(&'a str) -> IResult<&'a str, T>,
    unit: &'static str,
) -> impl Parser<&'a str, Output = T, Error = nom::error::Error<&'a str>> {
    move |input: &'a str| {
        let (rest, value) = number(input)?;
        match rest.strip_prefix(unit) {
            Some(rest) => Ok((rest, value)),
            None => Err(nom::Err::Error(nom::error::Error::new(
                rest,
                nom::error::ErrorKind::Tag,
            ))),
        }
    }
}

fn with_unit<'a>(
    unit: &'static str,
) -> impl Parser<&'a str, Output = f64, Error = nom::error::Error<&'a str>> {
    number_with_unit(float, unit)
}

fn count_with_unit<'a>(
    unit: &'static str,
) -> impl Parser<&'a str, Output = u64, Error = nom::error::Error<&'a str>> {
    number_with_unit(uint, unit)
}

/// The `<DEVICE> KV cache usage` fields of a stats line (V0 prints two), in order.
type Usages<'a> = [Option<(&'a str, f64)>; 2];

fn summary<'a>(scope: Scope, body: &'a str) -> Option<VllmStats<'a>> {
    // V0 from 0.4.3 and V1 0.7.1-0.7.2 end in `.`; 0.7.0 in a space.
    let body = body.trim_end();
    let body = body.strip_suffix('.').unwrap_or(body);
    let empty = || {
        let stats = VllmStats {
            engine: scope.engine,
            aggregated_engines: scope.aggregated_engines,
            ..VllmStats::default()
        };
        (stats, [None, None])
    };
    let (mut stats, mut usages) = empty();
    if read_known_fields(body, &mut stats, &mut usages).is_none() {
        (stats, usages) = empty();
        read_fields(body, &mut stats, &mut usages)?;
    }
    complete(&mut stats, usages)?;
    Some(stats)
}

/// Reads a list made only of the fields vLLM prints, each printed as vLLM prints it, in one
/// pass: `None` at anything else (an unknown key, a value of another shape, a separator that
/// is not `, `, a key twice), and then [`read_fields`] reads the list from the start. What this
/// accepts, [`read_fields`] splits into the same keys and values (no value of these holds `, `
/// or `: `) and reads the same way, so the two agree; this one spares the field splitter's
/// searches, most of a stats line's parse.
fn read_known_fields<'a>(
    body: &'a str,
    stats: &mut VllmStats<'a>,
    usages: &mut Usages<'a>,
) -> Option<()> {
    let mut rest = body;
    loop {
        rest = read_known_field(rest, stats, usages)?;
        if rest.is_empty() {
            return Some(());
        }
        rest = rest.strip_prefix(", ")?;
    }
}

/// One field of [`read_known_fields`] at the start of `list`; the text after its value.
#[inline(always)]
fn read_known_field<'a>(
    list: &'a str,
    stats: &mut VllmStats<'a>,
    usages: &mut Usages<'a>,
) -> Option<&'a str> {
    let key_end = memchr::memchr(b':', list.as_bytes())?;
    let (key, value) = (&list[..key_end], list[key_end..].strip_prefix(": ")?);
    let (rest, filled) = match key {
        "Avg prompt throughput" => with_unit(" tokens/s")
            .map(|v| set(&mut stats.prompt_throughput, Some(v)))
            .parse(value),
        "Avg generation throughput" => with_unit(" tokens/s")
            .map(|v| set(&mut stats.generation_throughput, Some(v)))
            .parse(value),
        "Running" => count_with_unit(" reqs")
            .map(|n| set(&mut stats.running, Some(n)))
            .parse(value),
        "Waiting" => count_with_unit(" reqs")
            .map(|n| set(&mut stats.waiting, Some(n)))
            .parse(value),
        "Prefix cache hit rate" => with_unit("%")
            .map(|v| set(&mut stats.prefix_cache_hit_rate_percent, Some(v)))
            .parse(value),
        _ => {
            let device = key.strip_suffix(" KV cache usage")?;
            with_unit("%")
                .map(|percent| note_usage(usages, device, percent))
                .parse(value)
        }
    }
    .ok()?;
    filled?;
    Some(rest)
}

/// Notes a `<DEVICE> KV cache usage` field; `None` for a device word vLLM does not print or a
/// third such field.
fn note_usage<'a>(usages: &mut Usages<'a>, device: &'a str, percent: f64) -> Option<()> {
    if !is_device_word(device) {
        return None;
    }
    *usages.iter_mut().find(|u| u.is_none())? = Some((device, percent));
    Some(())
}

/// Reads every `Key: value` field of a stats line's list into `stats` and `usages`: `None` for
/// a line that is not a stats line (a part that is no field, a known key's value not as vLLM
/// prints it, a key twice).
fn read_fields<'a>(
    body: &'a str,
    stats: &mut VllmStats<'a>,
    usages: &mut Usages<'a>,
) -> Option<()> {
    for field in fields(body) {
        let Field { key, value } = field.ok()?;
        match key {
            "Avg prompt throughput" => set(
                &mut stats.prompt_throughput,
                whole(value, with_unit(" tokens/s")),
            )?,
            "Avg generation throughput" => set(
                &mut stats.generation_throughput,
                whole(value, with_unit(" tokens/s")),
            )?,
            "Running" => set(&mut stats.running, whole(value, count_with_unit(" reqs")))?,
            "Waiting" => set(&mut stats.waiting, whole(value, count_with_unit(" reqs")))?,
            "Pending" => set(&mut stats.pending, whole(value, count_with_unit(" reqs")))?,
            "Swapped" => set(&mut stats.swapped, whole(value, count_with_unit(" reqs")))?,
            "Deferred" => set(&mut stats.deferred, whole(value, count_with_unit(" reqs")))?,
            "Corrupted" => set(&mut stats.corrupted, whole(value, count_with_unit(" reqs")))?,
            "Preemptions" => set(&mut stats.preemptions, whole(value, uint))?,
            "KV fetch" => {
                let (a, b, c) = whole(
                    value,
                    (
                        count_with_unit(" waiting to start, "),
                        count_with_unit(" in progress, "),
                        count_with_unit(" completed waiting"),
                    ),
                )?;
                set(&mut stats.kv_fetch_waiting_to_start, Some(a))?;
                set(&mut stats.kv_fetch_in_progress, Some(b))?;
                set(&mut stats.kv_fetch_completed_waiting, Some(c))?;
            }
            "Prefix cache hit rate" => set(
                &mut stats.prefix_cache_hit_rate_percent,
                whole(value, with_unit("%")),
            )?,
            "External prefix cache hit rate" => set(
                &mut stats.external_prefix_cache_hit_rate_percent,
                whole(value, with_unit("%")),
            )?,
            "MM cache hit rate" => set(
                &mut stats.mm_cache_hit_rate_percent,
                whole(value, with_unit("%")),
            )?,
            _ => {
                if let Some(device) = key.strip_suffix(" KV cache usage") {
                    note_usage(usages, device, whole(value, with_unit("%"))?)?;
                } else if !is_key(key) {
                    return None;
                } else {
                    // Any other key is a field from a newer vLLM: skipped, never an error.
                    stats.skipped_fields = true;
                }
            }
        }
    }
    Some(())
}

/// Completes the stats a line's fields gave with its KV-cache usages; `None` unless they are a
/// whole stats line of some vLLM version. (By reference: the stats are 400 bytes, and each move
/// of them was a copy, per stats line.)
fn complete<'a>(stats: &mut VllmStats<'a>, usages: Usages<'a>) -> Option<()> {
    let v0 = stats.pending.is_some() || stats.swapped.is_some();
    if v0 {
        // V0 prints `GPU KV cache usage` (whatever the hardware) and `CPU KV cache usage` (swap).
        for (device, percent) in usages.into_iter().flatten() {
            match device {
                "GPU" => set(&mut stats.kv_cache_usage_percent, Some(percent))?,
                "CPU" => set(&mut stats.cpu_swap_usage_percent, Some(percent))?,
                _ => return None,
            }
        }
        stats.kv_cache_device = Some("GPU");
        let complete = stats.prompt_throughput.is_some()
            && stats.generation_throughput.is_some()
            && stats.running.is_some()
            && stats.swapped.is_some()
            && stats.pending.is_some()
            && stats.kv_cache_usage_percent.is_some()
            && stats.cpu_swap_usage_percent.is_some()
            && stats.waiting.is_none();
        return complete.then_some(());
    }
    match usages {
        [Some((device, percent)), None] => {
            stats.kv_cache_device = Some(device);
            stats.kv_cache_usage_percent = Some(percent);
        }
        [None, None] => {}
        _ => return None,
    }
    let has_throughput = stats.prompt_throughput.is_some() || stats.generation_throughput.is_some();
    let complete = if has_throughput {
        // 0.7.1 and later: both throughputs, both queues and the KV usage are always printed.
        stats.prompt_throughput.is_some()
            && stats.generation_throughput.is_some()
            && stats.running.is_some()
            && stats.waiting.is_some()
            && stats.kv_cache_usage_percent.is_some()
    } else {
        // 0.7.0 printed only `Running: N reqs, Waiting: N reqs `.
        stats.running.is_some() && stats.waiting.is_some() && stats.kv_cache_usage_percent.is_none()
    };
    complete.then_some(())
}

/// `GPU`, `XPU`, `NPU`, `CPU`, `TPU`, `HPU`, ...: `device_type.upper()` in vLLM 0.30+.
fn is_device_word(word: &str) -> bool {
    !word.is_empty()
        && word.len() <= 16
        && word
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

/// A plausible field name: what vLLM's future fields will look like, and what a message
/// that merely contains `: ` after a comma (prose, a traceback) does not.
fn is_key(key: &str) -> bool {
    let mut bytes = key.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_uppercase())
        && key.len() <= 64
        && key.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b' ' | b'-' | b'_' | b'/' | b'(' | b')')
        })
}

/// The experimental V1 engine's `RUNNING: 3 | WAITING: 1` (0.6.4 to 0.6.6).
fn running_waiting_0_6(scope: Scope, rest: &str) -> Option<VllmStats<'static>> {
    let (running, waiting) = whole(
        rest.trim_end(),
        (uint, tag(" | WAITING: "), uint).map(|(r, _, w)| (r, w)),
    )?;
    Some(VllmStats {
        engine: scope.engine,
        aggregated_engines: scope.aggregated_engines,
        running: Some(running),
        waiting: Some(waiting),
        ..VllmStats::default()
    })
}

fn prefix_cache_v0(rest: &str) -> Option<PrefixCacheV0> {
    let (gpu, cpu) = whole(
        rest.trim_end(),
        (float, tag("%, CPU: "), float, tag("%")).map(|(g, _, c, _)| (g, c)),
    )?;
    Some(PrefixCacheV0 {
        gpu_hit_rate_percent: gpu,
        cpu_hit_rate_percent: cpu,
    })
}

fn device_usage(input: &str) -> IResult<&str, (&str, f64)> {
    (
        tag(", "),
        take_while1(|c: char| c.is_ascii_uppercase() || c.is_ascii_digit()),
        tag(" KV cache usage: "),
        float,
        tag("%"),
    )
        .map(|(_, device, _, percent, _)| (device, percent))
        .parse(input)
}

fn iteration(scope: Scope, body: &str) -> Option<Iteration<'_>> {
    let (iteration, (ctx_req, ctx_tok, gen_req, gen_tok), elapsed_ms, dummy, usage, encoder) =
        whole(
            body.trim_end(),
            (
                (tag("Iteration("), uint, tag("): ")).map(|(_, n, _)| n),
                (
                    count_with_unit(" context requests, "),
                    count_with_unit(" context tokens, "),
                    count_with_unit(" generation requests, "),
                    count_with_unit(" generation tokens, iteration elapsed time: "),
                ),
                with_unit(" ms"),
                opt(tag(" (dummy)")).map(|d| d.is_some()),
                opt(device_usage),
                opt((
                    tag(", encoder inputs: "),
                    uint,
                    tag(", encoder output embeddings: "),
                    uint,
                )
                    .map(|(_, a, _, b)| (a, b))),
            ),
        )?;
    Some(Iteration {
        engine: scope.engine,
        iteration,
        context_requests: ctx_req,
        context_tokens: ctx_tok,
        generation_requests: gen_req,
        generation_tokens: gen_tok,
        elapsed_ms,
        dummy,
        kv_cache_device: usage.map(|u| u.0),
        kv_cache_usage_percent: usage.map(|u| u.1),
        encoder_inputs: encoder.map(|e| e.0),
        encoder_output_embeddings: encoder.map(|e| e.1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bodies (after head and scope) of every line case, and edits of each: cut at every
    /// byte, digits made other numbers, separators changed, fields doubled or dropped.
    fn case_bodies_and_edits() -> Vec<String> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/cases");
        let mut bodies = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let file: toml::Value = toml::from_str(&text).unwrap();
            for case in file["case"].as_array().unwrap() {
                let line = case["line"].as_str().unwrap();
                let message = crate::vllm::head::split(line).message;
                bodies.push(scope(message).1.trim_end().to_string());
            }
        }
        let mut edited = Vec::new();
        for body in &bodies {
            edited.extend(
                (0..=body.len())
                    .filter_map(|at| body.get(..at))
                    .map(str::to_string),
            );
            for (from, to) in [
                ("1", "1e3"),
                ("0", "nan"),
                (".", ""),
                ("%", " %"),
                (", ", ","),
                (", ", ", , "),
                (" reqs", ""),
                ("GPU", "gpu"),
                ("Running", "Waiting"),
                (" tokens/s", " tokens/s: 1"),
            ] {
                edited.push(body.replacen(from, to, 1));
                edited.push(body.replace(from, to));
            }
            edited.push(format!("{body}, {body}"));
            edited.push(format!("{body}, Avg prompt throughput: 1.0 tokens/s"));
            edited.push(format!("{body}, XPU KV cache usage: 1.0%"));
            edited.push(format!("{body}, Some new field: 3"));
        }
        bodies.extend(edited);
        bodies
    }

    #[test]
    fn the_known_fields_read_in_one_pass_are_the_fields_the_splitter_reads() {
        let fresh = || (VllmStats::default(), [None, None]);
        let mut read_in_one_pass = 0;
        for body in case_bodies_and_edits() {
            let (mut fast, mut fast_usages) = fresh();
            if read_known_fields(&body, &mut fast, &mut fast_usages).is_none() {
                continue;
            }
            read_in_one_pass += 1;
            let (mut split, mut split_usages) = fresh();
            assert_eq!(
                read_fields(&body, &mut split, &mut split_usages),
                Some(()),
                "{body:?}"
            );
            assert_eq!((fast, fast_usages), (split, split_usages), "{body:?}");
        }
        assert!(
            read_in_one_pass > 100,
            "{read_in_one_pass} read in one pass"
        );
    }

    fn stats(message: &str) -> Option<VllmStats<'_>> {
        match parse(message)? {
            VllmRecord::Stats(s) => Some(s),
            _ => None,
        }
    }

    #[test]
    fn v0_cpu_usage_is_swap_and_v1_cpu_usage_is_the_device() {
        let v0 = stats("Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 3.0%, CPU KV cache usage: 4.0%.").unwrap();
        assert_eq!(
            (v0.kv_cache_device, v0.cpu_swap_usage_percent),
            (Some("GPU"), Some(4.0))
        );
        let v1 = stats("Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, CPU KV cache usage: 3.0%").unwrap();
        assert_eq!(
            (v1.kv_cache_device, v1.cpu_swap_usage_percent),
            (Some("CPU"), None)
        );
    }

    #[test]
    fn a_value_cut_short_rejects_the_line() {
        assert!(stats(
            "Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 4"
        )
        .is_none());
        assert!(stats("Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 3.0%, Prefix cache hit rate: 41").is_none());
    }

    #[test]
    fn only_a_message_that_starts_with_the_stats_text_is_stats() {
        assert!(
            stats("Received request x: prompt: 'Avg prompt throughput: 1.0 tokens/s'").is_none()
        );
        assert_eq!(stats("RUNNING: 3 | WAITING: 1").unwrap().waiting, Some(1));
    }
}
