//! What an engine is on the agent's side: the [`Engine`] trait its state in a log implements,
//! and what the trait's methods take and give. Each engine's folder implements it; the
//! registry (the module above) lists the engines.

use std::fmt::Debug;

use llmtail_grammars::Parsed;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::parts::caps::{Cap, Refused};
use super::parts::histogram::Histogram;
use super::parts::liveness::Status;
use super::parts::settings::StateSettings;
use crate::catalog::{Metric, Reading, Row};

/// The labels that set one unit's series apart, in the order they are written.
pub type UnitLabels = Vec<(&'static str, String)>;

/// What an engine's state needs from a log's settings, when the log is found or reloaded.
#[derive(Debug, Clone, Copy, Default)]
pub struct EngineSetup<'a> {
    /// `--vllm-version` or the `[[log]]` entry's `vllm_version`.
    pub vllm_version: Option<&'a str>,
}

/// What applying one record needs besides the record.
pub struct ApplyContext<'a> {
    pub settings: &'a StateSettings,
    /// Whether `--max-series` has room for another unit of this engine.
    pub may_grow: bool,
    /// The log's label, for what the engine says in the agent's own log.
    pub log: &'a str,
}

/// One cell of an engine's table on the landing page.
#[derive(Debug, Clone, PartialEq)]
pub enum LandingCell {
    Text(String),
    Status(Status),
    /// How long ago `at` was, or `none` when it never was.
    Age {
        at: Option<f64>,
        none: &'static str,
    },
}

/// An engine's table on the landing page; its first column is the log.
pub struct Landing {
    pub title: &'static str,
    /// The columns after `log`.
    pub headers: &'static [&'static str],
    /// Said when no log has a unit of this engine.
    pub empty: &'static str,
}

/// What an engine needs to know of the log it is in, to label and show its units.
#[derive(Debug, Clone, Copy)]
pub struct LogView<'a> {
    /// The `log` label.
    pub label: &'a str,
    /// The `[[log]]` entry's model name, before `--model-name`.
    pub model_name: Option<&'a str>,
}

