//! The scheduler's batch lines, every era (formats doc section 1.3-1.4):
//!
//! - decode: `Decode batch. ` (0.1.20-0.5.3), `Decode batch [N], ` (0.5.4, and with
//!   `SGLANG_LOG_FORWARD_ITERS=1`), `Decode batch, ` (0.5.4.postN on), or no label at all (0.1.14:
//!   `#running-req: N, #token: N, token usage: x, #queue-req: N`);
//! - prefill: `Prefill batch` with the same separators, `Prefill batch(mixed #running-req: N). `
//!   (0.2.14-0.3.5 mixed chunked prefill), and 0.1.14's `new fill batch. #seq: N. ...` whose
//!   parts are joined by `. ` with underscore names.
//!
//! The body is `key: value` parts joined by `, `, with or without a trailing `, `; new parts
//! arrive every release, so a part with an unknown key is skipped when its value looks like one
//! SGLang prints (a number, a percentage, `True`/`False`, an ISO time). A known key's value must
//! parse whole, and the parts every era prints must be there: a line cut before `#queue-req` or
//! inside a value is rejected.

use serde::Serialize;

use crate::lex::field::{set_once as set, whole};
use crate::lex::number::{float, uint};

/// The KV-pool part of a line: plain, SWA hybrid, SSM hybrid or HiSparse (each `None` where the
/// line does not print it). Usages are fractions as printed (`:.2f`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TokenUsage {
    /// `#token`: KV slots in use (not counting evictable radix-cache tokens).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_usage: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_token_usage: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swa_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swa_token_usage: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mamba_num: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mamba_usage: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_token_usage: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_token_usage: Option<f64>,
}

impl TokenUsage {
    fn fractions(&self) -> [Option<f64>; 6] {
        [
            self.token_usage,
            self.full_token_usage,
            self.swa_token_usage,
            self.mamba_usage,
            self.gpu_token_usage,
            self.cpu_token_usage,
        ]
    }

    pub fn possible(&self) -> bool {
        self.fractions()
            .iter()
            .all(|f| crate::domain::opt(*f, crate::domain::fraction))
    }

    /// The tokens in use and the usage of the main pool: `#token` or, on a hybrid model, the
    /// full-attention pool's (or HiSparse's GPU pool).
    pub fn main_pool(&self) -> (Option<u64>, Option<f64>) {
        (
            self.used_tokens.or(self.full_tokens).or(self.gpu_tokens),
            self.token_usage
                .or(self.full_token_usage)
                .or(self.gpu_token_usage),
        )
    }

    /// Reads a usage part; `None` when the key is none of them, `Some(None)` when its value is bad.
    fn read(&mut self, key: &str, value: &str) -> Option<Option<()>> {
        let (count, ratio) = match key {
            "#token" => (&mut self.used_tokens, None),
            "token usage" => return Some(set(&mut self.token_usage, fixed(value))),
            "#full token" => (&mut self.full_tokens, None),
            "full token usage" => return Some(set(&mut self.full_token_usage, fixed(value))),
            "#swa token" => (&mut self.swa_tokens, None),
            "swa token usage" => return Some(set(&mut self.swa_token_usage, fixed(value))),
            "mamba num" => (&mut self.mamba_num, None),
            "mamba usage" => return Some(set(&mut self.mamba_usage, fixed(value))),
            "#gpu token" => (&mut self.gpu_tokens, None),
            "gpu token usage" => return Some(set(&mut self.gpu_token_usage, fixed(value))),
            "#cpu token" => (&mut self.cpu_tokens, None),
            "cpu token usage" => return Some(set(&mut self.cpu_token_usage, fixed(value))),
            _ => return None,
        };
        let _: Option<()> = ratio;
        Some(set(count, whole(value, uint)))
    }

    fn any(&self) -> bool {
        self.main_pool() != (None, None)
    }
}

/// The device-graph flag: `cuda graph: True` (`npu`, `cpu`, `musa` on other devices).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Graph<'a> {
    /// `cuda`, `npu`, `cpu` or `musa` (an Ascend NPU prints `cpu` in 0.5.3-0.5.8).
    pub backend: &'a str,
    /// Whether the last batch ran as a captured graph.
    pub used: bool,
}

