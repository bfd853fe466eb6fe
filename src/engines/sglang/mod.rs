//! What SGLang's scheduler lines in one log say, per logging scheduler (its rank tags), and how
//! each line changes it.
//!
//! SGLang prints a decode line every `decode_log_interval` decode steps (40 by default) and a
//! prefill line per prefill batch, from each scheduler that logs (attention-TP rank 0 of each
//! DP/CP group), and nothing while idle. `gen throughput` is the tokens generated since the
//! previous decode line over the wall time since it (`scheduler_metrics_mixin.py`:
//! `num_generated_tokens / gap_latency`, idle time included), so the generated-token counter
//! adds `throughput x` the time between two decode lines of the same scheduler, whatever the
//! gap; the first decode line of a scheduler adds nothing (its window is unknown). The prefill
//! lines carry exact token counts, which are summed.
//!
//! Liveness: a line that showed queued requests is followed by another (they are admitted with
//! a prefill line, or wait while the running batch decodes and prints), so silence after it for
//! three intervals takes the scheduler down. Running requests alone promise nothing: SGLang's
//! last decode line before it goes idle still shows the requests that then finished within the
//! next 40 steps. Silence otherwise is idleness, and an idle scheduler's running count and
//! generation throughput read 0 (its last line's are no longer true). The interval is the last
//! gap after a line that promised another, at least [`MIN_INTERVAL_SECONDS`].

mod series;

use llmtail_grammars::sglang::{Ranks, SglangDecode, SglangPrefill, SglangRecord, TokenUsage};
use llmtail_grammars::Parsed;
use serde::{Deserialize, Serialize};

use crate::catalog::Row;
use crate::engines::engine::{
    ApplyContext, ChartedSeries, Engine, Landing, LandingCell, LogView, UnitLabels,
};
use crate::engines::parts::caps::{Cap, Refused};
use crate::engines::parts::float;
use crate::engines::parts::liveness::{self, LastWord, Phase, Status};
use crate::engines::parts::settings::StateSettings;
use crate::engines::parts::units::Units;

/// Schedulers that log, per log: one per DP (and attention-CP) group; the widest SGLang
/// deployments (DeepSeek on 96 or 144 GPUs with DP attention) print a few hundred.
pub const SCHEDULERS_PER_LOG: Cap = Cap {
    what: "an SGLang scheduler (the rank tags of its head)",
    cap: 1024,
};

/// The shortest interval liveness assumes: decode lines come every 40 steps, a fraction of a
/// second apart at low load, and a few slow steps must not look like silence.
pub const MIN_INTERVAL_SECONDS: f64 = 10.0;

/// How long SGLang's collector keeps showing a decode line's `gen throughput`. From 0.5.20 it
/// decays to 0 once no decode report came for 30 s (`metrics_reporter.py`,
/// `GEN_THROUGHPUT_STALENESS_SECONDS`, applied at the next report or idle publication; an idle
/// scheduler publishes at once). Up to 0.5.19 an idle scheduler republishes it as 0 once 30 s
/// passed since its last report (`scheduler_runtime_checker_mixin.py`, "During idle time, also
/// collect metrics every 30 seconds"; 0.5.9 and 0.5.10 wheels). Either way the native gauge does
/// not hold a stale window's throughput through silence.
pub const GEN_THROUGHPUT_STALE_SECONDS: f64 = 30.0;

/// The labels that set a scheduler apart, as SGLang's own collector names them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SchedulerKey {
    pub dp_rank: Option<u32>,
    pub pp_rank: u32,
    pub tp_rank: u32,
    pub attn_cp_rank: Option<u32>,
}

impl SchedulerKey {
    /// SGLang prints a tag only where that dimension is > 1 (0.4.6.post1+): no `TP` tag is the
    /// one TP rank 0 that logs, no `PP` tag pipeline rank 0.
    pub fn of(ranks: &Ranks) -> Self {
        SchedulerKey {
            dp_rank: ranks.dp_rank,
            pp_rank: ranks.pp_rank.unwrap_or(0),
            tp_rank: ranks.tp_rank.unwrap_or(0),
            attn_cp_rank: ranks.attn_cp_rank,
        }
    }

