//! What we know about one vLLM engine, and how each vLLM record changes it.
//!
//! Gauges hold the last printed value (`None` until a line printed one, so a series only
//! appears once the log has said something about it). Counters are what vLLM's own exporter
//! would count, rebuilt from the lines: per-interval sums are added, cumulative totals (V0)
//! are followed across engine restarts.

mod series;

use llmtail_grammars::vllm::{Lifecycle, SpecDecoding, VllmRecord, VllmStats};
use llmtail_grammars::Parsed;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::catalog::{Metric, Row};
use crate::engines::engine::{
    ApplyContext, ChartedSeries, Engine, EngineSetup, Landing, LandingCell, LogView, UnitLabels,
};
use crate::engines::parts::caps::{self, Cap, Refused};
use crate::engines::parts::counting::{add_tokens, fraction_of_percent, CumulativeCounter};
use crate::engines::parts::float;
use crate::engines::parts::liveness::{self, DownReason, LastWord, Phase, Status};
use crate::engines::parts::pacing::{
    IntervalSource, LateTokens, Pacing, StartMarks, StatsInterval, Window,
};
use crate::engines::parts::settings::StateSettings;
use crate::engines::parts::units::Units;
use crate::engines::parts::version::{VersionSource, VllmVersion};

/// `Engine NNN:` is vLLM's data-parallel rank (`--data-parallel-size`). The largest
/// deployments run DP 64 to 256 (wide expert parallelism over 32 nodes of 8 GPUs); 1,024 leaves
/// four times that, and vLLM pads the index to only 3 digits.
pub const ENGINES_PER_LOG: Cap = Cap {
    what: "a vLLM engine index (Engine NNN:)",
    cap: 1024,
};

/// Which engine of a log a series belongs to: the `engine` label. Saved in the state file as
/// that label, so it can key a JSON map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EngineKey {
    /// `Engine 003:` is `Index(3)`; a line without an engine prefix is `Index(0)`.
    Index(u32),
    /// `N Engines Aggregated:`.
    Aggregated,
}

impl EngineKey {
    pub fn label(&self) -> String {
        match self {
            EngineKey::Index(n) => n.to_string(),
            EngineKey::Aggregated => "aggregated".to_string(),
        }
    }

    /// Reads an `engine` label back.
    pub fn from_label(label: &str) -> Option<EngineKey> {
        match label {
            "aggregated" => Some(EngineKey::Aggregated),
            n => n.parse().ok().map(EngineKey::Index),
        }
    }

    /// The engine a `(EngineCore_DP1 pid=N)` process prefix speaks for: capacity lines carry no
    /// `Engine NNN:` prefix, but with data parallelism each engine core logs its own.
    pub fn of_process(process: Option<&str>) -> EngineKey {
        let index = process
            .and_then(|p| p.strip_prefix("EngineCore"))
            .map(|rest| rest.trim_start_matches('_').trim_start_matches("DP"))
            .and_then(|digits| digits.parse().ok())
            .unwrap_or(0);
        EngineKey::Index(index)
    }
}

impl Serialize for EngineKey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.label())
    }
}

impl<'de> Deserialize<'de> for EngineKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let label = String::deserialize(deserializer)?;
        EngineKey::from_label(&label)
            .ok_or_else(|| serde::de::Error::custom(format!("bad engine label {label:?}")))
    }
}

