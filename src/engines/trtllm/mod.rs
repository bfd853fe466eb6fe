//! What we know about TensorRT-LLM / Triton executors in one log, and how each record
//! changes it.
//!
//! Triton's own exporter shows the last iteration it polled; the log has every iteration, so
//! besides the last values (Triton's `nv_trt_llm_*` families) we keep what a scrape would
//! otherwise lose: iteration counts, latency histograms, token and request totals.

mod series;

use std::collections::HashMap;

use jiff::tz::TimeZone;
use llmtail_grammars::trtllm::{Batching, Iteration, KvCapacity, TrtllmRecord};
use llmtail_grammars::Parsed;

use serde::{Deserialize, Serialize};

use crate::catalog::Row;
use crate::engines::engine::{
    ApplyContext, ChartedSeries, Engine, Landing, LandingCell, LogView, UnitLabels,
};
use crate::engines::parts::caps::{Cap, Refused};
use crate::engines::parts::counting::CumulativeCounter;
use crate::engines::parts::float;
use crate::engines::parts::histogram::Histogram;
use crate::engines::parts::liveness::{self, DownReason, LastWord, Phase, Status};
use crate::engines::parts::settings::StateSettings;
use crate::engines::parts::units::Units;
use crate::timezone::resolve_time;

/// TensorRT-LLM ranks are TP x PP x DP of one job: 4,096 is 512 nodes of 8 GPUs, beyond any
/// job that writes one log.
pub const RANKS_PER_LOG: Cap = Cap {
    what: "a TensorRT-LLM rank",
    cap: 4096,
};

/// Triton lines carry a process id: a slot per Triton instance writing the log at once (a
/// restart reuses a silent slot). One per GPU of a node, or a few per GPU, is 8 to 64.
pub const TRITON_SLOTS_PER_LOG: Cap = Cap {
    what: "a Triton process id (pid slot)",
    cap: 256,
};

/// Latency buckets (seconds) of the iteration and device-step histograms: TRT-LLM iterations
/// take from about a millisecond (small decode batches) to seconds (long prefills).
pub const LATENCY_BUCKETS: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// One executor (a rank, or one Triton instance) of one log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrtllmRank {
    /// The latest iteration record: Triton's gauges show the last iteration too. Not kept in
    /// the state file: the next iteration (a fraction of a second away) brings it back.
    #[serde(skip)]
    pub last: Option<Iteration>,
    /// The last iteration's own `timestamp` as an instant, read in the log's zone (see
    /// [`zone_shift`]).
    #[serde(skip)]
    pub last_stats_instant: Option<f64>,
    #[serde(with = "float")]
    pub iterations: f64,
    pub iteration_seconds: Histogram,
    pub device_step_seconds: Histogram,
    #[serde(with = "float::option")]
    pub context_tokens: Option<f64>,
    #[serde(with = "float::option")]
    pub completed_requests: Option<f64>,
    #[serde(with = "float::option")]
    pub spec_draft_tokens: Option<f64>,
    #[serde(with = "float::option")]
    pub spec_accepted_tokens: Option<f64>,
    pub kv_reused_blocks: Option<CumulativeCounter>,
    pub kv_missed_blocks: Option<CumulativeCounter>,
    /// `kvCacheStats.allocTotalBlocks`: a running total (the BlockManager adds one per block
    /// it hands out, `getFreeBlock` in `kvCacheManager.cpp`), followed across restarts.
    pub kv_alloc_total_blocks: Option<CumulativeCounter>,
    /// `kvCacheStats.allocNewBlocks`: a running total of blocks handed out empty (not reused).
    pub kv_alloc_new_blocks: Option<CumulativeCounter>,
    /// Sum of `numNewActiveRequests`.
    #[serde(with = "float::option")]
    pub new_active_requests: Option<f64>,
    /// Mean queue time (seconds) of the requests the last iteration that activated any
    /// activated: `newActiveRequestsQueueLatencyMS` (a sum over them) / `numNewActiveRequests`.
    #[serde(with = "float::option")]
    pub new_request_queue_latency_seconds: Option<f64>,
    #[serde(with = "float::option")]
    pub kv_transfer_ms: Option<f64>,
    #[serde(with = "float::option")]
    pub kv_transfer_requests: Option<f64>,
    pub capacity: KvCapacity,
    /// Line time of the last iteration, to tell a restarted Triton from a second one.
    #[serde(with = "float::option")]
    last_seen: Option<f64>,
    /// Whether the last iteration said more were coming: requests were still active (formats
    /// A and B; the executor writes a record with 0 active when a busy period drains, then
    /// blocks). Format C has no such record, so its silence says nothing.
    more_due: bool,
    /// Judged at each scrape from the log's last word and the time.
    #[serde(skip)]
    pub status: Status,
}