    fn text(self) -> String {
        let mut text = String::new();
        if let Some(dp) = self.dp_rank {
            text.push_str(&format!("DP{dp} "));
        }
        if let Some(cp) = self.attn_cp_rank {
            text.push_str(&format!("ATTN_CP{cp} "));
        }
        text.push_str(&format!("PP{} TP{}", self.pp_rank, self.tp_rank));
        text
    }
}

/// Which pools SGLang's collector takes `sglang:token_usage` from on a hybrid SSM (mamba/GDN)
/// model: the full-attention pool alone to 0.5.9 (`scheduler_metrics_mixin.py`,
/// `log_decode_stats` and `log_prefill_stats`: `token_usage = full_token_usage`), the fuller of
/// it and the mamba pool from 0.5.10 (`observability/scheduler_metrics_mixin.py`; from 0.5.13
/// `PoolStats.get_max_pool_usage` in `pool_stats_observer.py`). No SGLang line names its
/// release, so the lines' own changes tell: a trailing `, ` is printed to 0.5.8 only, a prefill
/// line's `#pending-token` from 0.5.11 (checked in the 0.5.8, 0.5.9, 0.5.10, 0.5.12 and 0.5.23
/// wheels).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SsmUsageRule {
    /// No line of this run has told (0.5.9 and 0.5.10 print the same lines).
    #[default]
    Unknown,
    /// To 0.5.9: the full-attention pool's usage.
    FullPool,
    /// From 0.5.10: the fullest pool's usage.
    FullestPool,
}

/// What SGLang's collector sets `sglang:token_usage` to, from one line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NativeUsage {
    Known(f64),
    /// The line prints the pools, but not which release weighs them how.
    Unknown,
    /// The line does not print the pool the gauge is taken from (a HiSparse decode line).
    NotPrinted,
}

/// `sglang:num_used_tokens` and `sglang:token_usage` as SGLang's collector sets them at the
/// report that printed `usage`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NativePools {
    pub used_tokens: Option<u64>,
    pub token_usage: NativeUsage,
}

/// The native gauges from a line's pool parts. A hybrid SWA model's are the fuller pool's, count
/// and usage each (every release that prints SWA pools: `num_used = max(full_num_used,
/// swa_num_used)`, `token_usage = max(full_token_usage, swa_token_usage)`), so a full SWA pool
/// shows although the full-attention pool is nearly empty. A hybrid SSM model's count is the
/// full-attention pool's (mamba slots hold requests, not tokens) and its usage follows `rule`.
/// A HiSparse decode line prints the sparse device and host pools, neither of which the gauges
/// read (they read the full pool, which its prefill line prints as `token usage`).
pub fn native_pools(usage: &TokenUsage, rule: SsmUsageRule) -> NativePools {
    let fuller = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    if usage.used_tokens.is_some() || usage.token_usage.is_some() {
        return NativePools {
            used_tokens: usage.used_tokens,
            token_usage: usage
                .token_usage
                .map_or(NativeUsage::NotPrinted, NativeUsage::Known),
        };
    }
    let used_tokens = match (usage.full_tokens, usage.swa_tokens) {
        (Some(full), Some(swa)) => Some(full.max(swa)),
        (full, _) => full,
    };
    let attention = fuller(usage.full_token_usage, usage.swa_token_usage);
    let token_usage = match (attention, usage.mamba_usage) {
        (None, _) => NativeUsage::NotPrinted,
        (Some(attention), None) => NativeUsage::Known(attention),
        // SWA and SSM pools together are printed from 0.5.10 only.
        (Some(attention), Some(mamba)) if usage.swa_token_usage.is_some() => {
            NativeUsage::Known(attention.max(mamba))
        }
        (Some(full), Some(mamba)) => match rule {
            SsmUsageRule::FullPool => NativeUsage::Known(full),
            SsmUsageRule::FullestPool => NativeUsage::Known(full.max(mamba)),
            SsmUsageRule::Unknown => NativeUsage::Unknown,
        },
    };
    NativePools {
        used_tokens,
        token_usage,
    }
}