/// Everything exported for one engine of one log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VllmEngine {
    #[serde(with = "float::option")]
    pub running: Option<f64>,
    #[serde(with = "float::option")]
    pub waiting: Option<f64>,
    #[serde(with = "float::option")]
    pub swapped: Option<f64>,
    #[serde(with = "float::option")]
    pub deferred: Option<f64>,
    #[serde(with = "float::option_triple")]
    pub kv_fetch: Option<[f64; 3]>,
    #[serde(with = "float::option")]
    pub corrupted: Option<f64>,
    /// Fraction 0..1, whatever the device word.
    #[serde(with = "float::option")]
    pub kv_cache_usage: Option<f64>,
    #[serde(with = "float::option")]
    pub cpu_cache_usage: Option<f64>,
    #[serde(with = "float::option")]
    pub gpu_prefix_cache_hit_rate: Option<f64>,
    #[serde(with = "float::option")]
    pub cpu_prefix_cache_hit_rate: Option<f64>,
    #[serde(with = "float::option")]
    pub external_prefix_cache_hit_rate: Option<f64>,
    #[serde(with = "float::option")]
    pub mm_cache_hit_rate: Option<f64>,
    #[serde(with = "float::option")]
    pub prompt_throughput: Option<f64>,
    #[serde(with = "float::option")]
    pub generation_throughput: Option<f64>,
    /// Every prompt token (V0, V1 up to 0.15.x): vLLM's `vllm:prompt_tokens_total`.
    #[serde(with = "float::option")]
    pub prompt_tokens: Option<f64>,
    /// Prompt tokens computed locally (V1 0.16.0+, where the line leaves out prefix-cache
    /// hits and transferred KV): `vllm:prompt_tokens_by_source_total{source="local_compute"}`.
    #[serde(with = "float::option")]
    pub prompt_tokens_local_compute: Option<f64>,
    #[serde(with = "float::option")]
    pub generation_tokens: Option<f64>,
    /// V1 `Preemptions: n` summed, plus V0's cumulative warning totals.
    #[serde(with = "float::option")]
    pub preemptions_summed: Option<f64>,
    pub preemptions_cumulative: Option<CumulativeCounter>,
    #[serde(with = "float::option")]
    pub spec_acceptance_rate: Option<f64>,
    #[serde(with = "float::option")]
    pub spec_mean_acceptance_length: Option<f64>,
    #[serde(with = "float::option")]
    pub spec_efficiency: Option<f64>,
    /// `None` at a position without a sample in the last line (vLLM printed `nan`).
    #[serde(with = "float::option_vec")]
    pub spec_per_position: Vec<Option<f64>>,
    #[serde(with = "float::option")]
    pub spec_accepted_tokens: Option<f64>,
    #[serde(with = "float::option")]
    pub spec_draft_tokens: Option<f64>,
    #[serde(with = "float::option")]
    pub spec_emitted_tokens: Option<f64>,
    spec_v0: Option<[CumulativeCounter; 3]>,
    #[serde(with = "float::option")]
    pub kv_cache_capacity_tokens: Option<f64>,
    #[serde(with = "float::option")]
    pub max_concurrency: Option<f64>,
    #[serde(with = "float::option")]
    pub gpu_blocks: Option<f64>,
    #[serde(with = "float::option")]
    pub cpu_blocks: Option<f64>,
    #[serde(with = "float::option")]
    pub iterations: Option<f64>,
    #[serde(with = "float::option")]
    pub iteration_context_tokens: Option<f64>,
    #[serde(with = "float::option")]
    pub iteration_generation_tokens: Option<f64>,
    /// Start-ups of this engine seen in the log.
    pub starts: u64,
    /// When the last line about this engine was written.
    #[serde(with = "float::option")]
    pub last_line_at: Option<f64>,
    /// The spacing of this engine's stats lines: the interval and the window of each line.
    pub pacing: Pacing,
    /// What the logging loop's lateness adds to each token counter: `[prompt, generation]`.
    late_tokens: [LateTokens; 2],
    /// Whether the last stats line was V0's (V0 and V1 pace their lines differently).
    pub last_line_v0: bool,
    /// Judged at each scrape from the log's last word and the time.
    #[serde(skip)]
    pub status: Status,
    /// The log's vLLM version (`unknown` when not known), set with the status.
    #[serde(skip)]
    pub version_label: String,
}

/// How a stats line is read: the settings and what the log said about its vLLM.
#[derive(Debug, Clone, Copy)]
pub struct StatsContext<'a> {
    pub interval: StatsInterval,
    pub version: Option<&'a VllmVersion>,
}

fn add(counter: &mut Option<f64>, amount: f64) {
    *counter = Some(counter.unwrap_or(0.0) + amount);
}

fn percent(value: Option<f64>) -> Option<f64> {
    value.map(fraction_of_percent)
}

/// A V0 stats line: only V0 has `Swapped` and `Pending`.
fn is_v0(stats: &VllmStats<'_>) -> bool {
    stats.swapped.is_some() || stats.pending.is_some()
}

/// Fields vLLM prints only while non-zero: once seen, a line without them means zero.
fn while_nonzero(slot: &mut Option<f64>, printed: Option<u64>) {
    match printed {
        Some(v) => *slot = Some(v as f64),
        None if slot.is_some() => *slot = Some(0.0),
        None => {}
    }
}

impl VllmEngine {
    /// Applies a stats line written at `at` (seconds, when the line says).
    pub fn apply_stats(
        &mut self,
        stats: &VllmStats<'_>,
        at: Option<f64>,
        reading: StatsContext<'_>,
    ) {
        self.apply_stats_gauges(stats);
        if stats.prompt_throughput.is_some() || stats.generation_throughput.is_some() {
            self.integrate_throughput(stats, at, reading);
        }
        // `Preemptions: n` is printed only when non-zero (0.11.1+), and older lines have no such
        // field: the counter appears with the first preemption the log reports.
        if let Some(n) = stats.preemptions {
            add(&mut self.preemptions_summed, n as f64);
        }
        self.last_line_at = at.or(self.last_line_at);
    }

    fn apply_stats_gauges(&mut self, stats: &VllmStats<'_>) {
        let count = |v: Option<u64>| v.map(|v| v as f64);
        self.running = count(stats.running).or(self.running);
        self.waiting = count(stats.waiting.or(stats.pending)).or(self.waiting);
        self.swapped = count(stats.swapped).or(self.swapped);
        self.corrupted = count(stats.corrupted).or(self.corrupted);
        while_nonzero(&mut self.deferred, stats.deferred);
        match (
            stats.kv_fetch_waiting_to_start,
            stats.kv_fetch_in_progress,
            stats.kv_fetch_completed_waiting,
        ) {
            (Some(a), Some(b), Some(c)) => self.kv_fetch = Some([a as f64, b as f64, c as f64]),
            _ if self.kv_fetch.is_some() => self.kv_fetch = Some([0.0; 3]),
            _ => {}
        }
        self.kv_cache_usage = percent(stats.kv_cache_usage_percent).or(self.kv_cache_usage);
        self.cpu_cache_usage = percent(stats.cpu_swap_usage_percent).or(self.cpu_cache_usage);
        self.gpu_prefix_cache_hit_rate =
            percent(stats.prefix_cache_hit_rate_percent).or(self.gpu_prefix_cache_hit_rate);
        self.external_prefix_cache_hit_rate = percent(stats.external_prefix_cache_hit_rate_percent)
            .or(self.external_prefix_cache_hit_rate);
        self.mm_cache_hit_rate =
            percent(stats.mm_cache_hit_rate_percent).or(self.mm_cache_hit_rate);
        self.prompt_throughput = stats.prompt_throughput.or(self.prompt_throughput);
        self.generation_throughput = stats.generation_throughput.or(self.generation_throughput);
    }