/// While requests are active, iteration records come every 50 ms (gptManagerBenchmark) to
/// 100 ms (Triton's `stats_check_period_ms`): a minute without one means the executor is gone
/// (TRT-LLM's own hang detector waits 300 s before it kills the server).
const SILENCE_SECONDS: f64 = 60.0;

fn add(counter: &mut Option<f64>, amount: Option<u64>) {
    if let Some(n) = amount {
        *counter = Some(counter.unwrap_or(0.0) + n as f64);
    }
}

fn follow(counter: &mut Option<CumulativeCounter>, total: Option<u64>) {
    if let Some(total) = total {
        counter
            .get_or_insert_with(Default::default)
            .observe(total as f64);
    }
}

/// Merges a capacity line into what earlier lines said: the last value of each field wins.
fn merge_capacity(into: &mut KvCapacity, from: &KvCapacity) {
    macro_rules! last_wins {
        ($($field:ident),*) => { $( if from.$field.is_some() { into.$field = from.$field; } )* };
    }
    last_wins!(
        tokens,
        primary_blocks,
        secondary_blocks,
        tokens_per_block,
        max_blocks_per_sequence,
        window_size,
        max_sequence_length,
        allocated_gib,
        estimated_gib,
        device_total_gib,
        available_gib
    );
}

impl TrtllmRank {
    /// When its last iteration was written.
    pub fn last_seen(&self) -> Option<f64> {
        self.last_seen
    }

    pub fn up(&self) -> f64 {
        if self.status.is_down() {
            0.0
        } else {
            1.0
        }
    }

    fn apply_iteration(&mut self, it: &Iteration, at: Option<f64>) {
        self.iterations += 1.0;
        if let Some(ms) = it.iter_latency_ms {
            self.iteration_seconds
                .observe(&LATENCY_BUCKETS, ms / 1000.0);
        }
        if let Some(ms) = it.prev_device_step_time_ms {
            self.device_step_seconds
                .observe(&LATENCY_BUCKETS, ms / 1000.0);
        }
        add(&mut self.context_tokens, it.context_tokens);
        add(&mut self.completed_requests, it.completed_requests);
        add(&mut self.spec_draft_tokens, it.spec_draft_tokens);
        add(&mut self.spec_accepted_tokens, it.spec_accepted_tokens);
        follow(&mut self.kv_reused_blocks, it.kv_reused_blocks);
        follow(&mut self.kv_missed_blocks, it.kv_missed_blocks);
        follow(&mut self.kv_alloc_total_blocks, it.kv_alloc_total_blocks);
        follow(&mut self.kv_alloc_new_blocks, it.kv_alloc_new_blocks);
        add(&mut self.new_active_requests, it.new_active_requests);
        if let (Some(sum_ms), Some(n)) = (
            it.new_active_requests_queue_latency_ms,
            it.new_active_requests,
        ) {
            if n > 0 {
                self.new_request_queue_latency_seconds = Some(sum_ms / n as f64 / 1000.0);
            }
        }
        if let Some(ms) = it.kv_cache_transfer_ms {
            self.kv_transfer_ms = Some(self.kv_transfer_ms.unwrap_or(0.0) + ms);
        }
        add(
            &mut self.kv_transfer_requests,
            it.kv_cache_transfer_requests,
        );
        self.last = Some(it.clone());
        self.last_seen = at.or(self.last_seen);
        self.more_due = it.format != llmtail_grammars::trtllm::Format::IterLog
            && it.active_requests.is_some_and(|n| n > 0);
    }

