//! What LMDeploy's stats lines in one log say, per data-parallel rank, and how each line
//! changes it.
//!
//! LMDeploy's API server calls every rank's `LoggingStatLogger.log()` every 10 s
//! (`log_interval = 10.` in `serve/openai/api_server.py`); a call whose window processed no
//! token prints nothing, and every call, printed or not, starts a new window. So each line
//! covers one window, never the silence before it, and tokens are `throughput x 10 s` plus
//! the logging loop's lateness, learned from runs of consecutive lines as for vLLM
//! ([`Pacing`]). A line that showed running or waiting requests is followed by another (those
//! requests make tokens), which is how a rank that stopped logging with work in hand is told
//! from an idle one.

mod series;

use llmtail_grammars::lmdeploy::{LmdeployRecord, LmdeployStats};
use llmtail_grammars::Parsed;
use serde::{Deserialize, Serialize};

use crate::catalog::Row;
use crate::engines::engine::{
    ApplyContext, ChartedSeries, Engine, Landing, LandingCell, LogView, UnitLabels,
};
use crate::engines::parts::caps::{self, Cap, Refused};
use crate::engines::parts::counting::{add_tokens, fraction_of_percent};
use crate::engines::parts::float;
use crate::engines::parts::liveness::{self, LastWord, Phase, Status};
use crate::engines::parts::pacing::{LateTokens, Pacing, StatsInterval};
use crate::engines::parts::settings::StateSettings;
use crate::engines::parts::units::Units;

/// LMDeploy's `DPn` is its data-parallel rank, one stats line each per interval; its largest
/// deployments (DeepSeek wide expert parallelism) run DP 32 to 144. 1,024 is vLLM's cap for
/// the same rank.
pub const RANKS_PER_LOG: Cap = Cap {
    what: "an LMDeploy data-parallel rank (DPn)",
    cap: 1024,
};

/// LMDeploy's logging interval: fixed in its API server, not a setting.
pub const INTERVAL_SECONDS: f64 = 10.0;

/// Everything exported for one data-parallel rank of one log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LmdeployRank {
    #[serde(with = "float::option")]
    pub running: Option<f64>,
    #[serde(with = "float::option")]
    pub waiting: Option<f64>,
    /// Fraction 0..1.
    #[serde(with = "float::option")]
    pub kv_cache_usage: Option<f64>,
    #[serde(with = "float::option")]
    pub prefix_cache_hit_rate: Option<f64>,
    #[serde(with = "float::option")]
    pub external_prefix_cache_hit_rate: Option<f64>,
    #[serde(with = "float::option")]
    pub finished: Option<f64>,
    #[serde(with = "float::option")]
    pub unfinished: Option<f64>,
    #[serde(with = "float::option")]
    pub completed: Option<f64>,
    #[serde(with = "float::option")]
    pub succeeded: Option<f64>,
    #[serde(with = "float::option")]
    pub failed: Option<f64>,
    #[serde(with = "float::option")]
    pub api_routed: Option<f64>,
    #[serde(with = "float::option")]
    pub api_waiting: Option<f64>,
    #[serde(with = "float::option")]
    pub prompt_throughput: Option<f64>,
    #[serde(with = "float::option")]
    pub generation_throughput: Option<f64>,
    #[serde(with = "float::option")]
    pub mm_preprocess_seconds: Option<f64>,
    #[serde(with = "float::option")]
    pub prompt_tokens: Option<f64>,
    #[serde(with = "float::option")]
    pub generation_tokens: Option<f64>,
    #[serde(with = "float::option")]
    pub spec_accepted_tokens: Option<f64>,
    #[serde(with = "float::option")]
    pub spec_draft_tokens: Option<f64>,
    /// The last interval's `Mean acceptance length`.
    #[serde(with = "float::option")]
    pub spec_mean_acceptance_length: Option<f64>,
    /// The last interval's per-position acceptance rates.
    pub spec_per_position: Vec<f64>,
    /// The logging loop's lateness owed to each token counter (see [`LateTokens`]).
    late_prompt: LateTokens,
    late_generation: LateTokens,
    pub pacing: Pacing,
    /// Whether the last line said another was due: it showed running or waiting requests.
    more_due: bool,
    #[serde(skip)]
    pub status: Status,
}

impl LmdeployRank {
    pub fn up(&self) -> f64 {
        if self.status.is_down() {
            0.0
        } else {
            1.0
        }
    }

    /// `lmdeploy:spec_decode_mean_accept_rate`: accepted over drafted tokens since counting
    /// began, as LMDeploy's exporter computes it from its counters.
    pub fn spec_mean_accept_rate(&self) -> Option<f64> {
        let drafted = self.spec_draft_tokens?;
        Some(if drafted > 0.0 {
            self.spec_accepted_tokens.unwrap_or(0.0) / drafted
        } else {
            0.0
        })
    }