    /// Adds `throughput x window` to the token counters, the window being what vLLM measured
    /// the throughput over (see [`Pacing`]); prompt tokens go to the counter whose meaning the
    /// line's version has.
    fn integrate_throughput(
        &mut self,
        stats: &VllmStats<'_>,
        at: Option<f64>,
        reading: StatsContext<'_>,
    ) {
        let prompt = stats.prompt_throughput.unwrap_or(0.0);
        let generation = stats.generation_throughput.unwrap_or(0.0);
        let v0 = is_v0(stats);
        self.last_line_v0 = v0;
        let had_work = prompt > 0.0 || generation > 0.0;
        let window = if v0 {
            Window {
                seconds: self.pacing.v0_window(at, had_work, reading.interval),
                plus_lateness: false,
            }
        } else {
            self.pacing.v1_window(at, had_work, reading.interval)
        };
        let lateness = self.pacing.lateness(self.interval(reading.interval).0);
        let [late_prompt, late_generation] = &mut self.late_tokens;
        if let Some(tp) = stats.prompt_throughput {
            let all_tokens = v0 || VllmVersion::v1_prompt_counts_all_tokens(reading.version);
            let counter = if all_tokens {
                &mut self.prompt_tokens
            } else {
                &mut self.prompt_tokens_local_compute
            };
            *counter = Some(add_tokens(
                *counter,
                late_prompt.tokens(tp, window, lateness),
            ));
        }
        if let Some(tp) = stats.generation_throughput {
            let tokens = late_generation.tokens(tp, window, lateness);
            self.generation_tokens = Some(add_tokens(self.generation_tokens, tokens));
        }
    }

    /// A new start-up of the engine: its gauges end with the old run (the new one prints its
    /// own), its counters go on, and the first line's window starts at the start-up.
    pub fn restart(&mut self, marks: StartMarks, interval: StatsInterval) {
        let mut pacing = std::mem::take(&mut self.pacing);
        pacing.start(marks, interval);
        *self = VllmEngine {
            prompt_tokens: self.prompt_tokens,
            prompt_tokens_local_compute: self.prompt_tokens_local_compute,
            generation_tokens: self.generation_tokens,
            preemptions_summed: self.preemptions_summed,
            preemptions_cumulative: self.preemptions_cumulative,
            spec_accepted_tokens: self.spec_accepted_tokens,
            spec_draft_tokens: self.spec_draft_tokens,
            spec_emitted_tokens: self.spec_emitted_tokens,
            spec_v0: self.spec_v0,
            iterations: self.iterations,
            iteration_context_tokens: self.iteration_context_tokens,
            iteration_generation_tokens: self.iteration_generation_tokens,
            starts: self.starts + 1,
            last_line_at: self.last_line_at,
            pacing,
            late_tokens: self.late_tokens,
            ..VllmEngine::default()
        };
    }

    /// The interval this engine's lines are read with, and where it comes from.
    pub fn interval(&self, configured: StatsInterval) -> (f64, IntervalSource) {
        self.pacing.interval(configured)
    }

    /// What the engine's lines say about its liveness, for [`liveness::judge`].
    pub fn last_word(&self, phase: Phase, reading: StatsContext<'_>) -> LastWord {
        let prints_idle = VllmVersion::prints_idle_lines(reading.version, self.last_line_v0);
        LastWord {
            phase,
            last_line_at: self.pacing.last_line_at(),
            next_line_due: self.pacing.last_had_work() || prints_idle,
            interval: self.interval(reading.interval).0,
        }
    }

    pub fn up(&self) -> f64 {
        if self.status.is_down() {
            0.0
        } else {
            1.0
        }
    }

    pub fn apply_spec_decoding(&mut self, spec: &SpecDecoding) {
        if spec.cumulative {
            let counters = self.spec_v0.get_or_insert_with(Default::default);
            counters[0].observe(spec.accepted_tokens as f64);
            counters[1].observe(spec.draft_tokens as f64);
            counters[2].observe(spec.emitted_tokens.unwrap_or(0) as f64);
            self.spec_accepted_tokens = Some(counters[0].value());
            self.spec_draft_tokens = Some(counters[1].value());
            self.spec_emitted_tokens = spec.emitted_tokens.map(|_| counters[2].value());
            self.spec_acceptance_rate = spec.draft_acceptance_rate;
            self.spec_efficiency = spec.system_efficiency;
        } else {
            add(&mut self.spec_accepted_tokens, spec.accepted_tokens as f64);
            add(&mut self.spec_draft_tokens, spec.draft_tokens as f64);
            self.spec_acceptance_rate =
                percent(spec.draft_acceptance_rate_percent).or(self.spec_acceptance_rate);
        }
        self.spec_mean_acceptance_length = spec
            .mean_acceptance_length
            .or(self.spec_mean_acceptance_length);
        let rates = &spec.per_position_acceptance_rate;
        if !rates.is_empty() {
            // Past the cap, positions are not series: the caller counts them as refused.
            let kept = &rates[..rates.len().min(caps::SPEC_POSITIONS)];
            self.spec_per_position.clear();
            self.spec_per_position.extend_from_slice(kept);
        }
    }