    fn last_value(&self, read: impl Fn(&Iteration) -> Option<u64>) -> Option<f64> {
        self.last.as_ref().and_then(read).map(|v| v as f64)
    }

    /// `avgNumDecodedTokensPerIter` of the last iteration.
    pub fn avg_decoded_tokens_per_iteration(&self) -> Option<f64> {
        self.last.as_ref()?.avg_decoded_tokens_per_iter
    }

    /// `maxBatchSizeStatic`, `maxBatchSizeRuntime`, `maxBatchSizeTunerRecommended` by `kind`.
    pub fn max_batch_size(&self) -> Vec<(&'static str, f64)> {
        let Some(it) = &self.last else {
            return Vec::new();
        };
        [
            ("static", it.max_batch_size_static),
            ("runtime", it.max_batch_size_runtime),
            ("tuner_recommended", it.max_batch_size_tuner_recommended),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k, v? as f64)))
        .collect()
    }

    /// `maxNumTokensStatic`, `maxNumTokensRuntime`, `maxNumTokensTunerRecommended` by `kind`.
    pub fn max_num_tokens(&self) -> Vec<(&'static str, f64)> {
        let Some(it) = &self.last else {
            return Vec::new();
        };
        [
            ("static", it.max_num_tokens_static),
            ("runtime", it.max_num_tokens_runtime),
            ("tuner_recommended", it.max_num_tokens_tuner_recommended),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k, v? as f64)))
        .collect()
    }

    /// `nv_trt_llm_request_metrics{request_type}`.
    pub fn request_metrics(&self) -> Vec<(&'static str, f64)> {
        let Some(it) = &self.last else {
            return Vec::new();
        };
        let waiting = it
            .waiting_requests
            .or_else(|| Some(it.active_requests?.saturating_sub(it.scheduled_requests?)));
        [
            ("active", it.active_requests),
            ("max", it.max_active_requests),
            ("scheduled", it.scheduled_requests),
            ("context", it.context_requests),
            ("waiting", waiting),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k, v? as f64)))
        .collect()
    }

    /// `nv_trt_llm_runtime_memory_metrics{memory_type}` (bytes).
    pub fn memory_metrics(&self) -> Vec<(&'static str, f64)> {
        let Some(it) = &self.last else {
            return Vec::new();
        };
        [
            ("cpu", it.cpu_mem_usage_bytes),
            ("gpu", it.gpu_mem_usage_bytes),
            ("pinned", it.pinned_mem_usage_bytes),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k, v? as f64)))
        .collect()
    }

    /// `nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type}`.
    pub fn kv_block_metrics(&self) -> Vec<(&'static str, f64)> {
        let Some(it) = &self.last else {
            return Vec::new();
        };
        let fraction =
            it.kv_used_fraction
                .or_else(|| match (it.kv_used_blocks, it.kv_max_blocks) {
                    (Some(used), Some(max)) if max > 0 => Some(used as f64 / max as f64),
                    _ => None,
                });
        let counts = [
            ("max", it.kv_max_blocks),
            ("free", it.kv_free_blocks),
            ("used", it.kv_used_blocks),
            ("tokens_per", it.kv_tokens_per_block),
            ("reused", it.kv_reused_blocks),
        ];
        counts
            .into_iter()
            .filter_map(|(k, v)| Some((k, v? as f64)))
            .chain(fraction.map(|f| ("fraction", f)))
            .collect()
    }

    /// `nv_trt_llm_inflight_batcher_metrics{inflight_batcher_specific_metric}` (not for static batching).
    pub fn inflight_batcher_metrics(&self) -> Vec<(&'static str, f64)> {
        let Some(it) = &self.last else {
            return Vec::new();
        };
        if it.batching == Some(Batching::Static) {
            return Vec::new();
        }
        [
            ("total_context_tokens", it.context_tokens),
            ("generation_requests", it.generation_requests),
            ("micro_batch_id", it.micro_batch_id),
            ("paused_requests", it.paused_requests),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k, v? as f64)))
        .collect()
    }

    /// `nv_trt_llm_v1_metrics{v1_specific_metric}` (static batching only).
    pub fn v1_metrics(&self) -> Vec<(&'static str, f64)> {
        let Some(it) = &self.last else {
            return Vec::new();
        };
        if it.batching != Some(Batching::Static) {
            return Vec::new();
        }
        [
            ("total_context_tokens", it.context_tokens),
            ("total_generation_tokens", it.generation_tokens),
            ("empty_generation_slots", it.empty_generation_slots),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k, v? as f64)))
        .collect()
    }

    /// `nv_trt_llm_general_metrics{general_type}`: the timestamp in microseconds, as Triton does.
    pub fn general_metrics(&self) -> Vec<(&'static str, f64)> {
        let Some(it) = &self.last else {
            return Vec::new();
        };
        // Triton reads the local-time string back with `mktime` in the process that printed
        // it (`convertTimestampToMicroseconds`), which gives the true instant.
        let timestamp = self
            .last_stats_instant
            .map(|seconds| (seconds * 1e6).round());
        [
            ("iteration_counter", it.iteration.map(|n| n as f64)),
            ("timestamp", timestamp),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k, v?)))
        .collect()
    }

    /// `nv_trt_llm_disaggregated_serving_metrics{disaggregated_serving_type}`: Triton counts the
    /// values it polls; each iteration line carries the sums since the previous poll.
    pub fn disaggregated_serving_metrics(&self) -> Vec<(&'static str, f64)> {
        [
            ("kv_cache_transfer_ms", self.kv_transfer_ms),
            ("request_count", self.kv_transfer_requests),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k, v?)))
        .collect()
    }

    pub fn queued_requests(&self) -> Option<f64> {
        self.last_value(|it| it.queued_requests)
    }

    pub fn kv_cache_hit_rate(&self) -> Option<f64> {
        self.last.as_ref().and_then(|it| it.kv_cache_hit_rate)
    }

    pub fn spec_acceptance_length(&self) -> Option<f64> {
        self.last.as_ref().and_then(|it| it.spec_acceptance_length)
    }

    /// Startup capacity: the token count when printed, else blocks x tokens per block.
    pub fn kv_cache_capacity_tokens(&self) -> Option<f64> {
        let c = &self.capacity;
        c.tokens
            .or_else(|| Some(c.primary_blocks? * c.tokens_per_block?))
            .map(|t| t as f64)
    }
}

