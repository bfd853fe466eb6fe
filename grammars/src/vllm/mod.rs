//! vLLM: every stats, capacity and identity line from 0.1.7 to 0.33.
//!
//! A vLLM record is `[VLLM_LOGGING_PREFIX][(Process pid=N) ]LEVEL MM-DD HH:MM:SS [file.py:N] message`
//! (the bracket before the file name arrived in 0.8.0; the process prefix moved into the
//! formatter in 0.31). [`head`] finds that head anywhere in the line, because tqdm progress bars
//! and supervisors glue text in front of it; the message is then handed to the production for
//! the anchor it contains. Values stay as printed: percentages are percentages.

pub mod fields;
pub mod head;
pub mod lifecycle;
pub mod spec;
pub mod startup;
pub mod stats;

use serde::Serialize;

use crate::{Outcome, Parsed};

pub use lifecycle::Lifecycle;

pub use spec::SpecDecoding;
pub use startup::{Blocks, EngineConfig, KvCacheSize, MaxConcurrency, NumGpuBlocks, Preemptions};
pub use stats::{Iteration, PrefixCacheV0, VllmStats};

/// Substrings at least one of which every line this module parses contains.
pub const ANCHORS: &[&str] = &[
    "throughput: ",
    "Running: ",
    "RUNNING: ",
    "Prefix cache hit rate: GPU: ",
    "Speculative metrics: ",
    "SpecDecoding metrics: ",
    " blocks: ",
    "KV cache size: ",
    "Maximum concurrency for ",
    "num_gpu_blocks is: ",
    " with config: ",
    "total_num_cumulative_preemption=",
    "Iteration(",
];

/// vLLM in the dispatch's registry ([`crate::ENGINES`]).
pub static GRAMMAR: crate::EngineGrammar = crate::EngineGrammar {
    engine: "vllm",
    anchors: || anchors().collect(),
    first_stage: || {
        FIRST_STAGE
            .iter()
            .chain(lifecycle::ANCHORS)
            .copied()
            .collect()
    },
    known_stage: KNOWN_STAGE,
    banner: &["onfig: ", "r version "],
    grammar_names: &[
        "vllm_stats",
        "vllm_prefix_cache",
        "vllm_spec_decoding",
        "vllm_capacity",
        "vllm_config",
        "vllm_preemption",
        "vllm_iteration",
        "vllm_lifecycle",
    ],
    read_message,
    read_foreign: Some(read_foreign),
};

/// The first stage's pieces of [`ANCHORS`] (see [`crate::PREFILTER`]); the lifecycle anchors
/// are rare enough as they are.
const FIRST_STAGE: &[&str] = &[
    "hput: ",
    "Running: ",
    "RUNNING: ",
    "Prefix cache hit rate: GPU: ",
    "Speculative metrics: ",
    "SpecDecoding metrics: ",
    "blocks: ",
    "KV cache",
    "Maximum concurrency for ",
    "_gpu_blocks is: ",
    "onfig: ",
    "_cumulative_preemption=",
    "Iteration(",
];

/// The first stage's pieces for the lines read only in a log known to hold vLLM's records
/// ([`crate::LogAnchors`]): the engine core's fatal error and the API server's version line.
/// `fatal error` and `r version ` rather than the lines' starts: `Eng` and `vLL` begin every
/// stats line and every mention of vLLM, and the SIMD search stops at the first three bytes.
pub const KNOWN_STAGE: &[&str] = &["fatal error", "r version "];

/// Every anchor of this module: the stats and startup ones above, the lifecycle lines', and
/// those of the lines read only in a log known to be vLLM's ([`KNOWN_STAGE`]).
pub fn anchors() -> impl Iterator<Item = &'static str> {
    ANCHORS
        .iter()
        .chain(lifecycle::ANCHORS)
        .chain(startup::SERVER_VERSIONS)
        .chain([lifecycle::FATAL_ERROR].iter())
        .copied()
}

/// The record [`crate::Record`] holds for this engine.
pub type EngineRecord<'a> = VllmRecord<'a>;