    /// V0's `total_num_cumulative_preemption=N` warnings.
    pub fn apply_cumulative_preemptions(&mut self, total: u64) {
        self.preemptions_cumulative
            .get_or_insert_with(Default::default)
            .observe(total as f64);
    }

    pub fn preemptions(&self) -> Option<f64> {
        match (self.preemptions_summed, self.preemptions_cumulative) {
            (None, None) => None,
            (summed, cumulative) => {
                Some(summed.unwrap_or(0.0) + cumulative.map_or(0.0, |c| c.value()))
            }
        }
    }

    /// Applies capacity and iteration records; stats and spec lines have their own methods.
    pub fn apply_other(&mut self, record: &VllmRecord<'_>) {
        match record {
            VllmRecord::KvCacheSize(size) => {
                self.kv_cache_capacity_tokens = Some(size.tokens as f64);
                if let Some(m) = &size.max_concurrency {
                    self.max_concurrency = Some(m.concurrency);
                }
            }
            VllmRecord::MaxConcurrency(m) => self.max_concurrency = Some(m.concurrency),
            VllmRecord::Blocks(blocks) => {
                self.gpu_blocks = Some(blocks.device_blocks as f64);
                self.cpu_blocks = blocks.cpu_blocks.map(|n| n as f64).or(self.cpu_blocks);
            }
            VllmRecord::NumGpuBlocks(n) => self.gpu_blocks = Some(n.blocks as f64),
            VllmRecord::Iteration(it) => {
                if !it.dummy {
                    add(&mut self.iterations, 1.0);
                    add(&mut self.iteration_context_tokens, it.context_tokens as f64);
                    add(
                        &mut self.iteration_generation_tokens,
                        it.generation_tokens as f64,
                    );
                }
                self.kv_cache_usage = percent(it.kv_cache_usage_percent).or(self.kv_cache_usage);
            }
            VllmRecord::PrefixCacheV0(p) => {
                self.gpu_prefix_cache_hit_rate = Some(fraction_of_percent(p.gpu_hit_rate_percent));
                self.cpu_prefix_cache_hit_rate = Some(fraction_of_percent(p.cpu_hit_rate_percent));
            }
            VllmRecord::Stats(_)
            | VllmRecord::SpecDecoding(_)
            | VllmRecord::EngineConfig(_)
            | VllmRecord::Preemptions(_)
            | VllmRecord::ServerVersion { .. }
            | VllmRecord::Lifecycle(_) => {}
        }
    }
}

/// The vLLM side of one log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VllmLog {
    /// From the engine config line: `served_model_name`, else `model`.
    pub model_name: Option<String>,
    pub engines: Units<EngineKey, VllmEngine>,
    /// Spec-decoding and V0 prefix-cache lines carry no engine prefix: they follow the stats
    /// line of their engine, so they belong to the engine of the last stats line.
    pub last_stats_engine: Option<EngineKey>,
    /// Which vLLM wrote the log: its own lines, else the settings.
    pub version: Option<(VllmVersion, VersionSource)>,
    /// Where the current run stands, from the lifecycle lines.
    pub phase: Phase,
    /// Start-ups seen in the log.
    pub starts: u64,
    /// The current run's start-up lines, which date its first window.
    pub marks: StartMarks,
    /// vLLM said it prints no stats lines (several API servers).
    pub stats_logging_disabled: bool,
}

impl VllmLog {
    /// A log whose version the settings give (`--vllm-version`, `vllm_version`).
    pub fn with_version(version: Option<&str>) -> VllmLog {
        VllmLog {
            version: version.map(|v| (VllmVersion::parse(v), VersionSource::Setting)),
            ..VllmLog::default()
        }
    }

    /// A reload's `--vllm-version` (or `[[log]]` `vllm_version`): replaces a version that came
    /// from the settings, never one the log's own lines printed.
    pub fn set_version_setting(&mut self, version: Option<&str>) {
        if !matches!(self.version, Some((_, VersionSource::Line))) {
            self.version = version.map(|v| (VllmVersion::parse(v), VersionSource::Setting));
        }
    }

    /// The version the log's lines are read in.
    pub fn version(&self) -> Option<&VllmVersion> {
        self.version.as_ref().map(|(v, _)| v)
    }