/// The offset between a record's local wall time read as UTC and the instant the pipeline made
/// of it in the log's zone (or took from its envelope): how to read the iteration's own
/// `timestamp`, printed in the same zone. Rounded to the quarter hour every zone's offset is a
/// multiple of, so an envelope time a few milliseconds after the head's does not leak into it.
/// A time that fixes its own offset (Triton's heads, written with `gmtime_r`) says nothing of
/// the log's zone.
fn zone_shift(parsed: &Parsed<'_>, line_time: Option<f64>) -> Option<f64> {
    let time = parsed.time.filter(|t| t.utc_offset.is_none())?;
    let line_time = line_time?;
    let as_if_utc = resolve_time(&time, &TimeZone::UTC, line_time)?;
    const QUARTER_HOUR: f64 = 900.0;
    Some(((line_time - as_if_utc) / QUARTER_HOUR).round() * QUARTER_HOUR)
}

/// How long an executor must have been silent before a new process id in the same log is
/// taken for its restart rather than a second instance.
const RESTART_SILENCE_SECONDS: f64 = 30.0;

/// The TensorRT-LLM side of one log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrtllmLog {
    /// From Triton's `loading: <model>:<version>`.
    pub model: Option<(String, String)>,
    /// `rank` label -> executor.
    pub ranks: Units<String, TrtllmRank>,
    /// Triton lines carry a process id, not a rank: each process gets a slot (`"0"`, `"1"`, ...).
    pid_slots: Vec<(u32, String)>,
    /// pid -> its index in `pid_slots`, so a known pid costs one lookup, not a search under
    /// the state lock (30k pids took 77 s to ingest).
    #[serde(skip)]
    slot_of: SlotIndex,
    /// Where the server's run stands: identity lines start one, Triton's signal lines end it.
    pub phase: Phase,
    /// How far the log's zone puts its wall times from UTC, learned from the last record's
    /// time (see [`zone_shift`]).
    #[serde(skip)]
    zone_shift: Option<f64>,
}