/// A decode line (one per `decode_log_interval` decode steps, default 40, per logging rank).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SglangDecode<'a> {
    /// The forward iteration of `Decode batch [N], `.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u64>,
    pub running_reqs: u64,
    #[serde(flatten)]
    pub usage: TokenUsage,
    /// `accept len`: accepted tokens per verify step (speculative decoding).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accept_len: Option<f64>,
    /// `accept rate`: accepted over proposed draft tokens (0.5.3.post3+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accept_rate: Option<f64>,
    /// PD decode: `pre-allocated usage`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pre_allocated_usage: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prealloc_reqs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transfer_reqs: Option<u64>,
    /// PD decode: `#retracted-req`, requests retracted now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retracted_reqs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_image_reqs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph: Option<Graph<'a>>,
    /// `gen throughput (token/s)` since the previous decode line (absent in 0.1.14).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gen_throughput: Option<f64>,
    /// `largest-len` (0.4.4 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub largest_len: Option<u64>,
    pub queue_reqs: u64,
    /// The body ended with `, `, as 0.4.4-0.4.5 and 0.4.10-0.5.8 print it (0.5.9 on do not): a
    /// hint of the release, which changes what SGLang's collector makes of some fields.
    #[serde(skip)]
    pub trailing_separator: bool,
    /// A part with a key this grammar does not know was skipped.
    #[serde(skip)]
    pub skipped_fields: bool,
}

/// A prefill line (one per prefill batch, or chunk, formed).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SglangPrefill<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u64>,
    /// `Prefill batch(mixed #running-req: N)`: mixed chunked prefill (0.2.14-0.3.5).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub mixed: bool,
    /// `#new-seq`: requests in this batch.
    pub new_seqs: u64,
    /// `#new-token`: tokens computed in this batch (the uncached part).
    pub new_tokens: u64,
    /// `#cached-token`: prefix-cache hit tokens of this batch.
    pub cached_tokens: u64,
    /// `cache hit rate` (0.1.20-0.4.3; 0.1.14 `tree_cache_hit_rate`): the cumulative radix-cache
    /// hit ratio since start, in percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_hit_rate_percent: Option<f64>,
    #[serde(flatten)]
    pub usage: TokenUsage,
    /// Absent in 0.4.9's PD-prefill line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running_reqs: Option<u64>,
    pub queue_reqs: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_tokens: Option<u64>,
    /// PD prefill: `#unbootstrapped-req` (0.4.6-0.5.2), `#prealloc-req` (0.5.3-0.5.11),
    /// `#bootstrap-req` (0.5.12+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bootstrap_reqs: Option<u64>,
    /// PD prefill: `#transferring-req` (to 0.5.2), `#inflight-req` (0.5.3+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inflight_reqs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optimistic_reqs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_image_reqs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph: Option<Graph<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_throughput: Option<f64>,
    /// The body ended with `, ` (to 0.5.8; see [`SglangDecode::trailing_separator`]).
    #[serde(skip)]
    pub trailing_separator: bool,
    #[serde(skip)]
    pub skipped_fields: bool,
}

/// What a batch line's message is, from its start; the rest is its body.
pub enum Label<'a> {
    Decode {
        iteration: Option<u64>,
        body: &'a str,
    },
    Prefill {
        iteration: Option<u64>,
        mixed_running: Option<u64>,
        body: &'a str,
    },
    /// 0.1.14's `new fill batch. `.
    NewFill(&'a str),
    /// A message that starts like a batch line but whose label is cut or changed.
    Broken(&'static str),
}

/// The label at the start of `message`, or `None` when it is no batch line.
pub fn label(message: &str) -> Option<Label<'_>> {
    if let Some(body) = message.strip_prefix("new fill batch. ") {
        return Some(Label::NewFill(body));
    }
    if message.starts_with("#running-req: ") {
        return Some(Label::Decode {
            iteration: None,
            body: message,
        });
    }
    let (decode, rest) = if let Some(rest) = message.strip_prefix("Decode batch") {
        (true, rest)
    } else if let Some(rest) = message.strip_prefix("Prefill batch") {
        (false, rest)
    } else {
        return None;
    };
    let broken = Label::Broken(if decode {
        "sglang_decode"
    } else {
        "sglang_prefill"
    });
    let mut mixed_running = None;
    let mut rest = rest;
    if !decode {
        if let Some(after) = rest.strip_prefix("(mixed #running-req: ") {
            let Ok((after, n)) = uint(after) else {
                return Some(broken);
            };
            let Some(after) = after.strip_prefix(')') else {
                return Some(broken);
            };
            mixed_running = Some(n);
            rest = after;
        }
    }
    let mut iteration = None;
    if let Some(after) = rest.strip_prefix(" [") {
        let Some((n, after)) = uint(after)
            .ok()
            .and_then(|(after, n)| after.strip_prefix(']').map(|after| (n, after)))
        else {
            return Some(broken);
        };
        iteration = Some(n);
        rest = after;
    }
    let body = match rest.strip_prefix(". ").or_else(|| rest.strip_prefix(", ")) {
        Some(body) => body,
        // `Decode batch` in prose (`Decode batch size`) is no record; a bare label is a cut one.
        None if rest.is_empty() || rest == "." || rest == "," => return Some(broken),
        None => return None,
    };
    Some(if decode {
        Label::Decode { iteration, body }
    } else {
        Label::Prefill {
            iteration,
            mixed_running,
            body,
        }
    })
}

