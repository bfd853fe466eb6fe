//! What a KoboldCpp server's generation lines add up to, per log.
//!
//! KoboldCpp prints one stats line when a generation finishes (`gpttype_generate()`), and
//! nothing periodic, so a log is one server whose state changes once per generation: each line
//! counts one finished generation and, from 1.71 on, the tokens it generated (`Amt`), both
//! exactly; the context used and each phase's seconds and rate are the last generation's,
//! as printed (rounded to 10 ms, so no counter sums them). A generation that failed prints no
//! line, and the log says nothing of prompt tokens, so neither is counted (see the catalog,
//! `series.rs`).
//!
//! The server is up while it logs; with no line saying it stopped, a silent one is idle: a
//! KoboldCpp nobody asks prints nothing.

mod series;

use llmtail_grammars::koboldcpp::{KoboldcppRecord, KoboldcppStats};
use llmtail_grammars::Parsed;
use serde::{Deserialize, Serialize};

use crate::catalog::Row;
use crate::engines::engine::{
    ApplyContext, ChartedSeries, Engine, Landing, LandingCell, LogView, UnitLabels,
};
use crate::engines::parts::caps::Refused;
use crate::engines::parts::float;
use crate::engines::parts::liveness::{self, Status};
use crate::engines::parts::settings::StateSettings;

/// Seconds without a generation after which a server shows as idle on the landing page (as a
/// TGI router: silence between requests is no failure).
pub const IDLE_AFTER_SECONDS: f64 = 60.0;

/// One KoboldCpp server: what its generation lines have said.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KoboldcppServer {
    /// Generations that printed their stats line.
    #[serde(with = "float::option")]
    pub generations: Option<f64>,
    /// The sum of `Amt`'s generated tokens (1.71+; `None` until a line printed `Amt`).
    #[serde(with = "float::option")]
    pub generated_tokens: Option<f64>,
    /// The last generation's `CtxLimit: a/b`.
    #[serde(with = "float::option")]
    pub context_tokens: Option<f64>,
    #[serde(with = "float::option")]
    pub context_limit: Option<f64>,
    /// The last generation's `Amt: g/r`, r.
    #[serde(with = "float::option")]
    pub requested_tokens: Option<f64>,
    /// The last generation's `Init`, `Process` and `Generate` seconds.
    #[serde(with = "float::option")]
    pub init_seconds: Option<f64>,
    #[serde(with = "float::option")]
    pub process_seconds: Option<f64>,
    #[serde(with = "float::option")]
    pub generate_seconds: Option<f64>,
    /// The last generation's `Process` and `Generate` rates; `None` for an `inf` one.
    #[serde(with = "float::option")]
    pub process_tokens_per_second: Option<f64>,
    #[serde(with = "float::option")]
    pub generate_tokens_per_second: Option<f64>,
    /// When the last line was written (its clock read on the day it arrived, else when it was
    /// read).
    #[serde(with = "float::option")]
    pub last_seen: Option<f64>,
    #[serde(skip)]
    pub status: Status,
}

impl KoboldcppServer {
    fn apply_stats(&mut self, stats: &KoboldcppStats) {
        let count = |n: u64| n as f64;
        let finite = |rate: f64| rate.is_finite().then_some(rate);
        *self.generations.get_or_insert(0.0) += 1.0;
        if let Some(generated) = stats.generated_tokens {
            *self.generated_tokens.get_or_insert(0.0) += count(generated);
        }
        self.context_tokens = Some(count(stats.context_tokens));
        self.context_limit = Some(count(stats.context_limit));
        self.requested_tokens = stats.requested_tokens.map(count);
        self.init_seconds = stats.init_seconds;
        self.process_seconds = Some(stats.process.seconds);
        self.generate_seconds = Some(stats.generate.seconds);
        self.process_tokens_per_second = finite(stats.process.tokens_per_second);
        self.generate_tokens_per_second = finite(stats.generate.tokens_per_second);
    }
}

/// KoboldCpp's state in one log: its server, once a line of it was read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KoboldcppLog {
    pub server: Option<KoboldcppServer>,
}

/// This engine's state in one log, as the registry names it.
pub type State = KoboldcppLog;