/// An index derived from `pid_slots` and the ranks (rebuilt after a restore): two logs with
/// the same slots are equal whatever their index holds.
#[derive(Debug, Clone, Default)]
struct SlotIndex {
    /// pid -> its index in `pid_slots`.
    of: HashMap<u32, usize>,
    /// Per slot, its rank's last line time: a new pid looks for a silent slot among them
    /// without a map lookup per slot (that search made 30k pids three times slower).
    seen: Vec<Option<f64>>,
}

impl PartialEq for SlotIndex {
    fn eq(&self, _: &SlotIndex) -> bool {
        true
    }
}

/// Triton models that are not the TRT-LLM engine, whose loading lines must not name it.
const HELPER_MODELS: &[&str] = &[
    "preprocessing",
    "postprocessing",
    "ensemble",
    "tensorrt_llm_bls",
];

impl TrtllmLog {
    /// `may_grow`: whether `--max-series` has room for another rank. A record whose rank
    /// cannot be created is refused whole.
    pub fn apply(
        &mut self,
        record: &TrtllmRecord<'_>,
        at: Option<f64>,
        may_grow: bool,
    ) -> Result<(), Refused> {
        let mut outcome = Ok(());
        match record {
            TrtllmRecord::Iteration(it) => {
                outcome = self.apply_iteration(it, at, may_grow);
            }
            TrtllmRecord::KvCapacity(capacity) => {
                let rank = capacity.rank.unwrap_or(0).to_string();
                outcome = self
                    .rank(rank, may_grow)
                    .map(|rank| merge_capacity(&mut rank.capacity, capacity));
            }
            TrtllmRecord::TritonModel {
                model,
                model_version,
            } => {
                if !HELPER_MODELS.contains(&model.as_ref()) {
                    self.model = Some((model.to_string(), model_version.to_string()));
                }
                self.start_up(at);
            }
            TrtllmRecord::Version { .. } => self.start_up(at),
            TrtllmRecord::Signal { fatal, .. } => {
                let reason = if *fatal {
                    DownReason::Crash
                } else {
                    DownReason::Shutdown
                };
                self.phase = Phase::Stopped {
                    reason,
                    at: at.unwrap_or(0.0),
                };
            }
        }
        if matches!(record, TrtllmRecord::Iteration(_))
            && !matches!(self.phase, Phase::Stopped { .. })
        {
            self.phase = Phase::Running;
        }
        outcome
    }

    fn apply_iteration(
        &mut self,
        it: &Iteration,
        at: Option<f64>,
        may_grow: bool,
    ) -> Result<(), Refused> {
        let zone_shift = self.zone_shift;
        let label = self.rank_label(it, at)?;
        let rank = self.rank(label, may_grow)?;
        rank.apply_iteration(it, at);
        rank.last_stats_instant = it
            .timestamp
            .and_then(|t| resolve_time(&t, &TimeZone::UTC, at.unwrap_or(0.0)))
            // Until a local time of this log shows its zone, read as UTC, the zone of the
            // containers TensorRT-LLM ships in.
            .map(|as_if_utc| as_if_utc + zone_shift.unwrap_or(0.0));
        let seen = rank.last_seen;
        // A new pid reads the slots' silence from here when it looks for a restart.
        if let (None, Some(pid)) = (it.rank, it.pid) {
            if let Some(&i) = self.slot_of.of.get(&pid) {
                self.slot_of.seen[i] = seen;
            }
        }
        Ok(())
    }

    /// The rank `label`, created on first sight unless past the cap or `--max-series`.
    fn rank(&mut self, label: String, may_grow: bool) -> Result<&mut TrtllmRank, Refused> {
        if !self.ranks.contains_key(&label) {
            if self.ranks.len() >= RANKS_PER_LOG.cap {
                return Err(Refused::Cap(RANKS_PER_LOG));
            }
            if !may_grow {
                return Err(Refused::MaxSeries);
            }
        }
        Ok(self.ranks.entry(label).or_default())
    }

