//! What a TGI (or TEI, or LoRAX) router's `Success` events add up to, per log.
//!
//! TGI logs no periodic stats: one `Success` event per finished request carries the timings
//! TGI also observes into its own histograms, from the same `Duration` values
//! (`router/src/server.rs`: `span.record("total_time", format!("{total_time:?}"))` beside
//! `metrics::histogram!("tgi_request_duration").record(total_time.as_secs_f64())`). The `Debug`
//! text is exact, so each event is observed here as TGI observed it: the same seconds in the same
//! buckets (`metrics-exporter-prometheus`, `sample <= bound`), so counts and buckets equal TGI's.
//! A `_sum` adds the same seconds in log order; TGI's exporter drains its samples in batches, so
//! its sum may differ in the last bits. What a log cannot rebuild exactly is not exported (see
//! the catalog, `catalog/tgi.rs`).
//!
//! A log is one router: its series carry the `log` label and the `--label`s, as TGI's own carry
//! none. The router is up while it logs; with no line saying it stopped, a silent one is idle.

mod series;

use std::sync::LazyLock;

use llmtail_grammars::tgi::duration::as_secs_f64;
use llmtail_grammars::tgi::{Embed, Request, TgiRecord};
use llmtail_grammars::Parsed;
use serde::{Deserialize, Serialize};

use crate::catalog::{HistogramView, LeFormat, Row};
use crate::engines::engine::{ApplyContext, Engine, Landing, LandingCell, LogView, UnitLabels};
use crate::engines::parts::caps::Refused;
use crate::engines::parts::float;
use crate::engines::parts::histogram::Histogram;
use crate::engines::parts::liveness::{self, Status};
use crate::engines::parts::settings::StateSettings;

/// Seconds without an event after which a router shows as idle on the landing page. A router
/// logs only when a request finishes, so silence is no failure.
pub const IDLE_AFTER_SECONDS: f64 = 60.0;

/// The bounds of TGI's duration histograms (`router/src/server.rs`, `start`): 35 steps of a
/// geometric sequence from 0.0001 s, computed as TGI computes them (multiplying as it goes), so
/// every bound is the very double TGI's exporter writes.
pub static TGI_DURATION_BOUNDS: LazyLock<Vec<f64>> = LazyLock::new(|| geometric(0.0001));

/// The bounds of TEI's (`router/src/prometheus.rs`): the same sequence from 0.00001 s.
pub static TEI_DURATION_BOUNDS: LazyLock<Vec<f64>> = LazyLock::new(|| geometric(0.00001));

/// `value *= 1.5` 35 times from `start`, each step a bound: the loop of TGI and TEI.
fn geometric(start: f64) -> Vec<f64> {
    let mut value = start;
    (0..35)
        .map(|_| {
            value *= 1.5;
            value
        })
        .collect()
}

/// One router: what its events have said.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TgiRouter {
    /// `tgi_request_success`: TGI increments it right before each `Success` event.
    #[serde(with = "float::option")]
    pub requests: Option<f64>,
    pub request_duration: Histogram,
    pub validation_duration: Histogram,
    pub queue_duration: Histogram,
    pub inference_duration: Histogram,
    pub mean_time_per_token_duration: Histogram,
    /// TEI's requests (for the landing page: TEI's own counter has a `method` label the event
    /// does not give).
    #[serde(with = "float::option")]
    pub embed_requests: Option<f64>,
    pub tei_tokenization_duration: Histogram,
    pub tei_queue_duration: Histogram,
    pub tei_inference_duration: Histogram,
    /// `Setting max batch total tokens to N`: TGI's `tgi_batch_max_total_tokens` gauge.
    #[serde(with = "float::option")]
    pub max_batch_total_tokens: Option<f64>,
    /// When the last event was written (its own time, else when it was read).
    #[serde(with = "float::option")]
    pub last_seen: Option<f64>,
    #[serde(skip)]
    pub status: Status,
}

impl TgiRouter {
    fn apply_request(&mut self, r: &Request<'_>) {
        let bounds = &*TGI_DURATION_BOUNDS;
        *self.requests.get_or_insert(0.0) += 1.0;
        self.request_duration
            .observe(bounds, as_secs_f64(r.total_ns));
        self.validation_duration
            .observe(bounds, as_secs_f64(r.validation_ns));
        self.queue_duration.observe(bounds, as_secs_f64(r.queue_ns));
        self.inference_duration
            .observe(bounds, as_secs_f64(r.inference_ns));
        self.mean_time_per_token_duration
            .observe(bounds, as_secs_f64(r.time_per_token_ns));
    }

    fn apply_embed(&mut self, e: &Embed<'_>) {
        let bounds = &*TEI_DURATION_BOUNDS;
        *self.embed_requests.get_or_insert(0.0) += 1.0;
        self.tei_tokenization_duration
            .observe(bounds, as_secs_f64(e.tokenization_ns));
        self.tei_queue_duration
            .observe(bounds, as_secs_f64(e.queue_ns));
        self.tei_inference_duration
            .observe(bounds, as_secs_f64(e.inference_ns));
    }