impl<'a> LogView<'a> {
    /// The model the configuration names for this log: the `[[log]]` entry's, else
    /// `--model-name`, else empty.
    pub fn configured_model(&self, settings: &'a StateSettings) -> &'a str {
        self.model_name
            .or(settings.model_name.as_deref())
            .unwrap_or("")
    }
}

/// An engine's state in one log. See the module's doc.
pub trait Engine:
    Debug + Clone + Default + PartialEq + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// The grammar's `engine` name; the key of this state in the state file.
    const NAME: &'static str;
    /// How users name the engine: the first words of its row in docs/FAQ.md's formats table.
    const DISPLAY_NAME: &'static str;
    /// For the reference page: the labels every series of the engine has, as a phrase that follows
    /// "Every " (e.g. "`vllm:` series has the labels `engine`, ...").
    const LABELS_NOTE: &'static str;
    const LANDING: Landing;
    /// The labels [`Engine::unit_labels`] gives every unit, `log` among them.
    const UNIT_LABELS: &'static [&'static str];
    /// The engine's series table, in exposition order.
    const TABLE: &'static [Row<Self::Unit>];
    /// Per-log series of the engine, besides its units' (for the reference page).
    const LOG_METRICS: &'static [Metric] = &[];
    /// Its per-log caps on new units, for `--help` ([`caps_text`]).
    const CAPS: &'static [Cap] = &[];
    /// What carries one label set of the engine's series.
    type Unit: Default + 'static;
    /// What tells the engine's units apart (`()` where their order alone does).
    type Key: 'static;
    /// The grammar's record of this engine: the grammar's `EngineRecord`.
    type Record<'r>;

    /// What one unit costs against `--max-series`: a series per row (a labelled row counted
    /// once: its samples are few, or capped), a histogram's buckets, `+Inf`, sum and count.
    fn series_per_unit() -> usize {
        // A histogram's bounds are the row's, whatever the unit has seen: a fresh unit says
        // them.
        let fresh = Self::Unit::default();
        Self::TABLE
            .iter()
            .map(|row| match row.read {
                Reading::Histogram(read) => Histogram::series(read(&fresh).bounds),
                _ => 1,
            })
            .sum()
    }

    /// The state of a log just found.
    fn new(_setup: &EngineSetup<'_>) -> Self {
        Self::default()
    }

    /// A reload's settings for a log that stays.
    fn reconfigure(&mut self, _setup: &EngineSetup<'_>) {}

    /// Applies one of this engine's records; `parsed` is the record with its head (time,
    /// process).
    fn apply(
        &mut self,
        record: &Self::Record<'_>,
        parsed: &Parsed<'_>,
        line_time: Option<f64>,
        context: &ApplyContext<'_>,
    ) -> Result<(), Refused>;

    /// Judges every unit's liveness at `now` (seconds since the epoch, the log's own present).
    fn judge(&mut self, _now: f64, _settings: &StateSettings) {}

    /// The index (in [`Engine::units`] order) of the only unit a record just applied changed,
    /// or `None` when it may have changed several, or any unit's labels (a model named). A
    /// replay writes only that unit's series after the record, and keeps the units' label
    /// sets unless their number changed.
    fn record_unit(&self, _record: &Self::Record<'_>, _parsed: &Parsed<'_>) -> Option<usize> {
        None
    }

    /// Every unit and its key, in exposition order.
    fn units(&self) -> impl ExactSizeIterator<Item = (&Self::Key, &Self::Unit)>;

    /// The labels that set a unit's series apart, `log` among them, in the order they are
    /// written (the log's own labels follow, less these names).
    fn unit_labels(
        &self,
        key: &Self::Key,
        unit: &Self::Unit,
        log: &LogView<'_>,
        settings: &StateSettings,
    ) -> UnitLabels;

    /// Whether a unit is up, idle or down.
    fn status(unit: &Self::Unit) -> Status;

    /// A unit's row on the landing page, after the log column. An engine whose page shows a
    /// row per log instead (an Ollama server, not its routes) overrides
    /// [`Engine::landing_rows`].
    fn landing_row(
        &self,
        _key: &Self::Key,
        _unit: &Self::Unit,
        _log: &LogView<'_>,
        _settings: &StateSettings,
    ) -> Vec<LandingCell> {
        Vec::new()
    }

    /// Whether each engine of the log is up, idle or down, for the landing page's summary: one
    /// per unit, unless a unit is not an engine (an Ollama server's units are its routes).
    fn statuses(&self) -> Vec<Status> {
        self.units().map(|(_, unit)| Self::status(unit)).collect()
    }

    /// The model the log's own lines name, for the landing page.
    fn model_name(&self) -> Option<&str> {
        None
    }

    /// This log's values of [`Engine::LOG_METRICS`].
    fn log_series(&self) -> Vec<(&'static Metric, f64)> {
        Vec::new()
    }

    /// What a user must act on, for the landing page.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// How many units there are (asked for every record: no allocation).
    fn unit_count(&self) -> usize {
        self.units().len()
    }

    /// The unit `index` of [`Engine::units`] (asked after every record of a replay).
    fn nth_unit(&self, index: usize) -> Option<&Self::Unit> {
        self.units().nth(index).map(|(_, unit)| unit)
    }

    /// Each unit with its labels ([`Engine::unit_labels`]).
    fn labelled_units<'a>(
        &'a self,
        log: &LogView<'_>,
        settings: &StateSettings,
    ) -> Vec<(UnitLabels, &'a Self::Unit)> {
        self.units()
            .map(|(key, unit)| (self.unit_labels(key, unit, log, settings), unit))
            .collect()
    }

    /// The engine's rows on the landing page ([`Engine::landing_row`]).
    fn landing_rows(&self, log: &LogView<'_>, settings: &StateSettings) -> Vec<Vec<LandingCell>> {
        self.units()
            .map(|(key, unit)| self.landing_row(key, unit, log, settings))
            .collect()
    }
}