/// Everything exported for one scheduler of one log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SglangScheduler {
    #[serde(with = "float::option")]
    pub running: Option<f64>,
    #[serde(with = "float::option")]
    pub queue: Option<f64>,
    #[serde(with = "float::option")]
    pub used_tokens: Option<f64>,
    /// The main pool's usage as printed (`token usage`, `full token usage`), a fraction.
    #[serde(with = "float::option")]
    pub token_usage: Option<f64>,
    #[serde(with = "float::option")]
    pub swa_token_usage: Option<f64>,
    #[serde(with = "float::option")]
    pub mamba_usage: Option<f64>,
    #[serde(with = "float::option")]
    pub gen_throughput: Option<f64>,
    /// The last prefill batch's cached share of its tokens. Not `sglang:cache_hit_rate`: SGLang
    /// sets that to the same share at each prefill report, but back to 0 at each decode report
    /// up to 0.5.19 and no longer from 0.5.20, and the lines do not tell the two apart.
    #[serde(with = "float::option")]
    pub prefill_cache_hit_rate: Option<f64>,
    #[serde(with = "float::option")]
    pub spec_accept_length: Option<f64>,
    #[serde(with = "float::option")]
    pub spec_accept_rate: Option<f64>,
    /// Whether the last decode batch ran as a captured device graph, 1 or 0. Not
    /// `sglang:is_cuda_graph`: no SGLang release checked (0.5.8 to 0.5.23) ever sets that gauge's
    /// `SchedulerStats.is_cuda_graph`, so it reads 0 whatever the line prints.
    #[serde(with = "float::option")]
    pub last_batch_graph: Option<f64>,
    #[serde(with = "float::option")]
    pub prefill_prealloc_queue: Option<f64>,
    #[serde(with = "float::option")]
    pub prefill_inflight_queue: Option<f64>,
    #[serde(with = "float::option")]
    pub decode_prealloc_queue: Option<f64>,
    #[serde(with = "float::option")]
    pub decode_transfer_queue: Option<f64>,
    #[serde(with = "float::option")]
    pub max_total_num_tokens: Option<f64>,
    #[serde(with = "float::option")]
    pub max_running_requests: Option<f64>,
    #[serde(with = "float::option")]
    pub prefill_tokens: Option<f64>,
    #[serde(with = "float::option")]
    pub prefill_cached_tokens: Option<f64>,
    #[serde(with = "float::option")]
    pub prefill_seqs: Option<f64>,
    #[serde(with = "float::option")]
    pub generation_tokens: Option<f64>,
    #[serde(with = "float::option")]
    pub retracted_requests: Option<f64>,
    /// When the last line of any kind was written, and the last decode line.
    #[serde(with = "float::option")]
    pub last_line_at: Option<f64>,
    #[serde(with = "float::option")]
    last_decode_at: Option<f64>,
    /// The last gap between two lines while busy, in seconds.
    #[serde(with = "float::option")]
    busy_gap: Option<f64>,
    /// Whether the last line showed queued requests: another line is due.
    more_due: bool,
    /// What this run's lines have shown of its release, for the usage of hybrid SSM pools.
    ssm_usage_rule: SsmUsageRule,
    phase: Phase,
    #[serde(skip)]
    pub status: Status,
}

fn count(n: u64) -> f64 {
    n as f64
}

fn add(counter: Option<f64>, n: f64) -> Option<f64> {
    Some(counter.unwrap_or(0.0) + if n.is_finite() { n } else { 0.0 })
}