    fn apply_stats(&mut self, stats: &LmdeployStats, at: Option<f64>) {
        let count = |n: u64| n as f64;
        self.running = Some(count(stats.running));
        self.waiting = Some(count(stats.waiting));
        self.kv_cache_usage = Some(fraction_of_percent(stats.kv_cache_usage_percent));
        let grouped = stats.succeeded.is_some() || stats.completed.is_some();
        // From PR #4297 the hit rate is printed only when not 0: absent is 0.
        self.prefix_cache_hit_rate = match stats.prefix_cache_hit_rate_percent {
            Some(percent) => Some(fraction_of_percent(percent)),
            None if grouped => Some(0.0),
            None => None,
        };
        self.external_prefix_cache_hit_rate = stats
            .external_prefix_cache_hit_rate_percent
            .map(fraction_of_percent);
        self.finished = stats.finished.map(count);
        self.unfinished = stats.unfinished.map(count);
        self.completed = stats.completed.map(count);
        self.succeeded = stats.succeeded.map(count);
        self.failed = stats.failed.map(count);
        self.api_routed = stats.api_routed.map(count);
        self.api_waiting = stats.api_waiting.map(count);
        self.prompt_throughput = Some(stats.prompt_throughput);
        self.generation_throughput = Some(stats.generation_throughput);
        self.mm_preprocess_seconds = stats.mm_preprocess_s_per_req;
        // LMDeploy prints only windows that processed tokens: a line never says that the
        // next window will, so every line covers one window, whatever the gap before it.
        let interval = StatsInterval::Fixed(INTERVAL_SECONDS);
        let window = self.pacing.v1_window(at, false, interval);
        let lateness = self.pacing.lateness(INTERVAL_SECONDS);
        let prompt = (self.late_prompt).tokens(stats.prompt_throughput, window, lateness);
        let generation =
            (self.late_generation).tokens(stats.generation_throughput, window, lateness);
        self.prompt_tokens = Some(add_tokens(self.prompt_tokens, prompt));
        self.generation_tokens = Some(add_tokens(self.generation_tokens, generation));
        if let Some(spec) = &stats.spec_decoding {
            let add = |counter: Option<f64>, n: u64| Some(counter.unwrap_or(0.0) + n as f64);
            self.spec_accepted_tokens = add(self.spec_accepted_tokens, spec.accepted_tokens);
            self.spec_draft_tokens = add(self.spec_draft_tokens, spec.draft_tokens);
            self.spec_mean_acceptance_length = Some(spec.mean_acceptance_length);
            self.spec_per_position
                .clone_from(&spec.per_position_acceptance_rate);
            self.spec_per_position.truncate(caps::SPEC_POSITIONS);
        }
        self.more_due = stats.running > 0 || stats.waiting > 0;
    }
}

/// LMDeploy in one log: its data-parallel ranks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LmdeployLog {
    /// `engine` label (the DP rank, as LMDeploy's exporter labels it) -> rank.
    pub ranks: Units<u32, LmdeployRank>,
}

impl LmdeployLog {
    /// `may_grow`: whether `--max-series` has room for another rank.
    pub fn apply(
        &mut self,
        record: &LmdeployRecord,
        at: Option<f64>,
        may_grow: bool,
    ) -> Result<(), Refused> {
        let LmdeployRecord::Stats(stats) = record;
        if !self.ranks.contains_key(&stats.dp_rank) {
            if self.ranks.len() >= RANKS_PER_LOG.cap {
                return Err(Refused::Cap(RANKS_PER_LOG));
            }
            if !may_grow {
                return Err(Refused::MaxSeries);
            }
        }
        let rank = self.ranks.entry(stats.dp_rank).or_default();
        rank.apply_stats(stats, at);
        if stats
            .spec_decoding
            .as_ref()
            .is_some_and(|s| s.per_position_acceptance_rate.len() > caps::SPEC_POSITIONS)
        {
            return Err(Refused::SpecPosition);
        }
        Ok(())
    }

    /// Judges every rank at `now`: LMDeploy prints no start-up or shutdown line the grammar
    /// reads, so only silence after a line with work in hand takes a rank down.
    pub fn judge(&mut self, now: f64) {
        for rank in self.ranks.values_mut() {
            let word = LastWord {
                phase: Phase::Running,
                last_line_at: rank.pacing.last_line_at(),
                next_line_due: rank.more_due,
                interval: INTERVAL_SECONDS,
            };
            rank.status = liveness::judge(word, now);
        }
    }
}

/// This engine's state in one log, as the registry names it.
pub type State = LmdeployLog;