impl Engine for KoboldcppLog {
    const NAME: &'static str = "koboldcpp";
    const DISPLAY_NAME: &'static str = "KoboldCpp";
    const LABELS_NOTE: &'static str =
        "`llmtail_koboldcpp_` series has `log` and the `--label`s (KoboldCpp exports no metrics of its own)";
    const LANDING: Landing = Landing {
        title: "KoboldCpp servers",
        headers: &["status", "last generation", "generations"],
    };
    const UNIT_LABELS: &'static [&'static str] = &["log"];
    const TABLE: &'static [Row<KoboldcppServer>] = series::KOBOLDCPP;
    const CHARTED: ChartedSeries = [
        None,
        None,
        None,
        Some("llmtail_koboldcpp_generate_tokens_per_second"),
    ];
    type Unit = KoboldcppServer;
    type Key = ();
    type Record<'r> = KoboldcppRecord;

    fn apply(
        &mut self,
        record: &KoboldcppRecord,
        _parsed: &Parsed<'_>,
        line_time: Option<f64>,
        context: &ApplyContext<'_>,
    ) -> Result<(), Refused> {
        let KoboldcppRecord::Stats(stats) = record;
        if self.server.is_none() && !context.may_grow {
            return Err(Refused::MaxSeries);
        }
        let server = self.server.get_or_insert_with(KoboldcppServer::default);
        server.apply_stats(stats);
        if line_time.is_some() {
            server.last_seen = line_time;
        }
        server.status = Status::Up;
        Ok(())
    }

    fn judge(&mut self, now: f64, _settings: &StateSettings) {
        if let Some(server) = &mut self.server {
            server.status = liveness::up_until_silent(server.last_seen, now, IDLE_AFTER_SECONDS);
        }
    }

    fn record_unit(&self, _record: &KoboldcppRecord, _parsed: &Parsed<'_>) -> Option<usize> {
        // One server per log: a record changes only it.
        Some(0)
    }

    fn units(&self) -> impl ExactSizeIterator<Item = (&(), &KoboldcppServer)> {
        self.server.iter().map(|server| (&(), server))
    }

    fn unit_labels(
        &self,
        _key: &(),
        _server: &KoboldcppServer,
        log: &LogView<'_>,
        _settings: &StateSettings,
    ) -> UnitLabels {
        vec![("log", log.label.to_string())]
    }

    fn status(server: &KoboldcppServer) -> Status {
        server.status
    }

    fn landing_row(
        &self,
        _key: &(),
        server: &KoboldcppServer,
        _log: &LogView<'_>,
        _settings: &StateSettings,
    ) -> Vec<LandingCell> {
        vec![
            LandingCell::Status(server.status),
            LandingCell::Age {
                at: server.last_seen,
                none: "none yet",
            },
            LandingCell::Text(format!("{}", server.generations.unwrap_or(0.0))),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use llmtail_grammars::koboldcpp::Phase;

    fn stats(generated: Option<u64>, process_rate: f64) -> KoboldcppStats {
        KoboldcppStats {
            context_tokens: 2310,
            context_limit: 8192,
            generated_tokens: generated,
            requested_tokens: generated.map(|_| 512),
            process: Phase {
                seconds: 1.52,
                ms_per_token: None,
                tokens_per_second: process_rate,
            },
            ..KoboldcppStats::default()
        }
    }

    #[test]
    fn every_line_is_one_generation_and_its_amount_adds_up() {
        let mut server = KoboldcppServer::default();
        server.apply_stats(&stats(Some(211), 688.16));
        server.apply_stats(&stats(Some(78), 66.89));
        assert_eq!(server.generations, Some(2.0));
        assert_eq!(server.generated_tokens, Some(289.0));
        assert_eq!(server.process_tokens_per_second, Some(66.89));
        assert_eq!(server.context_limit, Some(8192.0));
    }

    #[test]
    fn lines_without_an_amount_count_no_tokens() {
        let mut server = KoboldcppServer::default();
        server.apply_stats(&stats(None, 66.89));
        assert_eq!(server.generations, Some(1.0));
        assert_eq!(server.generated_tokens, None);
    }

    #[test]
    fn an_infinite_rate_is_no_value() {
        let mut server = KoboldcppServer::default();
        server.apply_stats(&stats(Some(0), f64::INFINITY));
        assert_eq!(server.process_tokens_per_second, None);
    }

    #[test]
    fn a_server_comes_back_from_the_state_file_as_it_was() {
        let mut server = KoboldcppServer {
            last_seen: Some(1_730_710_851.0),
            ..KoboldcppServer::default()
        };
        server.apply_stats(&stats(Some(211), 688.16));
        let log = KoboldcppLog {
            server: Some(server),
        };
        let saved = serde_json::to_value(&log).unwrap();
        let restored: KoboldcppLog = serde_json::from_value(saved).unwrap();
        assert_eq!(restored, log);
    }
}