/// What one vLLM line says.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum VllmRecord<'a> {
    /// The periodic stats summary (every era, V0 and V1).
    Stats(VllmStats<'a>),
    /// V0's separate `Prefix cache hit rate: GPU: X%, CPU: Y%` line (0.5.5 to 0.11.0).
    PrefixCacheV0(PrefixCacheV0),
    /// `Speculative metrics:` (V0) and `SpecDecoding metrics:` (V1) lines.
    SpecDecoding(SpecDecoding),
    /// `GPU KV cache size: N tokens` (0.8.0+), possibly joined with the max-concurrency line.
    KvCacheSize(KvCacheSize<'a>),
    /// `Maximum concurrency for N tokens per request: X.XXx`.
    MaxConcurrency(MaxConcurrency),
    /// `# GPU blocks: N, # CPU blocks: M` and its device-word variants.
    Blocks(Blocks<'a>),
    /// `Engine 000: vllm cache_config_info with initialization after num_gpu_blocks is: N`.
    NumGpuBlocks(NumGpuBlocks),
    /// `Initializing ... LLM engine (vX) with config: model='...', ...`: names the model.
    EngineConfig(EngineConfig<'a>),
    /// V0's every-50th preemption warning, carrying `total_num_cumulative_preemption=N`.
    Preemptions(Preemptions),
    /// `Iteration(N): ...` detail lines (`--enable-logging-iteration-details`, 0.14+).
    Iteration(Iteration<'a>),
    /// A line that dates a run's start, or says the server stopped or the engine died.
    Lifecycle(Lifecycle),
    /// `vLLM API server version X` (up to 0.14), `vLLM server version X, serving model M`
    /// (0.15+): the version, before the config line says it again.
    ServerVersion { version: &'a str },
}

impl VllmRecord<'_> {
    /// The `grammar` label for lines that produce this record.
    pub fn grammar(&self) -> &'static str {
        match self {
            VllmRecord::Stats(_) => "vllm_stats",
            VllmRecord::PrefixCacheV0(_) => "vllm_prefix_cache",
            VllmRecord::SpecDecoding(_) => "vllm_spec_decoding",
            VllmRecord::KvCacheSize(_)
            | VllmRecord::MaxConcurrency(_)
            | VllmRecord::Blocks(_)
            | VllmRecord::NumGpuBlocks(_) => "vllm_capacity",
            VllmRecord::EngineConfig(_) | VllmRecord::ServerVersion { .. } => "vllm_config",
            VllmRecord::Preemptions(_) => "vllm_preemption",
            VllmRecord::Iteration(_) => "vllm_iteration",
            VllmRecord::Lifecycle(_) => "vllm_lifecycle",
        }
    }
}

impl VllmRecord<'_> {
    /// True when every value is one vLLM can print (see [`crate::domain`]). The per-position
    /// acceptance list is not judged here: vLLM prints `nan` in it for "no data".
    pub fn possible(&self) -> bool {
        use crate::domain::{fraction, magnitude, opt, opt_or_nan, percent};
        match self {
            VllmRecord::Stats(s) => {
                opt(s.prompt_throughput, magnitude)
                    && opt(s.generation_throughput, magnitude)
                    && opt(s.kv_cache_usage_percent, percent)
                    && opt(s.cpu_swap_usage_percent, percent)
                    && opt(s.prefix_cache_hit_rate_percent, percent)
                    && opt(s.external_prefix_cache_hit_rate_percent, percent)
                    && opt(s.mm_cache_hit_rate_percent, percent)
            }
            VllmRecord::PrefixCacheV0(p) => {
                percent(p.gpu_hit_rate_percent) && percent(p.cpu_hit_rate_percent)
            }
            VllmRecord::SpecDecoding(s) => {
                opt_or_nan(s.draft_acceptance_rate, fraction)
                    && opt_or_nan(s.draft_acceptance_rate_percent, percent)
                    && opt_or_nan(s.system_efficiency, fraction)
                    && opt_or_nan(s.mean_acceptance_length, magnitude)
                    && opt(s.accepted_throughput, magnitude)
                    && opt(s.drafted_throughput, magnitude)
            }
            VllmRecord::MaxConcurrency(m) => magnitude(m.concurrency),
            VllmRecord::Iteration(i) => {
                magnitude(i.elapsed_ms) && opt(i.kv_cache_usage_percent, percent)
            }
            VllmRecord::KvCacheSize(_)
            | VllmRecord::Blocks(_)
            | VllmRecord::NumGpuBlocks(_)
            | VllmRecord::EngineConfig(_)
            | VllmRecord::Preemptions(_)
            | VllmRecord::Lifecycle(_)
            | VllmRecord::ServerVersion { .. } => true,
        }
    }
}

/// Reads a line that contains one of [`ANCHORS`].
///
/// The values are checked here, not in the agent's state: the grammar knows what vLLM can
/// print (`%.1f` of a rate over whole tokens, `%.1f%%` of a fraction), so a value outside that
/// is a line that is not what it looks like, and the line is rejected whole. The state then
/// never sees a counter increment that is negative or not finite, whatever metric it feeds.
pub fn read(line: &str) -> Outcome<'_> {
    read_message(line).0
}

/// [`read`], and where the message it read begins in `line` (after the record head).
#[inline]
pub(crate) fn read_message(line: &str) -> (Outcome<'_>, usize) {
    let head = head::split(line);
    let message_at = line.len() - head.message.len();
    (read_head(head), message_at)
}

/// A message behind a head no grammar knows ([`crate::foreign`]), with the process of the last
/// `(Name pid=N)` group in that head. Behind a head of vLLM's own, the message is the one after
/// that head, which [`read_message`] found no record in: text further in is quoted or prose.
fn read_foreign<'a>(before: &'a str, message: &'a str) -> Outcome<'a> {
    let outcome = read_head(head::Head {
        time: None,
        process: head::last_process(before),
        message,
    });
    if outcome != Outcome::Unmatched && head::split(before).time.is_some() {
        return Outcome::Unmatched;
    }
    outcome
}

fn read_head(head: head::Head<'_>) -> Outcome<'_> {
    let message = without_ray_dedup(head.message);
    // Each production asked in turn, not through `Option::or_else`: a stats record moved
    // through each `or_else` was copied each time.
    let record = match stats::parse(message) {
        Some(record) => Some(record),
        None => spec::parse(message)
            .or_else(|| startup::parse(message))
            .or_else(|| lifecycle::parse(message)),
    };
    match record {
        Some(record) if record.possible() => Outcome::Parsed(Parsed {
            time: head.time,
            process: head.process,
            record: crate::Record::Vllm(record),
        }),
        Some(record) => Outcome::Rejected {
            grammar: record.grammar(),
        },
        None => match claimed(message) {
            Some(grammar) => Outcome::Rejected { grammar },
            None => Outcome::Unmatched,
        },
    }
}

/// [`read`], for callers that need only the parsed lines.
pub fn parse(line: &str) -> Option<Parsed<'_>> {
    read(line).parsed()
}

/// The grammar whose record a message that did not parse is: one whose message *starts* as
/// vLLM's periodic records do (after `Engine 000: `), so a cut-off or changed stats line is
/// counted, while a request log or traceback that quotes one further in is not.
fn claimed(message: &str) -> Option<&'static str> {
    if message.starts_with("Prefix cache hit rate: GPU: ") {
        return Some("vllm_prefix_cache");
    }
    let (_, body) = stats::scope(message);
    if ["Avg prompt throughput: ", "Running: ", "RUNNING: "]
        .iter()
        .any(|start| body.starts_with(start))
    {
        Some("vllm_stats")
    } else if body.starts_with("SpecDecoding metrics: ")
        || body.starts_with("Speculative metrics: ")
    {
        Some("vllm_spec_decoding")
    } else if body.starts_with("Iteration(") {
        Some("vllm_iteration")
    } else {
        None
    }
}