/// The parts of a body joined by `sep`, without the trailing separator some releases print.
fn parts<'a>(body: &'a str, sep: &'a str) -> impl Iterator<Item = &'a str> {
    let body = body.trim_end();
    let body = body.strip_suffix(sep.trim_end()).unwrap_or(body);
    body.split(sep)
}

/// Whether a `, `-joined body ends with its separator (trailing blanks trimmed, as a log
/// shipper may do).
fn ends_with_separator(body: &str) -> bool {
    body.trim_end().ends_with(',')
}

/// A part's key and value.
fn pair(part: &str) -> Option<(&str, &str)> {
    part.split_once(": ")
}

/// A `:.2f` float: a cut `0.` or `0.4` of `0.45` may still parse, a cut `0` with no point does not
/// (SGLang prints every fraction and rate with decimals).
fn fixed(value: &str) -> Option<f64> {
    let (_, decimals) = value.split_once('.')?;
    (!decimals.is_empty()).then_some(())?;
    whole(value, float)
}

fn flag(value: &str) -> Option<bool> {
    match value {
        "True" => Some(true),
        "False" => Some(false),
        _ => None,
    }
}

/// An unknown part: a plausible key and a value as SGLang prints them. What a cut line leaves
/// (`fwd occupancy: 45.`, `est. read BW (GB/s per`) is neither.
fn skippable(key: &str, value: &str) -> bool {
    let key_ok = !key.is_empty()
        && key.len() <= 64
        && key.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(b, b' ' | b'#' | b'-' | b'_' | b'/' | b'(' | b')' | b'.')
        });
    let number = value.strip_suffix('%').unwrap_or(value);
    let value_ok = flag(value).is_some()
        || whole(number, uint).is_some()
        || fixed(number).is_some()
        // 0.4.9.post1-post2's `timestamp: 2025-07-18T15:32:54.159394`.
        || (value.len() >= 19
            && value.as_bytes()[10] == b'T'
            && value.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'-' | b':' | b'.' | b'T')));
    key_ok && value_ok
}

/// The graph flag, when `key` is one.
fn graph<'a>(key: &'a str, value: &str) -> Option<Option<Graph<'a>>> {
    let backend = key.strip_suffix(" graph")?;
    matches!(backend, "cuda" | "npu" | "cpu" | "musa").then_some(())?;
    Some(flag(value).map(|used| Graph { backend, used }))
}

pub fn decode(iteration: Option<u64>, body: &str) -> Option<SglangDecode<'_>> {
    let mut d = SglangDecode {
        iteration,
        trailing_separator: ends_with_separator(body),
        ..Default::default()
    };
    let (mut running, mut queue) = (None, None);
    for part in parts(body, ", ") {
        let (key, value) = pair(part)?;
        if let Some(ok) = d.usage.read(key, value) {
            ok?;
            continue;
        }
        if let Some(g) = graph(key, value) {
            set(&mut d.graph, g)?;
            continue;
        }
        match key {
            "#running-req" => set(&mut running, whole(value, uint))?,
            "#queue-req" => set(&mut queue, whole(value, uint))?,
            "gen throughput (token/s)" => set(&mut d.gen_throughput, fixed(value))?,
            "accept len" => set(&mut d.accept_len, fixed(value))?,
            "accept rate" => set(&mut d.accept_rate, fixed(value))?,
            "pre-allocated usage" => set(&mut d.pre_allocated_usage, fixed(value))?,
            "#prealloc-req" => set(&mut d.prealloc_reqs, whole(value, uint))?,
            "#transfer-req" => set(&mut d.transfer_reqs, whole(value, uint))?,
            "#retracted-req" => set(&mut d.retracted_reqs, whole(value, uint))?,
            "waiting-image-req" => set(&mut d.waiting_image_reqs, whole(value, uint))?,
            "largest-len" => set(&mut d.largest_len, whole(value, uint))?,
            _ if skippable(key, value) => d.skipped_fields = true,
            _ => return None,
        }
    }
    d.running_reqs = running?;
    d.queue_reqs = queue?;
    d.usage.any().then_some(d)
}