    pub fn tgi(&self, histogram: fn(&TgiRouter) -> &Histogram) -> HistogramView<'_> {
        histogram(self).view(&TGI_DURATION_BOUNDS, LeFormat::Display)
    }

    pub fn tei(&self, histogram: fn(&TgiRouter) -> &Histogram) -> HistogramView<'_> {
        histogram(self).view(&TEI_DURATION_BOUNDS, LeFormat::Display)
    }
}

/// TGI's state in one log: its router, once a record of it was read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TgiLog {
    pub router: Option<TgiRouter>,
}

/// This engine's state in one log, as the registry names it.
pub type State = TgiLog;

impl Engine for TgiLog {
    const NAME: &'static str = "tgi";
    const DISPLAY_NAME: &'static str = "TGI and TEI";
    const LABELS_NOTE: &'static str =
        "`tgi_`/`te_` series has `log` and the `--label`s (TGI's and TEI's own have none)";
    const LANDING: Landing = Landing {
        title: "TGI, TEI and LoRAX routers",
        headers: &[
            "status",
            "last event",
            "generation requests",
            "embedding requests",
        ],
    };
    const UNIT_LABELS: &'static [&'static str] = &["log"];
    const TABLE: &'static [Row<TgiRouter>] = series::TGI;
    type Unit = TgiRouter;
    type Key = ();
    type Record<'r> = TgiRecord<'r>;

    fn apply(
        &mut self,
        record: &TgiRecord<'_>,
        _parsed: &Parsed<'_>,
        line_time: Option<f64>,
        context: &ApplyContext<'_>,
    ) -> Result<(), Refused> {
        if self.router.is_none() && !context.may_grow {
            return Err(Refused::MaxSeries);
        }
        let router = self.router.get_or_insert_with(TgiRouter::default);
        match record {
            TgiRecord::Request(r) => router.apply_request(r),
            TgiRecord::Embed(e) => router.apply_embed(e),
            TgiRecord::MaxBatchTotalTokens { tokens } => {
                router.max_batch_total_tokens = Some(*tokens as f64);
            }
        }
        if line_time.is_some() {
            router.last_seen = line_time;
        }
        router.status = Status::Up;
        Ok(())
    }

    fn judge(&mut self, now: f64, _settings: &StateSettings) {
        if let Some(router) = &mut self.router {
            router.status = liveness::up_until_silent(router.last_seen, now, IDLE_AFTER_SECONDS);
        }
    }

    fn units(&self) -> impl ExactSizeIterator<Item = (&(), &TgiRouter)> {
        self.router.iter().map(|router| (&(), router))
    }

    fn unit_labels(
        &self,
        _key: &(),
        _router: &TgiRouter,
        log: &LogView<'_>,
        _settings: &StateSettings,
    ) -> UnitLabels {
        vec![("log", log.label.to_string())]
    }

    fn status(router: &TgiRouter) -> Status {
        router.status
    }

    fn landing_row(
        &self,
        _key: &(),
        router: &TgiRouter,
        _log: &LogView<'_>,
        _settings: &StateSettings,
    ) -> Vec<LandingCell> {
        let count = |n: Option<f64>| LandingCell::Text(format!("{}", n.unwrap_or(0.0)));
        vec![
            LandingCell::Status(router.status),
            LandingCell::Age {
                at: router.last_seen,
                none: "none yet",
            },
            count(router.requests),
            count(router.embed_requests),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_tgis_and_teis_own_doubles() {
        assert_eq!(TGI_DURATION_BOUNDS.len(), 35);
        assert_eq!(TGI_DURATION_BOUNDS[0].to_string(), "0.00015000000000000001");
        assert_eq!(TGI_DURATION_BOUNDS[34].to_string(), "145.61096060497135");
        assert_eq!(
            TEI_DURATION_BOUNDS[0].to_string(),
            "0.000015000000000000002"
        );
        assert_eq!(TEI_DURATION_BOUNDS[34].to_string(), "14.561096060497142");
    }

    #[test]
    fn an_observation_equal_to_a_bound_is_in_that_bucket() {
        let bounds = &*TGI_DURATION_BOUNDS;
        let mut h = Histogram::default();
        h.observe(bounds, bounds[3]);
        h.observe(bounds, 0.0);
        h.observe(bounds, 1000.0);
        let view = h.view(bounds, LeFormat::Display);
        assert_eq!((view.counts[0], view.counts[3], view.counts[35]), (1, 1, 1));
        assert_eq!(view.count, 3);
    }

    #[test]
    fn a_router_comes_back_from_the_state_file_as_it_was() {
        let mut router = TgiRouter {
            requests: Some(2.0),
            max_batch_total_tokens: Some(96528.0),
            last_seen: Some(1_730_710_851.020461),
            ..TgiRouter::default()
        };
        router
            .request_duration
            .observe(&TGI_DURATION_BOUNDS, 1.250713905);
        router
            .tei_queue_duration
            .observe(&TEI_DURATION_BOUNDS, 0.0000884);
        let log = TgiLog {
            router: Some(router),
        };
        let saved = serde_json::to_value(&log).unwrap();
        let restored: TgiLog = serde_json::from_value(saved).unwrap();
        assert_eq!(restored, log);
    }
}