/// The message without the ` [repeated 2x across cluster]` Ray appends to a line when it folds
/// similar lines of several workers into one (`RAY_DEDUP_LOGS`; the first time in a driver it
/// adds ` (Ray deduplicates logs by default. ...)`): the values on the line are the line's own,
/// the folded lines are gone.
fn without_ray_dedup(message: &str) -> &str {
    // Every stats line is asked: look for the suffix only where it can end.
    let end = message.trim_end();
    if !(end.ends_with(']') || end.ends_with(')')) {
        return message;
    }
    let Some(at) = message.rfind(" [repeated ") else {
        return message;
    };
    let rest = &message[at + " [repeated ".len()..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let after = rest[digits..].strip_prefix("x across cluster]");
    match after.map(str::trim_end) {
        Some("") if digits > 0 => &message[..at],
        Some(note) if digits > 0 && note.starts_with(" (Ray deduplicates logs") => &message[..at],
        _ => message,
    }
}

#[cfg(test)]
mod tests {
    use super::without_ray_dedup;

    #[test]
    fn rays_dedup_suffix_is_not_part_of_the_message() {
        assert_eq!(
            without_ray_dedup("Running: 3 reqs [repeated 2x across cluster]"),
            "Running: 3 reqs"
        );
        assert_eq!(
            without_ray_dedup("Running: 3 reqs [repeated x across cluster]"),
            "Running: 3 reqs [repeated x across cluster]"
        );
        assert_eq!(without_ray_dedup("Running: 3 reqs"), "Running: 3 reqs");
        assert_eq!(
            without_ray_dedup("Running: 3 reqs [repeated 2x across cluster] (Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to disable log deduplication, or see https://docs.ray.io/en/master/ray-observability/user-guides/configure-logging.html#log-deduplication for more options.)"),
            "Running: 3 reqs"
        );
    }
}