impl SglangScheduler {
    pub fn up(&self) -> f64 {
        if self.status.is_down() {
            0.0
        } else {
            1.0
        }
    }

    fn interval(&self) -> f64 {
        self.busy_gap.unwrap_or(0.0).max(MIN_INTERVAL_SECONDS)
    }

    /// A stats line at `at`: the gap since the previous one while busy teaches the interval.
    fn line_at(&mut self, at: Option<f64>, busy: bool) {
        if let (Some(at), Some(last)) = (at, self.last_line_at) {
            if self.more_due && at >= last {
                self.busy_gap = Some(at - last);
            }
        }
        if at.is_some() {
            self.last_line_at = at;
        }
        self.more_due = busy;
        self.phase = Phase::Running;
    }

    /// The pool parts of a line, as SGLang's own collector reads them (see [`native_pools`]).
    fn usage(&mut self, usage: &TokenUsage, trailing_separator: bool) {
        if trailing_separator {
            self.ssm_usage_rule = SsmUsageRule::FullPool;
        }
        let native = native_pools(usage, self.ssm_usage_rule);
        if let Some(used) = native.used_tokens {
            self.used_tokens = Some(count(used));
        }
        match native.token_usage {
            NativeUsage::Known(ratio) => self.token_usage = Some(ratio),
            // The last value meant what the collector meant then; what it means now is unknown.
            NativeUsage::Unknown => self.token_usage = None,
            NativeUsage::NotPrinted => {}
        }
        if usage.swa_token_usage.is_some() {
            self.swa_token_usage = usage.swa_token_usage;
        }
        if usage.mamba_usage.is_some() {
            self.mamba_usage = usage.mamba_usage;
        }
    }

    fn decode(&mut self, d: &SglangDecode<'_>, at: Option<f64>) {
        self.running = Some(count(d.running_reqs));
        self.queue = Some(count(d.queue_reqs));
        self.usage(&d.usage, d.trailing_separator);
        if let Some(throughput) = d.gen_throughput {
            self.gen_throughput = Some(throughput);
            // SGLang's throughput covers the time since its previous decode line.
            let window = match (at, self.last_decode_at) {
                (Some(at), Some(last)) if at >= last => at - last,
                _ => 0.0,
            };
            self.generation_tokens = add(self.generation_tokens, throughput * window);
        }
        if at.is_some() {
            self.last_decode_at = at;
        }
        if d.accept_len.is_some() {
            self.spec_accept_length = d.accept_len;
        }
        if d.accept_rate.is_some() {
            self.spec_accept_rate = d.accept_rate;
        }
        if let Some(graph) = d.graph {
            self.last_batch_graph = Some(if graph.used { 1.0 } else { 0.0 });
        }
        if let Some(n) = d.prealloc_reqs {
            self.decode_prealloc_queue = Some(count(n));
        }
        if let Some(n) = d.transfer_reqs {
            self.decode_transfer_queue = Some(count(n));
        }
        self.line_at(at, d.queue_reqs > 0);
    }

    fn prefill(&mut self, p: &SglangPrefill<'_>, at: Option<f64>) {
        if let Some(running) = p.running_reqs {
            self.running = Some(count(running));
        }
        self.queue = Some(count(p.queue_reqs));
        if p.pending_tokens.is_some() {
            self.ssm_usage_rule = SsmUsageRule::FullestPool;
        }
        self.usage(&p.usage, p.trailing_separator);
        self.prefill_tokens = add(self.prefill_tokens, count(p.new_tokens));
        self.prefill_cached_tokens = add(self.prefill_cached_tokens, count(p.cached_tokens));
        self.prefill_seqs = add(self.prefill_seqs, count(p.new_seqs));
        let tokens = p.new_tokens + p.cached_tokens;
        if tokens > 0 {
            self.prefill_cache_hit_rate = Some(count(p.cached_tokens) / count(tokens));
        }
        if let Some(n) = p.bootstrap_reqs {
            self.prefill_prealloc_queue = Some(count(n));
        }
        if let Some(n) = p.inflight_reqs {
            self.prefill_inflight_queue = Some(count(n));
        }
        self.line_at(at, p.queue_reqs > 0);
    }
}