    /// An identity line: the first of a run begins it (a server killed without a signal line
    /// starts again too); the others belong to it.
    fn start_up(&mut self, at: Option<f64>) {
        if self.phase.is_new_run() {
            self.phase = Phase::Starting {
                since: at.unwrap_or(0.0),
            };
            // The old run's last iteration (Triton's gauges) ends with it; counters go on.
            for rank in self.ranks.values_mut() {
                rank.last = None;
                rank.more_due = false;
            }
        }
    }

    /// Judges every rank's status at `now`.
    pub fn judge(&mut self, now: f64) {
        for rank in self.ranks.values_mut() {
            let word = LastWord {
                phase: self.phase,
                last_line_at: rank.last_seen,
                next_line_due: rank.more_due,
                interval: SILENCE_SECONDS / liveness::OVERDUE_INTERVALS,
            };
            rank.status = liveness::judge(word, now);
        }
    }

    fn rank_label(&mut self, it: &Iteration, at: Option<f64>) -> Result<String, Refused> {
        if let Some(rank) = it.rank {
            return Ok(rank.to_string());
        }
        let Some(pid) = it.pid else {
            return Ok("0".to_string());
        };
        if self.slot_of.of.len() != self.pid_slots.len() {
            // Restored from the state file: the index is not saved.
            self.slot_of = SlotIndex {
                of: (self.pid_slots.iter().enumerate())
                    .map(|(i, (p, _))| (*p, i))
                    .collect(),
                seen: (self.pid_slots.iter())
                    .map(|(_, slot)| self.ranks.get(slot.as_str()).and_then(|r| r.last_seen))
                    .collect(),
            };
        }
        if let Some(&i) = self.slot_of.of.get(&pid) {
            return Ok(self.pid_slots[i].1.clone());
        }
        // A new process: the restart of a silent one keeps its slot, a concurrent one gets a
        // new slot. The search is over at most the cap of slots, and only for a new pid.
        let silent = at.and_then(|now| {
            (self.slot_of.seen.iter())
                .position(|seen| seen.is_some_and(|seen| now - seen > RESTART_SILENCE_SECONDS))
        });
        if let Some(i) = silent {
            let old = std::mem::replace(&mut self.pid_slots[i].0, pid);
            self.slot_of.of.remove(&old);
            self.slot_of.of.insert(pid, i);
            return Ok(self.pid_slots[i].1.clone());
        }
        if self.pid_slots.len() >= TRITON_SLOTS_PER_LOG.cap {
            return Err(Refused::Cap(TRITON_SLOTS_PER_LOG));
        }
        let slot = self.pid_slots.len().to_string();
        self.slot_of.of.insert(pid, self.pid_slots.len());
        self.slot_of.seen.push(None);
        self.pid_slots.push((pid, slot.clone()));
        Ok(slot)
    }
}

/// This engine's state in one log, as the registry names it.
pub type State = TrtllmLog;