    /// `may_grow`: whether `--max-series` has room for another engine. A record whose engine
    /// cannot be created is refused whole.
    pub fn apply(
        &mut self,
        record: &VllmRecord<'_>,
        process: Option<&str>,
        at: Option<f64>,
        interval: StatsInterval,
        may_grow: bool,
    ) -> Result<(), Refused> {
        // The engine of a record about one engine (the run's lines ignore it).
        let key = self
            .record_key(record, process)
            .unwrap_or(EngineKey::Index(0));
        match record {
            VllmRecord::Stats(stats) => {
                // Stats lines go on after a shutdown line until the server's lifespan ends, with
                // frozen numbers: only a start-up brings a stopped run back.
                if !matches!(self.phase, Phase::Stopped { .. }) {
                    self.phase = Phase::Running;
                }
                let reading = StatsContext {
                    interval,
                    version: self.version.as_ref().map(|(v, _)| v),
                };
                let grow = Growth { may_grow, interval };
                engine(&mut self.engines, key, self.starts, self.marks, grow)?
                    .apply_stats(stats, at, reading);
                self.last_stats_engine = Some(key);
            }
            VllmRecord::SpecDecoding(spec) => {
                self.engine(key, interval, may_grow)?
                    .apply_spec_decoding(spec);
                if spec.per_position_acceptance_rate.len() > caps::SPEC_POSITIONS {
                    return Err(Refused::SpecPosition);
                }
            }
            VllmRecord::PrefixCacheV0(_) => {
                self.engine(key, interval, may_grow)?.apply_other(record)
            }
            VllmRecord::Preemptions(p) => self
                .engine(key, interval, may_grow)?
                .apply_cumulative_preemptions(p.cumulative),
            VllmRecord::EngineConfig(config) => {
                self.name_model(config.served_model_name.unwrap_or(config.model));
                if let Some(version) = config.version {
                    self.version = Some((VllmVersion::parse(version), VersionSource::Line));
                }
                self.start_up(at, interval);
            }
            // The start-up's first line; the config line that follows says it again.
            VllmRecord::ServerVersion { version } => {
                self.version = Some((VllmVersion::parse(version), VersionSource::Line));
            }
            VllmRecord::Lifecycle(event) => self.apply_lifecycle(event, at, interval),
            VllmRecord::NumGpuBlocks(_) => {
                // Printed (at INFO up to 0.11.0) the moment the stat loggers were built.
                if matches!(self.phase, Phase::Starting { .. })
                    && self.marks.counting_since.is_none()
                {
                    self.mark(at, |marks, t| marks.counting_since = Some(t));
                }
                self.engine(key, interval, may_grow)?.apply_other(record);
            }
            VllmRecord::Iteration(_)
            | VllmRecord::KvCacheSize(_)
            | VllmRecord::MaxConcurrency(_)
            | VllmRecord::Blocks(_) => self.engine(key, interval, may_grow)?.apply_other(record),
        }
        Ok(())
    }

    /// The engine a record is about, when it is about one engine: `None` for the lines of
    /// the whole run (start-up, shutdown), which may change every engine.
    fn record_key(&self, record: &VllmRecord<'_>, process: Option<&str>) -> Option<EngineKey> {
        let of_process = || EngineKey::of_process(process);
        match record {
            VllmRecord::Stats(stats) => Some(
                scope_key(stats.engine, stats.aggregated_engines).unwrap_or(EngineKey::Index(0)),
            ),
            // Applied to the engine of the last stats line, which a stats line has just set.
            VllmRecord::SpecDecoding(_) | VllmRecord::PrefixCacheV0(_) => {
                Some(self.last_stats_engine.unwrap_or(EngineKey::Index(0)))
            }
            VllmRecord::NumGpuBlocks(n) => {
                Some(scope_key(n.engine, n.aggregated_engines).unwrap_or_else(of_process))
            }
            VllmRecord::Iteration(it) => {
                Some(scope_key(it.engine, None).unwrap_or_else(of_process))
            }
            VllmRecord::Preemptions(_)
            | VllmRecord::KvCacheSize(_)
            | VllmRecord::MaxConcurrency(_)
            | VllmRecord::Blocks(_) => Some(of_process()),
            VllmRecord::EngineConfig(_)
            | VllmRecord::ServerVersion { .. }
            | VllmRecord::Lifecycle(_) => None,
        }
    }

    fn engine(
        &mut self,
        key: EngineKey,
        interval: StatsInterval,
        may_grow: bool,
    ) -> Result<&mut VllmEngine, Refused> {
        let grow = Growth { may_grow, interval };
        engine(&mut self.engines, key, self.starts, self.marks, grow)
    }

    fn apply_lifecycle(&mut self, event: &Lifecycle, at: Option<f64>, interval: StatsInterval) {
        let stop = |reason| Phase::Stopped {
            reason,
            at: at.unwrap_or(0.0),
        };
        match event {
            Lifecycle::EngineReady => {
                self.start_up(at, interval);
                self.mark(at, |marks, t| marks.counting_since = Some(t));
            }
            // The server shuts down after its engine died too: the crash is the reason.
            Lifecycle::Shutdown => {
                if !matches!(
                    self.phase,
                    Phase::Stopped {
                        reason: DownReason::Crash,
                        ..
                    }
                ) {
                    self.phase = stop(DownReason::Shutdown)
                }
            }
            Lifecycle::Crash => self.phase = stop(DownReason::Crash),
            Lifecycle::StatsLoggingDisabled => self.stats_logging_disabled = true,
        }
    }

    /// Notes a start-up mark at `at` for the run and for every engine still waiting for its
    /// first line.
    fn mark(&mut self, at: Option<f64>, set: impl Fn(&mut StartMarks, f64)) {
        let Some(t) = at else {
            return;
        };
        set(&mut self.marks, t);
        for engine in self.engines.values_mut() {
            engine.pacing.update_marks(|marks| set(marks, t));
        }
    }