/// SGLang in one log: its logging schedulers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SglangLog {
    #[serde(with = "schedulers")]
    pub schedulers: Units<SchedulerKey, SglangScheduler>,
}

/// The map saved as a list: a JSON object's keys are strings.
mod schedulers {
    use super::{SchedulerKey, SglangScheduler, Units};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(
        map: &Units<SchedulerKey, SglangScheduler>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        map.iter().collect::<Vec<_>>().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Units<SchedulerKey, SglangScheduler>, D::Error> {
        Ok(Vec::<(SchedulerKey, Box<SglangScheduler>)>::deserialize(d)?
            .into_iter()
            .collect())
    }
}

impl SglangLog {
    pub fn apply(
        &mut self,
        record: &SglangRecord<'_>,
        at: Option<f64>,
        may_grow: bool,
    ) -> Result<(), Refused> {
        let key = SchedulerKey::of(record.ranks());
        if !self.schedulers.contains_key(&key) {
            if self.schedulers.len() >= SCHEDULERS_PER_LOG.cap {
                return Err(Refused::Cap(SCHEDULERS_PER_LOG));
            }
            if !may_grow {
                return Err(Refused::MaxSeries);
            }
        }
        let scheduler = self.schedulers.entry(key).or_default();
        match record {
            SglangRecord::Decode { stats, .. } => scheduler.decode(stats, at),
            SglangRecord::Prefill { stats, .. } => scheduler.prefill(stats, at),
            SglangRecord::Retract { retract, .. } => {
                scheduler.retracted_requests =
                    add(scheduler.retracted_requests, count(retract.retracted_reqs));
            }
            SglangRecord::Capacity { capacity, .. } => {
                scheduler.max_total_num_tokens = Some(count(capacity.max_total_num_tokens));
                scheduler.max_running_requests = Some(count(capacity.max_running_requests));
                // A start-up line: a new run, no stats line yet, perhaps of another release.
                scheduler.ssm_usage_rule = SsmUsageRule::Unknown;
                if let Some(at) = at {
                    scheduler.phase = Phase::Starting { since: at };
                }
                scheduler.more_due = false;
            }
        }
        Ok(())
    }