impl Engine for TrtllmLog {
    const DISPLAY_NAME: &'static str = "TensorRT-LLM";
    const NAME: &'static str = "trtllm";
    const LABELS_NOTE: &'static str = "`nv_trt_llm_`/`llmtail_trtllm_` series has `model`, `version`, `log`, `rank` and the `--label`s";
    const LANDING: Landing = Landing {
        title: "TensorRT-LLM and Triton executors",
        headers: &["rank", "status", "model", "last iteration", "iterations"],
    };
    const UNIT_LABELS: &'static [&'static str] = &["model", "version", "log", "rank"];
    const TABLE: &'static [Row<TrtllmRank>] = series::TRTLLM;
    const CHARTED: ChartedSeries = [None, Some("llmtail_trtllm_queued_requests"), None, None];
    const CAPS: &'static [Cap] = &[RANKS_PER_LOG, TRITON_SLOTS_PER_LOG];
    type Unit = TrtllmRank;
    type Key = String;
    type Record<'r> = TrtllmRecord<'r>;

    fn apply(
        &mut self,
        record: &TrtllmRecord<'_>,
        parsed: &Parsed<'_>,
        line_time: Option<f64>,
        context: &ApplyContext<'_>,
    ) -> Result<(), Refused> {
        if let Some(shift) = zone_shift(parsed, line_time) {
            self.zone_shift = Some(shift);
        }
        self.apply(record, line_time, context.may_grow)
    }

    fn judge(&mut self, now: f64, _settings: &StateSettings) {
        self.judge(now);
    }

    fn units(&self) -> impl ExactSizeIterator<Item = (&String, &TrtllmRank)> {
        self.ranks.iter().map(|(key, unit)| (key, &**unit))
    }

    fn unit_labels(
        &self,
        rank: &String,
        _executor: &TrtllmRank,
        log: &LogView<'_>,
        settings: &StateSettings,
    ) -> UnitLabels {
        let (model, version) = self.model_in(log, settings);
        vec![
            ("model", model.to_string()),
            ("version", version.to_string()),
            ("log", log.label.to_string()),
            ("rank", rank.clone()),
        ]
    }

    fn status(rank: &TrtllmRank) -> Status {
        rank.status
    }

    fn landing_row(
        &self,
        rank: &String,
        executor: &TrtllmRank,
        log: &LogView<'_>,
        settings: &StateSettings,
    ) -> Vec<LandingCell> {
        let (model, version) = self.model_in(log, settings);
        vec![
            LandingCell::Text(rank.clone()),
            LandingCell::Status(executor.status),
            LandingCell::Text(format!("{model} (version {version})")),
            LandingCell::Age {
                at: executor.last_seen(),
                none: "none yet",
            },
            LandingCell::Text(format!("{}", executor.iterations)),
        ]
    }
}