pub fn prefill(
    iteration: Option<u64>,
    mixed_running: Option<u64>,
    body: &str,
) -> Option<SglangPrefill<'_>> {
    let mut p = SglangPrefill {
        iteration,
        mixed: mixed_running.is_some(),
        running_reqs: mixed_running,
        trailing_separator: ends_with_separator(body),
        ..Default::default()
    };
    let (mut seqs, mut new, mut cached, mut queue) = (None, None, None, None);
    let mut running = None;
    for part in parts(body, ", ") {
        let (key, value) = pair(part)?;
        if let Some(ok) = p.usage.read(key, value) {
            ok?;
            continue;
        }
        if let Some(g) = graph(key, value) {
            set(&mut p.graph, g)?;
            continue;
        }
        match key {
            "#new-seq" => set(&mut seqs, whole(value, uint))?,
            "#new-token" => set(&mut new, whole(value, uint))?,
            "#cached-token" => set(&mut cached, whole(value, uint))?,
            "cache hit rate" => set(&mut p.cache_hit_rate_percent, percent(value))?,
            "#running-req" => set(&mut running, whole(value, uint))?,
            "#queue-req" => set(&mut queue, whole(value, uint))?,
            "#pending-token" => set(&mut p.pending_tokens, whole(value, uint))?,
            "#replay-token" => set(&mut p.replay_tokens, whole(value, uint))?,
            "#unbootstrapped-req" | "#prealloc-req" | "#bootstrap-req" => {
                set(&mut p.bootstrap_reqs, whole(value, uint))?
            }
            "#transferring-req" | "#inflight-req" => set(&mut p.inflight_reqs, whole(value, uint))?,
            "#optimistic-req" => set(&mut p.optimistic_reqs, whole(value, uint))?,
            "waiting-image-req" => set(&mut p.waiting_image_reqs, whole(value, uint))?,
            "input throughput (token/s)" => set(&mut p.input_throughput, fixed(value))?,
            _ if skippable(key, value) => p.skipped_fields = true,
            _ => return None,
        }
    }
    if running.is_some() {
        set(&mut p.running_reqs, running)?;
    }
    p.new_seqs = seqs?;
    p.new_tokens = new?;
    p.cached_tokens = cached?;
    p.queue_reqs = queue?;
    Some(p)
}

/// `12.34%`.
fn percent(value: &str) -> Option<f64> {
    fixed(value.strip_suffix('%')?)
}

/// 0.1.14: `#seq: 1. #cached_token: 0. #new_token: 8. #remaining_req: 0. #running_req: 0.
/// tree_cache_hit_rate: 0.00%.`
pub fn new_fill(body: &str) -> Option<SglangPrefill<'static>> {
    let mut p = SglangPrefill::default();
    let (mut seqs, mut new, mut cached, mut queue, mut running) = (None, None, None, None, None);
    for part in parts(body, ". ") {
        let (key, value) = pair(part)?;
        match key {
            "#seq" => set(&mut seqs, whole(value, uint))?,
            "#cached_token" => set(&mut cached, whole(value, uint))?,
            "#new_token" => set(&mut new, whole(value, uint))?,
            // The requests left in the queue once this batch was taken from it.
            "#remaining_req" => set(&mut queue, whole(value, uint))?,
            "#running_req" => set(&mut running, whole(value, uint))?,
            "tree_cache_hit_rate" => set(&mut p.cache_hit_rate_percent, percent(value))?,
            _ => return None,
        }
    }
    p.new_seqs = seqs?;
    p.new_tokens = new?;
    p.cached_tokens = cached?;
    p.queue_reqs = queue?;
    p.running_reqs = Some(running?);
    p.cache_hit_rate_percent?;
    Some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trailing_separator_is_no_part() {
        assert_eq!(parts("a: 1, b: 2, ", ", ").count(), 2);
        assert_eq!(parts("a: 1. b: 2.00%.", ". ").last(), Some("b: 2.00%"));
    }

    #[test]
    fn a_trailing_separator_is_noted_for_the_release_it_hints_at() {
        let to_0_5_8 = "#running-req: 1, #token: 9, token usage: 0.00, #queue-req: 0, ";
        let from_0_5_9 = "#running-req: 1, #token: 9, token usage: 0.00, #queue-req: 0";
        assert!(decode(None, to_0_5_8).unwrap().trailing_separator);
        assert!(!decode(None, from_0_5_9).unwrap().trailing_separator);
        let prefill_to_0_5_8 = "#new-seq: 1, #new-token: 8, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, ";
        assert!(
            prefill(None, None, prefill_to_0_5_8)
                .unwrap()
                .trailing_separator
        );
    }

    #[test]
    fn unknown_parts_are_skipped_and_cut_ones_are_not() {
        assert!(skippable("fwd occupancy", "45.20%"));
        assert!(skippable("est. read BW (GB/s per GPU)", "1.50"));
        assert!(skippable("timestamp", "2025-07-18T15:32:54.159394"));
        assert!(!skippable("fwd occupancy", "45."));
        assert!(!skippable("fwd occupancy", "45.2x"));
    }

    #[test]
    fn a_graph_flag_names_its_backend() {
        assert_eq!(
            graph("npu graph", "True"),
            Some(Some(Graph {
                backend: "npu",
                used: true
            }))
        );
        assert_eq!(graph("cuda graph", "Tr"), Some(None));
        assert_eq!(graph("my graph", "True"), None);
    }
}