    /// Another model is being served from this log now: the old model's series end.
    fn name_model(&mut self, name: &str) {
        if self.model_name.as_deref() != Some(name) {
            if self.model_name.is_some() {
                self.engines.clear();
                self.last_stats_engine = None;
            }
            self.model_name = Some(name.to_string());
        }
    }

    /// A start-up line. The first of a run counts a start-up and restarts every engine; the
    /// others (version, config and capacity lines of the same start-up) belong to it.
    fn start_up(&mut self, at: Option<f64>, interval: StatsInterval) {
        if !self.phase.is_new_run() {
            return;
        }
        self.starts += 1;
        self.marks = StartMarks::default();
        self.phase = Phase::Starting {
            since: at.unwrap_or(0.0),
        };
        for engine in self.engines.values_mut() {
            engine.restart(self.marks, interval);
        }
    }

    /// Judges every engine's status at `now`.
    pub fn judge(&mut self, now: f64, interval: StatsInterval) {
        let phase = self.phase;
        let version = self.version.as_ref().map(|(v, _)| v);
        let label = version.map_or("unknown", |v| v.text.as_str());
        for engine in self.engines.values_mut() {
            let reading = StatsContext { interval, version };
            engine.status = liveness::judge(engine.last_word(phase, reading), now);
            if engine.version_label != label {
                engine.version_label = label.to_string();
            }
        }
    }
}

/// How a new engine is made: whether `--max-series` has room, and the stats interval.
#[derive(Clone, Copy)]
struct Growth {
    may_grow: bool,
    interval: StatsInterval,
}

/// The engine `key` of a log, created on first sight: an engine first seen after a start-up
/// belongs to that run (its first line's window starts with it). Past the cap of engines per
/// log, or past `--max-series`, it is refused.
fn engine(
    engines: &mut Units<EngineKey, VllmEngine>,
    key: EngineKey,
    starts: u64,
    marks: StartMarks,
    grow: Growth,
) -> Result<&mut VllmEngine, Refused> {
    if !engines.contains_key(&key) {
        if engines.len() >= ENGINES_PER_LOG.cap {
            return Err(Refused::Cap(ENGINES_PER_LOG));
        }
        if !grow.may_grow {
            return Err(Refused::MaxSeries);
        }
    }
    let engine = engines.entry(key).or_insert_with(|| {
        let mut engine = Box::<VllmEngine>::default();
        if starts > 0 {
            engine.restart(marks, grow.interval);
        }
        engine
    });
    Ok(&mut **engine)
}

fn scope_key(engine: Option<u32>, aggregated: Option<u32>) -> Option<EngineKey> {
    match (engine, aggregated) {
        (Some(n), _) => Some(EngineKey::Index(n)),
        (None, Some(_)) => Some(EngineKey::Aggregated),
        (None, None) => None,
    }
}

/// This engine's state in one log, as the registry names it.
pub type State = VllmLog;