impl Engine for LmdeployLog {
    const NAME: &'static str = "lmdeploy";
    const DISPLAY_NAME: &'static str = "LMDeploy";
    const LABELS_NOTE: &'static str = "`lmdeploy:`/`llmtail_lmdeploy_` series has `model_name`, `engine` (the data-parallel rank, `DPn` in the line; LMDeploy's own exporter's label), `log` and the `--label`s";
    const LANDING: Landing = Landing {
        title: "LMDeploy ranks",
        headers: &["engine (DP rank)", "status", "model", "last stats line"],
    };
    const UNIT_LABELS: &'static [&'static str] = &["model_name", "engine", "log"];
    const TABLE: &'static [Row<LmdeployRank>] = series::LMDEPLOY;
    const CHARTED: ChartedSeries = [
        Some("lmdeploy:num_requests_running"),
        Some("lmdeploy:num_requests_waiting"),
        Some("lmdeploy:gpu_cache_usage_perc"),
        Some("llmtail_lmdeploy_generation_throughput_tokens_per_second"),
    ];
    const CAPS: &'static [Cap] = &[RANKS_PER_LOG];
    type Unit = LmdeployRank;
    type Key = u32;
    type Record<'r> = LmdeployRecord;

    fn apply(
        &mut self,
        record: &LmdeployRecord,
        _parsed: &Parsed<'_>,
        line_time: Option<f64>,
        context: &ApplyContext<'_>,
    ) -> Result<(), Refused> {
        self.apply(record, line_time, context.may_grow)
    }

    fn judge(&mut self, now: f64, _settings: &StateSettings) {
        self.judge(now);
    }

    fn units(&self) -> impl ExactSizeIterator<Item = (&u32, &LmdeployRank)> {
        self.ranks.iter().map(|(key, unit)| (key, &**unit))
    }

    /// `model_name` is the configuration's: the stats line does not name the model.
    fn unit_labels(
        &self,
        rank: &u32,
        _state: &LmdeployRank,
        log: &LogView<'_>,
        settings: &StateSettings,
    ) -> UnitLabels {
        vec![
            ("model_name", log.configured_model(settings).to_string()),
            ("engine", rank.to_string()),
            ("log", log.label.to_string()),
        ]
    }

    fn status(rank: &LmdeployRank) -> Status {
        rank.status
    }

    fn landing_row(
        &self,
        rank: &u32,
        state: &LmdeployRank,
        log: &LogView<'_>,
        settings: &StateSettings,
    ) -> Vec<LandingCell> {
        vec![
            LandingCell::Text(rank.to_string()),
            LandingCell::Status(state.status),
            LandingCell::Text(log.configured_model(settings).to_string()),
            LandingCell::Age {
                at: state.pacing.last_line_at(),
                none: "none yet",
            },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use llmtail_grammars::lmdeploy::SpecDecoding;

    fn stats(rank: u32, prompt: f64, generation: f64, running: u64) -> LmdeployStats {
        LmdeployStats {
            dp_rank: rank,
            prompt_throughput: prompt,
            generation_throughput: generation,
            succeeded: Some(1),
            running,
            kv_cache_usage_percent: 0.7,
            ..LmdeployStats::default()
        }
    }

    fn apply(log: &mut LmdeployLog, stats: LmdeployStats, at: f64) {
        log.apply(&LmdeployRecord::Stats(stats), Some(at), true)
            .unwrap();
    }

    #[test]
    fn every_line_covers_one_window_whatever_the_silence_before_it() {
        let mut log = LmdeployLog::default();
        apply(&mut log, stats(0, 100.0, 10.5, 1), 1000.0);
        // Two minutes without tokens (nothing printed), then one window.
        apply(&mut log, stats(0, 0.0, 20.0, 0), 1120.0);
        let rank = &log.ranks[&0];
        assert_eq!(rank.prompt_tokens, Some(1000.0));
        assert_eq!(rank.generation_tokens, Some(305.0));
        assert_eq!(rank.kv_cache_usage, Some(0.007));
    }

    #[test]
    fn a_rank_silent_after_work_in_hand_is_overdue_and_after_none_idle() {
        let mut log = LmdeployLog::default();
        apply(&mut log, stats(0, 1.0, 1.0, 3), 1000.0);
        apply(&mut log, stats(1, 1.0, 1.0, 0), 1000.0);
        log.judge(1031.0);
        assert!(log.ranks[&0].status.is_down());
        assert_eq!(log.ranks[&1].status, Status::Idle);
    }

    #[test]
    fn grouped_lines_without_a_hit_rate_mean_zero() {
        let mut log = LmdeployLog::default();
        apply(&mut log, stats(0, 1.0, 1.0, 0), 1000.0);
        assert_eq!(log.ranks[&0].prefix_cache_hit_rate, Some(0.0));
        let old = LmdeployStats {
            succeeded: None,
            finished: Some(3),
            unfinished: Some(0),
            ..stats(1, 1.0, 1.0, 0)
        };
        apply(&mut log, old, 1000.0);
        assert_eq!(log.ranks[&1].prefix_cache_hit_rate, None);
    }

    #[test]
    fn spec_decoding_counts_add_up_and_the_rate_is_theirs() {
        let mut log = LmdeployLog::default();
        for (accepted, drafted) in [(3, 4), (1, 4)] {
            let with_spec = LmdeployStats {
                spec_decoding: Some(SpecDecoding {
                    accepted_tokens: accepted,
                    draft_tokens: drafted,
                    mean_acceptance_length: 1.5,
                    per_position_acceptance_rate: vec![0.5],
                    ..SpecDecoding::default()
                }),
                ..stats(0, 1.0, 1.0, 1)
            };
            apply(&mut log, with_spec, 1000.0);
        }
        let rank = &log.ranks[&0];
        assert_eq!(rank.spec_draft_tokens, Some(8.0));
        assert_eq!(rank.spec_mean_accept_rate(), Some(0.5));
    }
}