impl TrtllmLog {
    /// The `model` and `version` labels of this log's series: Triton's loading line, else
    /// the `[[log]]` entry's or `--model-name` (version `1`), else Triton's default
    /// `tensorrt_llm`/`1`.
    pub fn model_in<'a>(
        &'a self,
        log: &LogView<'a>,
        settings: &'a StateSettings,
    ) -> (&'a str, &'a str) {
        if let Some((model, version)) = &self.model {
            return (model, version);
        }
        let model = log
            .model_name
            .or(settings.model_name.as_deref())
            .unwrap_or("tensorrt_llm");
        (model, "1")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iteration(pid: Option<u32>, active: u64, scheduled: u64) -> Iteration {
        Iteration {
            pid,
            active_requests: Some(active),
            scheduled_requests: Some(scheduled),
            ..Iteration::default()
        }
    }

    #[test]
    fn the_stats_timestamp_is_the_instant_it_names_in_the_zone_of_the_log() {
        let line = "[10/21/2025-23:24:47] [TRT-LLM] [RANK 0] [I] iter = 0, global_rank = 0, rank = 0, currank_total_requests = 1/2, host_step_time = 1523.44ms, prev_device_step_time = N/A, timestamp = 2025-10-21 23:24:47, num_scheduled_requests: 1, states = {'num_ctx_requests': 1, 'num_ctx_tokens': 812, 'num_generation_tokens': 0}";
        let parsed = llmtail_grammars::parse(line).unwrap();
        let llmtail_grammars::Record::Trtllm(record) = &parsed.record else {
            panic!("not a TensorRT-LLM record: {parsed:?}");
        };
        // Printed at UTC+9: 23:24:47 there is 14:24:47 UTC, as the pipeline read the head.
        let line_time = 1_761_089_087.0 - 9.0 * 3600.0;
        let mut log = TrtllmLog {
            zone_shift: zone_shift(&parsed, Some(line_time)),
            ..TrtllmLog::default()
        };
        assert_eq!(log.zone_shift, Some(-9.0 * 3600.0));
        log.apply(record, Some(line_time), true).unwrap();
        // Triton's `mktime` in the printing process gives the instant, not the UTC reading.
        let general = log.ranks["0"].general_metrics();
        assert!(
            general.contains(&("timestamp", line_time * 1e6)),
            "{general:?}"
        );
    }

    #[test]
    fn waiting_is_active_minus_scheduled_as_triton_defines_it() {
        let mut rank = TrtllmRank::default();
        rank.apply_iteration(&iteration(None, 5, 3), None);
        assert!(rank.request_metrics().contains(&("waiting", 2.0)));
    }

    #[test]
    fn a_rank_with_active_requests_silent_for_a_minute_is_down_and_a_drained_one_idle() {
        let mut log = TrtllmLog::default();
        let busy = TrtllmRecord::Iteration(Box::new(Iteration {
            rank: Some(0),
            ..iteration(None, 3, 3)
        }));
        let drained = TrtllmRecord::Iteration(Box::new(Iteration {
            rank: Some(1),
            ..iteration(None, 0, 0)
        }));
        log.apply(&busy, Some(1000.0), true).unwrap();
        log.apply(&drained, Some(1000.0), true).unwrap();
        log.judge(1059.0);
        assert_eq!(log.ranks["0"].status, Status::Up);
        log.judge(1061.0);
        assert_eq!(log.ranks["0"].status, Status::Down(DownReason::Overdue));
        assert_eq!(log.ranks["1"].status, Status::Idle);
    }

    #[test]
    fn a_signal_line_ends_the_run_and_an_identity_line_starts_the_next() {
        let mut log = TrtllmLog::default();
        log.apply(
            &TrtllmRecord::Version { version: "0.18.0" },
            Some(1000.0),
            true,
        )
        .unwrap();
        log.apply(
            &TrtllmRecord::Iteration(Box::new(iteration(None, 1, 1))),
            Some(1001.0),
            true,
        )
        .unwrap();
        log.apply(
            &TrtllmRecord::Signal {
                signal: 11,
                fatal: true,
            },
            None,
            true,
        )
        .unwrap();
        log.judge(1002.0);
        assert_eq!(log.ranks["0"].status, Status::Down(DownReason::Crash));
        log.apply(
            &TrtllmRecord::Version { version: "0.18.0" },
            Some(1100.0),
            true,
        )
        .unwrap();
        log.judge(1101.0);
        assert!(!log.ranks["0"].status.is_down());
    }

    #[test]
    fn a_restarted_triton_keeps_its_slot_and_a_second_one_gets_another() {
        let mut log = TrtllmLog::default();
        let record = |pid| TrtllmRecord::Iteration(Box::new(iteration(Some(pid), 1, 1)));
        log.apply(&record(100), Some(0.0), true).unwrap();
        log.apply(&record(200), Some(1.0), true).unwrap();
        assert_eq!(log.ranks.keys().collect::<Vec<_>>(), ["0", "1"]);
        log.apply(&record(300), Some(100.0), true).unwrap();
        assert_eq!(log.ranks.len(), 2, "pid 300 restarts a silent slot");
    }

    #[test]
    fn pid_slots_restored_from_the_state_file_keep_their_pids_and_silence() {
        let mut log = TrtllmLog::default();
        let record = |pid| TrtllmRecord::Iteration(Box::new(iteration(Some(pid), 1, 1)));
        log.apply(&record(100), Some(0.0), true).unwrap();
        log.apply(&record(200), Some(10.0), true).unwrap();
        let mut restored: TrtllmLog =
            serde_json::from_str(&serde_json::to_string(&log).unwrap()).unwrap();
        restored.apply(&record(200), Some(60.0), true).unwrap();
        assert_eq!(restored.ranks["1"].iterations, 2.0, "pid 200 keeps slot 1");
        restored.apply(&record(300), Some(61.0), true).unwrap();
        assert_eq!(
            restored.ranks["0"].iterations, 2.0,
            "pid 300 restarts silent slot 0"
        );
        assert_eq!(restored.ranks.len(), 2);
    }

    #[test]
    fn past_the_cap_a_new_pid_is_refused_and_a_known_one_still_counted() {
        let mut log = TrtllmLog::default();
        let record = |pid| TrtllmRecord::Iteration(Box::new(iteration(Some(pid), 1, 1)));
        for pid in 0..TRITON_SLOTS_PER_LOG.cap as u32 {
            log.apply(&record(pid), Some(0.0), true).unwrap();
        }
        assert_eq!(
            log.apply(&record(9999), Some(1.0), true),
            Err(Refused::Cap(TRITON_SLOTS_PER_LOG))
        );
        assert_eq!(log.apply(&record(7), Some(1.0), false), Ok(()));
        assert_eq!(log.ranks["7"].iterations, 2.0);
    }
}