impl Engine for VllmLog {
    const DISPLAY_NAME: &'static str = "vLLM";
    const NAME: &'static str = "vllm";
    const LABELS_NOTE: &'static str = "`vllm:`/`llmtail_vllm_` series has the labels `engine`, `model_name`, `log` and the `--label`s";
    const LANDING: Landing = Landing {
        title: "vLLM engines",
        headers: &[
            "engine",
            "status",
            "model",
            "vLLM version",
            "stats interval",
            "last stats line",
            "start-ups",
        ],
    };
    const UNIT_LABELS: &'static [&'static str] = &["engine", "model_name", "log"];
    const TABLE: &'static [Row<VllmEngine>] = series::VLLM_ENGINE;
    const CHARTED: ChartedSeries = [
        Some("vllm:num_requests_running"),
        Some("vllm:num_requests_waiting"),
        Some("vllm:kv_cache_usage_perc"),
        Some("vllm:avg_generation_throughput_toks_per_s"),
    ];
    const CAPS: &'static [Cap] = &[ENGINES_PER_LOG];
    const LOG_METRICS: &'static [Metric] = &[series::VLLM_STATS_LOGGING_DISABLED];
    type Unit = VllmEngine;
    type Key = EngineKey;
    type Record<'r> = VllmRecord<'r>;

    fn new(setup: &EngineSetup<'_>) -> Self {
        VllmLog::with_version(setup.vllm_version)
    }

    fn reconfigure(&mut self, setup: &EngineSetup<'_>) {
        self.set_version_setting(setup.vllm_version);
    }

    fn apply(
        &mut self,
        record: &VllmRecord<'_>,
        parsed: &Parsed<'_>,
        line_time: Option<f64>,
        context: &ApplyContext<'_>,
    ) -> Result<(), Refused> {
        let was_disabled = self.stats_logging_disabled;
        let interval = context.settings.stats_interval;
        let outcome = self.apply(
            record,
            parsed.process,
            line_time,
            interval,
            context.may_grow,
        );
        if self.stats_logging_disabled && !was_disabled {
            tracing::warn!(
                log = %context.log,
                "vLLM says it prints no stats lines: it runs several API servers (the \
                 default with --data-parallel-size); fix: vllm serve --api-server-count 1"
            );
        }
        outcome
    }

    fn judge(&mut self, now: f64, settings: &StateSettings) {
        self.judge(now, settings.stats_interval);
    }

    fn record_unit(&self, record: &VllmRecord<'_>, parsed: &Parsed<'_>) -> Option<usize> {
        // The GPU blocks line also dates the first window of every engine yet to print.
        if matches!(record, VllmRecord::NumGpuBlocks(_)) {
            return None;
        }
        let key = self.record_key(record, parsed.process)?;
        // Units are in `engines`' order.
        Some(self.engines.range(..key).count())
    }

    fn units(&self) -> impl ExactSizeIterator<Item = (&EngineKey, &VllmEngine)> {
        self.engines.iter().map(|(key, engine)| (key, &**engine))
    }

    fn nth_unit(&self, index: usize) -> Option<&VllmEngine> {
        self.engines.values().nth(index).map(|engine| &**engine)
    }

    fn unit_labels(
        &self,
        key: &EngineKey,
        _engine: &VllmEngine,
        log: &LogView<'_>,
        settings: &StateSettings,
    ) -> UnitLabels {
        vec![
            ("engine", key.label()),
            ("model_name", self.model_name_in(log, settings).to_string()),
            ("log", log.label.to_string()),
        ]
    }

    fn status(engine: &VllmEngine) -> Status {
        engine.status
    }

    fn model_name(&self) -> Option<&str> {
        self.model_name.as_deref()
    }

    fn log_series(&self) -> Vec<(&'static Metric, f64)> {
        if self.starts == 0 && self.engines.is_empty() && !self.stats_logging_disabled {
            return Vec::new();
        }
        let disabled = f64::from(u8::from(self.stats_logging_disabled));
        vec![(&series::VLLM_STATS_LOGGING_DISABLED, disabled)]
    }

    fn warnings(&self) -> Vec<String> {
        if !self.stats_logging_disabled {
            return Vec::new();
        }
        vec![
            "vLLM prints no stats lines: it runs several API servers (the default with \
              --data-parallel-size). Fix: vllm serve --api-server-count 1."
                .to_string(),
        ]
    }

    fn landing_row(
        &self,
        key: &EngineKey,
        engine: &VllmEngine,
        log: &LogView<'_>,
        settings: &StateSettings,
    ) -> Vec<LandingCell> {
        let version = match &self.version {
            Some((v, VersionSource::Line)) => format!("{} (from the log)", v.text),
            Some((v, VersionSource::Setting)) => format!("{} (from --vllm-version)", v.text),
            None => "not found in the log: read as 0.16+ (set --vllm-version)".to_string(),
        };
        let (interval, source) = engine.interval(settings.stats_interval);
        vec![
            LandingCell::Text(key.label()),
            LandingCell::Status(engine.status),
            LandingCell::Text(self.model_name_in(log, settings).to_string()),
            LandingCell::Text(version),
            LandingCell::Text(format!("{interval} s, {}", source.as_str())),
            LandingCell::Age {
                at: engine.pacing.last_line_at(),
                none: "none yet",
            },
            LandingCell::Text(engine.starts.to_string()),
        ]
    }
}