    pub fn judge(&mut self, now: f64) {
        for scheduler in self.schedulers.values_mut() {
            let word = LastWord {
                phase: scheduler.phase,
                last_line_at: scheduler.last_line_at,
                next_line_due: scheduler.more_due,
                interval: scheduler.interval(),
            };
            scheduler.status = liveness::judge(word, now);
            let decode_window_stale = scheduler
                .last_decode_at
                .is_some_and(|at| now - at > GEN_THROUGHPUT_STALE_SECONDS);
            if decode_window_stale {
                scheduler.gen_throughput = scheduler.gen_throughput.map(|_| 0.0);
            }
            if scheduler.status == Status::Idle {
                // The requests the last line showed have finished: SGLang prints while busy.
                scheduler.running = scheduler.running.map(|_| 0.0);
                scheduler.gen_throughput = scheduler.gen_throughput.map(|_| 0.0);
                // An idle scheduler republishes its pools every 30 s (0.5.8's
                // `scheduler_runtime_checker_mixin.py`, 0.5.23's `_maybe_log_idle_metrics`),
                // and with nothing running every KV slot is free or evictable, which the
                // gauges leave out: the last busy line's usage is no longer true.
                scheduler.used_tokens = scheduler.used_tokens.map(|_| 0.0);
                scheduler.token_usage = scheduler.token_usage.map(|_| 0.0);
                // The per-pool gauges are republished too from 0.5.12 (`update_scheduler_stats`
                // in the idle path) but held to 0.5.10: which one, the lines do not tell.
                scheduler.swa_token_usage = None;
                scheduler.mamba_usage = None;
            }
        }
    }
}

/// This engine's state in one log, as the registry names it.
pub type State = SglangLog;

impl Engine for SglangLog {
    const NAME: &'static str = "sglang";
    const DISPLAY_NAME: &'static str = "SGLang";
    const LABELS_NOTE: &'static str = "`sglang:`/`llmtail_sglang_` series has `model_name`, `dp_rank` (empty without DP), `pp_rank`, `tp_rank` (the scheduler's rank tags, `DPn PPn TPn` in the head; a missing tag is rank 0, as SGLang prints tags only for dimensions > 1; SGLang's own collector's labels), `log` and the `--label`s";
    const LANDING: Landing = Landing {
        title: "SGLang schedulers",
        headers: &["scheduler", "status", "model", "last line"],
    };
    const UNIT_LABELS: &'static [&'static str] =
        &["model_name", "dp_rank", "pp_rank", "tp_rank", "log"];
    const TABLE: &'static [Row<SglangScheduler>] = series::SGLANG;
    const CHARTED: ChartedSeries = [
        Some("sglang:num_running_reqs"),
        Some("sglang:num_queue_reqs"),
        Some("sglang:token_usage"),
        Some("sglang:gen_throughput"),
    ];
    const CAPS: &'static [Cap] = &[SCHEDULERS_PER_LOG];
    type Unit = SglangScheduler;
    type Key = SchedulerKey;
    type Record<'r> = SglangRecord<'r>;

    fn apply(
        &mut self,
        record: &SglangRecord<'_>,
        _parsed: &Parsed<'_>,
        line_time: Option<f64>,
        context: &ApplyContext<'_>,
    ) -> Result<(), Refused> {
        self.apply(record, line_time, context.may_grow)
    }

    fn judge(&mut self, now: f64, _settings: &StateSettings) {
        self.judge(now);
    }

    fn units(&self) -> impl ExactSizeIterator<Item = (&SchedulerKey, &SglangScheduler)> {
        self.schedulers.iter().map(|(key, unit)| (key, &**unit))
    }

    /// `model_name` is the configuration's: the scheduler lines do not name the model.
    fn unit_labels(
        &self,
        key: &SchedulerKey,
        _scheduler: &SglangScheduler,
        log: &LogView<'_>,
        settings: &StateSettings,
    ) -> UnitLabels {
        vec![
            ("model_name", log.configured_model(settings).to_string()),
            (
                "dp_rank",
                key.dp_rank.map(|r| r.to_string()).unwrap_or_default(),
            ),
            ("pp_rank", key.pp_rank.to_string()),
            ("tp_rank", key.tp_rank.to_string()),
            ("log", log.label.to_string()),
        ]
    }

    fn status(scheduler: &SglangScheduler) -> Status {
        scheduler.status
    }

    fn landing_row(
        &self,
        key: &SchedulerKey,
        scheduler: &SglangScheduler,
        log: &LogView<'_>,
        settings: &StateSettings,
    ) -> Vec<LandingCell> {
        vec![
            LandingCell::Text(key.text()),
            LandingCell::Status(scheduler.status),
            LandingCell::Text(log.configured_model(settings).to_string()),
            LandingCell::Age {
                at: scheduler.last_line_at,
                none: "none yet",
            },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use llmtail_grammars::sglang::TokenUsage;

    fn decode(queue: u64, throughput: f64) -> SglangRecord<'static> {
        SglangRecord::Decode {
            ranks: Ranks::default(),
            stats: SglangDecode {
                running_reqs: 2,
                queue_reqs: queue,
                gen_throughput: Some(throughput),
                usage: TokenUsage {
                    used_tokens: Some(10),
                    token_usage: Some(0.25),
                    ..TokenUsage::default()
                },
                ..SglangDecode::default()
            },
        }
    }

    #[test]
    fn generated_tokens_are_the_throughput_times_the_gap_between_decode_lines() {
        let mut log = SglangLog::default();
        log.apply(&decode(2, 100.0), Some(1000.0), true).unwrap();
        log.apply(&decode(2, 50.0), Some(1004.0), true).unwrap();
        // An idle minute, then a line whose throughput SGLang averaged over it.
        log.apply(&decode(1, 2.0), Some(1064.0), true).unwrap();
        let s = &log.schedulers[&SchedulerKey::default()];
        assert_eq!(s.generation_tokens, Some(200.0 + 120.0));
        assert_eq!(s.token_usage, Some(0.25));
    }

    #[test]
    fn silence_after_queued_requests_is_down_and_otherwise_idle_with_nothing_running() {
        let mut log = SglangLog::default();
        log.apply(&decode(3, 1.0), Some(1000.0), true).unwrap();
        log.judge(1031.0);
        assert!(log.schedulers[&SchedulerKey::default()].status.is_down());
        // The 32 s gap after a line that promised another is the interval now.
        log.apply(&decode(0, 1.0), Some(1032.0), true).unwrap();
        log.judge(1100.0);
        assert_eq!(log.schedulers[&SchedulerKey::default()].status, Status::Up);
        log.judge(1129.0);
        let s = &log.schedulers[&SchedulerKey::default()];
        assert_eq!((s.status, s.running), (Status::Idle, Some(0.0)));
    }

    fn pools(line_usage: TokenUsage, trailing_separator: bool) -> SglangRecord<'static> {
        SglangRecord::Decode {
            ranks: Ranks::default(),
            stats: SglangDecode {
                running_reqs: 1,
                usage: line_usage,
                trailing_separator,
                ..SglangDecode::default()
            },
        }
    }

    fn swa(full: (u64, f64), swa: (u64, f64)) -> TokenUsage {
        TokenUsage {
            full_tokens: Some(full.0),
            full_token_usage: Some(full.1),
            swa_tokens: Some(swa.0),
            swa_token_usage: Some(swa.1),
            ..TokenUsage::default()
        }
    }

    fn ssm(full: (u64, f64), mamba: (u64, f64)) -> TokenUsage {
        TokenUsage {
            full_tokens: Some(full.0),
            full_token_usage: Some(full.1),
            mamba_num: Some(mamba.0),
            mamba_usage: Some(mamba.1),
            ..TokenUsage::default()
        }
    }

    fn exported(log: &SglangLog) -> (Option<f64>, Option<f64>) {
        let s = &log.schedulers[&SchedulerKey::default()];
        (s.used_tokens, s.token_usage)
    }

    #[test]
    fn token_usage_of_a_hybrid_swa_model_is_the_fuller_pool() {
        let mut log = SglangLog::default();
        // `#full token: 128, full token usage: 0.00, #swa token: 128, swa token usage: 0.04`
        let line = pools(swa((128, 0.0), (128, 0.04)), false);
        log.apply(&line, Some(1000.0), true).unwrap();
        assert_eq!(exported(&log), (Some(128.0), Some(0.04)));
        // The two maxima may come from different pools.
        let line = pools(swa((9000, 0.30), (4096, 0.95)), true);
        log.apply(&line, Some(1001.0), true).unwrap();
        assert_eq!(exported(&log), (Some(9000.0), Some(0.95)));
    }

    #[test]
    fn token_usage_of_a_hybrid_ssm_model_follows_the_release_its_lines_show() {
        let line = |trailing| pools(ssm((4100, 0.18), (40, 0.62)), trailing);
        // To 0.5.8 (a trailing `, `): the full-attention pool, as to 0.5.9.
        let mut log = SglangLog::default();
        log.apply(&line(true), Some(1000.0), true).unwrap();
        assert_eq!(exported(&log), (Some(4100.0), Some(0.18)));
        // 0.5.9 or 0.5.10, which weigh the pools differently: no value under SGLang's name.
        let mut log = SglangLog::default();
        log.apply(&line(false), Some(1000.0), true).unwrap();
        assert_eq!(exported(&log), (Some(4100.0), None));
        // A prefill line with `#pending-token` (0.5.11+): the fullest pool from then on.
        let prefill = SglangRecord::Prefill {
            ranks: Ranks::default(),
            stats: SglangPrefill {
                pending_tokens: Some(0),
                usage: TokenUsage {
                    full_token_usage: Some(0.18),
                    mamba_usage: Some(0.62),
                    ..TokenUsage::default()
                },
                ..SglangPrefill::default()
            },
        };
        log.apply(&prefill, Some(1001.0), true).unwrap();
        assert_eq!(exported(&log), (Some(4100.0), Some(0.62)));
        log.apply(&line(false), Some(1002.0), true).unwrap();
        assert_eq!(exported(&log), (Some(4100.0), Some(0.62)));
    }

    #[test]
    fn a_hisparse_decode_line_leaves_the_full_pool_gauges_to_the_prefill_line() {
        let mut log = SglangLog::default();
        let hisparse = TokenUsage {
            gpu_tokens: Some(500),
            gpu_token_usage: Some(0.9),
            cpu_tokens: Some(9000),
            cpu_token_usage: Some(0.1),
            ..TokenUsage::default()
        };
        log.apply(&decode(0, 1.0), Some(1000.0), true).unwrap();
        log.apply(&pools(hisparse, false), Some(1001.0), true)
            .unwrap();
        assert_eq!(exported(&log), (Some(10.0), Some(0.25)));
    }

    #[test]
    fn an_idle_scheduler_holds_no_kv_tokens_as_sglang_republishes_it() {
        let mut log = SglangLog::default();
        log.apply(&decode(0, 50.0), Some(1000.0), true).unwrap();
        log.judge(1020.0);
        assert_eq!(exported(&log), (Some(10.0), Some(0.25)));
        log.judge(1031.0);
        assert_eq!(exported(&log), (Some(0.0), Some(0.0)));
    }

    #[test]
    fn an_idle_hybrid_scheduler_shows_no_per_pool_usage_whose_release_it_cannot_tell() {
        let mut log = SglangLog::default();
        let line = pools(swa((9000, 0.30), (4096, 0.95)), false);
        log.apply(&line, Some(1000.0), true).unwrap();
        log.judge(1031.0);
        let s = &log.schedulers[&SchedulerKey::default()];
        assert_eq!((s.token_usage, s.swa_token_usage), (Some(0.0), None));
    }

    #[test]
    fn gen_throughput_reads_0_once_no_decode_line_came_for_30_seconds() {
        let mut log = SglangLog::default();
        log.apply(&decode(0, 120.0), Some(1000.0), true).unwrap();
        log.judge(1030.0);
        let throughput = |log: &SglangLog| log.schedulers[&SchedulerKey::default()].gen_throughput;
        assert_eq!(throughput(&log), Some(120.0));
        // Still busy (a prefill-only stretch, say), but the window SGLang measured is stale.
        log.apply(&decode(4, 120.0), Some(1040.0), true).unwrap();
        log.judge(1071.0);
        assert_eq!(throughput(&log), Some(0.0));
        log.apply(&decode(4, 90.0), Some(1072.0), true).unwrap();
        assert_eq!(throughput(&log), Some(90.0));
    }

    #[test]
    fn the_state_survives_a_save() {
        let mut log = SglangLog::default();
        log.apply(&decode(3, 1.0), Some(1000.0), true).unwrap();
        let saved = serde_json::to_value(&log).unwrap();
        let restored: SglangLog = serde_json::from_value(saved).unwrap();
        assert_eq!(restored.schedulers.len(), 1);
    }
}