impl VllmLog {
    /// The `model_name` label of this log's series: the engine config line's, else the
    /// `[[log]]` entry's, else `--model-name`, else empty.
    pub fn model_name_in<'a>(&'a self, log: &LogView<'a>, settings: &'a StateSettings) -> &'a str {
        match &self.model_name {
            Some(model) => model,
            None => log.configured_model(settings),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEN_SECONDS: StatsContext<'static> = StatsContext {
        interval: StatsInterval::Fixed(10.0),
        version: None,
    };

    fn in_version(version: &VllmVersion) -> StatsContext<'_> {
        StatsContext {
            interval: StatsInterval::Fixed(10.0),
            version: Some(version),
        }
    }

    fn stats(prompt: f64, generation: f64) -> VllmStats<'static> {
        VllmStats {
            prompt_throughput: Some(prompt),
            generation_throughput: Some(generation),
            running: Some(1),
            waiting: Some(0),
            kv_cache_device: Some("GPU"),
            kv_cache_usage_percent: Some(50.0),
            ..VllmStats::default()
        }
    }

    /// Replay writes only the unit a record changed: a DP engine's stats line changes only that
    /// engine; an engine config line (the model's name, a start-up) may change them all.
    #[test]
    fn a_dp_engines_stats_line_changes_only_that_unit_and_a_config_line_all() {
        let fixture =
            include_str!("../../../fixtures/replay/vllm-0.14.1-dp2-one-engine-overdue.log");
        let line = |needle: &str| fixture.lines().find(|l| l.contains(needle)).unwrap();
        let mut log = VllmLog::default();
        let mut unit_of = |text: &str| {
            let mut units = Vec::new();
            llmtail_grammars::each_record(text, |outcome| {
                let llmtail_grammars::Outcome::Parsed(parsed) = outcome else {
                    panic!("{text}: {outcome:?}");
                };
                let llmtail_grammars::Record::Vllm(record) = &parsed.record else {
                    panic!("{text}");
                };
                let interval = StatsInterval::Fixed(10.0);
                log.apply(record, parsed.process, Some(0.0), interval, true)
                    .unwrap();
                units.push(Engine::record_unit(&log, record, parsed));
            });
            units
        };
        assert_eq!(
            unit_of(line("Engine 001:")),
            [Some(0)],
            "the only engine yet"
        );
        assert_eq!(unit_of(line("Engine 000:")), [Some(0)], "sorted before 001");
        assert_eq!(unit_of(line("Engine 001:")), [Some(1)]);
        assert_eq!(unit_of(line("with config:")), [None]);
    }

    #[test]
    fn tokens_are_throughput_times_the_stats_interval() {
        let mut engine = VllmEngine::default();
        let v0_15 = VllmVersion::parse("0.15.1");
        engine.apply_stats(&stats(100.0, 20.0), Some(1000.0), in_version(&v0_15));
        engine.apply_stats(&stats(50.0, 10.0), Some(1010.0), in_version(&v0_15));
        assert_eq!(engine.prompt_tokens, Some(1500.0));
        assert_eq!(engine.generation_tokens, Some(300.0));
    }

    #[test]
    fn from_0_16_and_in_unknown_versions_prompt_tokens_are_the_locally_computed_ones() {
        for version in [Some(VllmVersion::parse("0.16.0")), None] {
            let mut engine = VllmEngine::default();
            let reading = StatsContext {
                interval: StatsInterval::Fixed(10.0),
                version: version.as_ref(),
            };
            engine.apply_stats(&stats(100.0, 20.0), Some(1000.0), reading);
            assert_eq!(engine.prompt_tokens, None);
            assert_eq!(engine.prompt_tokens_local_compute, Some(1000.0));
        }
    }

    #[test]
    fn token_counters_do_not_drift() {
        let mut engine = VllmEngine::default();
        for step in 0..1000 {
            engine.apply_stats(&stats(0.1, 0.3), Some(f64::from(step) * 10.0), TEN_SECONDS);
        }
        assert_eq!(engine.prompt_tokens_local_compute, Some(1000.0));
        assert_eq!(engine.generation_tokens, Some(3000.0));
    }

    #[test]
    fn a_late_line_covers_its_gap_and_a_line_after_silence_one_interval() {
        let mut engine = VllmEngine::default();
        engine.apply_stats(&stats(100.0, 0.0), Some(1000.0), TEN_SECONDS);
        // The logging loop was held up for 5 s: vLLM measured the 15 s it covered.
        engine.apply_stats(&stats(100.0, 0.0), Some(1015.0), TEN_SECONDS);
        // Room for a line in between, which is missing: one window.
        engine.apply_stats(&stats(100.0, 0.0), Some(1045.0), TEN_SECONDS);
        engine.apply_stats(&stats(0.0, 0.0), Some(1055.0), TEN_SECONDS);
        // Idle calls in between were not printed; each started a new window.
        engine.apply_stats(&stats(100.0, 0.0), Some(1600.0), TEN_SECONDS);
        assert_eq!(
            engine.prompt_tokens_local_compute,
            Some(1000.0 + 1500.0 + 1000.0 + 0.0 + 1000.0)
        );
    }

    #[test]
    fn kv_usage_is_a_fraction() {
        let mut engine = VllmEngine::default();
        engine.apply_stats(&stats(0.0, 0.0), None, TEN_SECONDS);
        assert_eq!(engine.kv_cache_usage, Some(0.5));
    }

    #[test]
    fn percentages_become_the_fraction_the_line_printed() {
        assert_eq!(fraction_of_percent(0.7), 0.007);
        assert_eq!(fraction_of_percent(63.1), 0.631);
        assert_eq!(fraction_of_percent(100.0), 1.0);
        assert_eq!(fraction_of_percent(0.0), 0.0);
        assert_eq!(fraction_of_percent(12.34), 0.1234);
        assert!(fraction_of_percent(f64::NAN).is_nan());
        for tenths in 0..=1000 {
            let printed = f64::from(tenths) / 10.0;
            let expected: f64 = format!("{:.4}", f64::from(tenths) / 1000.0)
                .parse()
                .unwrap();
            assert_eq!(fraction_of_percent(printed), expected, "{printed}%");
        }
        for hundredths in 0..=10_000 {
            let printed: f64 = format!("{:.2}", f64::from(hundredths) / 100.0)
                .parse()
                .unwrap();
            let expected: f64 = format!("{:.6}", f64::from(hundredths) / 10_000.0)
                .parse()
                .unwrap();
            assert_eq!(fraction_of_percent(printed), expected, "{printed}%");
        }
    }

    #[test]
    fn cumulative_counters_survive_an_engine_restart() {
        let mut c = CumulativeCounter::default();
        for total in [1.0, 51.0, 101.0, 1.0, 51.0] {
            c.observe(total);
        }
        assert_eq!(c.value(), 152.0);
    }

    #[test]
    fn engine_core_processes_name_their_engine() {
        assert_eq!(
            EngineKey::of_process(Some("EngineCore_DP3")),
            EngineKey::Index(3)
        );
        assert_eq!(
            EngineKey::of_process(Some("EngineCore_1")),
            EngineKey::Index(1)
        );
        assert_eq!(
            EngineKey::of_process(Some("EngineCore")),
            EngineKey::Index(0)
        );
        assert_eq!(
            EngineKey::of_process(Some("APIServer")),
            EngineKey::Index(0)
        );
        assert_eq!(EngineKey::of_process(None), EngineKey::Index(0));
    }
}
