//! An engine on the agent's side, and the one list of them.
//!
//! What a log's lines of one engine have said is that engine's state in the log (a [`VllmLog`],
//! a [`TrtllmLog`]): it implements [`Engine`], which says how records change it, how it is
//! judged up or down, which units (a vLLM engine, a TensorRT-LLM rank) carry series and with
//! which labels, which catalog table names those series, how it is saved in the state file and
//! shown on the landing page. The pipeline, the state file, the exposition and the landing page
//! know engines only through this trait and [`for_each_engine`], so none of them lists engines.
//!
//! # Adding an engine
//! 1. Grammar: a module in `grammars/src/` with its `EngineGrammar`, registered in the
//!    grammars' `ENGINES` (its doc says how), and line cases in `fixtures/cases/`.
//! 2. State: `src/state/<engine>.rs`, a `<Engine>Log` that implements [`Engine`] (its `NAME`
//!    is the grammar's `engine`), and one line in [`for_each_engine`].
//! 3. Catalog: `src/catalog/<engine>.rs`, the table of its series (`&[Row<Unit>]`, native
//!    names where the engine's own exporter means the same), returned by [`Engine::table`].
//! 4. Fixtures: a replay log and its golden in `fixtures/replay/<engine>-...`, rows in the
//!    README's formats table. `tests/registry.rs` fails while any of these is missing.
//!
//! The state file keeps each engine's state as one value under its `NAME`, in the engine's own
//! serde form: a renamed field is a new state-file version (see `checkpoint`).

use std::any::Any;
use std::fmt::Debug;

use llmtail_grammars::Parsed;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::histogram::Histogram;
use super::liveness::Status;
use super::llamacpp::LlamacppLog;
use super::lmdeploy::LmdeployLog;
use super::ollama::OllamaLog;
use super::sglang::SglangLog;
use super::tgi::TgiLog;
use super::trtllm::TrtllmLog;
use super::vllm::VllmLog;
use super::{LogState, Refused, StateSettings};
use crate::catalog::{Metric, Reading, Row};

/// Every engine, in exposition order: the agent's one list of engines.
pub fn for_each_engine(visitor: &mut impl EngineVisitor) {
    visitor.visit::<VllmLog>();
    visitor.visit::<TrtllmLog>();
    visitor.visit::<LlamacppLog>();
    visitor.visit::<LmdeployLog>();
    visitor.visit::<TgiLog>();
    visitor.visit::<OllamaLog>();
    visitor.visit::<SglangLog>();
}

/// Something done once per engine type (render its rows, make its state, list its metrics).
pub trait EngineVisitor {
    fn visit<E: Engine>(&mut self);
}

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

/// An engine's state in one log. See the module's doc.
pub trait Engine:
    Debug + Clone + Default + PartialEq + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// The grammar's `engine` name; the key of this state in the state file.
    const NAME: &'static str;
    /// How users name the engine: the first words of its row in the README's formats table.
    const DISPLAY_NAME: &'static str;
    /// For the README: the labels every series of the engine has, as a phrase that follows
    /// "Every " (e.g. "`vllm:` series has the labels `engine`, ...").
    const LABELS_NOTE: &'static str;
    const LANDING: Landing;
    /// The labels [`Engine::units`] gives every unit, `log` among them.
    const UNIT_LABELS: &'static [&'static str];
    /// What carries one label set of the engine's series.
    type Unit: Default + 'static;

    /// The engine's catalog table, in exposition order.
    fn table() -> &'static [Row<Self::Unit>];

    /// Per-log series of the engine, besides its units' (for the README).
    fn log_metrics() -> &'static [Metric] {
        &[]
    }

    /// What one unit costs against `--max-series`: a series per row (a labelled row counted
    /// once: its samples are few, or capped), a histogram's buckets, `+Inf`, sum and count.
    fn series_per_unit() -> usize {
        // A histogram's bounds are the row's, whatever the unit has seen: a fresh unit says
        // them. Asked once per log, when it is found.
        let fresh = Self::Unit::default();
        Self::table()
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

    /// Applies `parsed` when it is this engine's record (`None` when it is not).
    fn apply(
        &mut self,
        parsed: &Parsed<'_>,
        line_time: Option<f64>,
        context: &ApplyContext<'_>,
    ) -> Option<Result<(), Refused>>;

    /// Judges every unit's liveness at `now` (seconds since the epoch), before a scrape.
    fn judge(&mut self, now: f64, settings: &StateSettings);

    /// The index (in [`Engine::units`] order) of the only unit a record just applied changed,
    /// or `None` when it may have changed several, or any unit's labels (a model named). A
    /// replay writes only that unit's series after the record, and keeps the units' label
    /// sets unless their number changed.
    fn record_unit(&self, _parsed: &Parsed<'_>) -> Option<usize> {
        None
    }

    /// How many units there are (asked for every record: no allocation).
    fn unit_count(&self) -> usize;

    /// Every unit, in exposition order.
    fn each_unit(&self) -> Vec<&Self::Unit>;

    /// The unit `index` of [`Engine::each_unit`] (asked after every record of a replay).
    fn nth_unit(&self, index: usize) -> Option<&Self::Unit> {
        self.each_unit().into_iter().nth(index)
    }

    /// Each unit with the labels that set its series apart, `log` among them, in the order
    /// they are written (the log's own labels follow, less these names).
    fn units<'a>(
        &'a self,
        log: &'a LogState,
        settings: &'a StateSettings,
    ) -> Vec<(UnitLabels, &'a Self::Unit)>;

    /// Whether a unit is up, idle or down.
    fn status(unit: &Self::Unit) -> Status;

    /// Whether each engine of the log is up, idle or down, for the landing page's summary: one
    /// per unit, unless a unit is not an engine (an Ollama server's units are its routes).
    fn statuses(&self) -> Vec<Status> {
        self.each_unit().into_iter().map(Self::status).collect()
    }

    /// The model the log's own lines name, for the landing page.
    fn model_name(&self) -> Option<&str> {
        None
    }

    /// This log's values of [`Engine::log_metrics`].
    fn log_series(&self) -> Vec<(&'static Metric, f64)> {
        Vec::new()
    }

    /// What a user must act on, for the landing page.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// The engine's rows on the landing page, after the log column.
    fn landing_rows(&self, log: &LogState, settings: &StateSettings) -> Vec<Vec<LandingCell>>;
}

/// [`Engine`] as a log holds it: one boxed state per engine, in [`for_each_engine`] order.
pub trait EngineState: Debug + Send + Sync {
    fn name(&self) -> &'static str;
    fn apply(
        &mut self,
        parsed: &Parsed<'_>,
        line_time: Option<f64>,
        context: &ApplyContext<'_>,
    ) -> Option<Result<(), Refused>>;
    fn judge(&mut self, now: f64, settings: &StateSettings);
    fn record_unit(&self, parsed: &Parsed<'_>) -> Option<usize>;
    fn reconfigure(&mut self, setup: &EngineSetup<'_>);
    fn series_per_unit(&self) -> usize;
    /// How many units there are: each costs [`EngineState::series_per_unit`].
    fn unit_count(&self) -> usize;
    fn statuses(&self) -> Vec<Status>;
    fn model_name(&self) -> Option<&str>;
    fn warnings(&self) -> Vec<String>;
    fn log_series(&self) -> Vec<(&'static Metric, f64)>;
    fn save(&self) -> serde_json::Result<serde_json::Value>;
    fn restore(&mut self, saved: &serde_json::Value) -> serde_json::Result<()>;
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn clone_box(&self) -> Box<dyn EngineState>;
    fn eq_state(&self, other: &dyn EngineState) -> bool;
}

impl<E: Engine> EngineState for E {
    fn name(&self) -> &'static str {
        E::NAME
    }

    fn apply(
        &mut self,
        parsed: &Parsed<'_>,
        line_time: Option<f64>,
        context: &ApplyContext<'_>,
    ) -> Option<Result<(), Refused>> {
        Engine::apply(self, parsed, line_time, context)
    }

    fn judge(&mut self, now: f64, settings: &StateSettings) {
        Engine::judge(self, now, settings);
    }

    fn record_unit(&self, parsed: &Parsed<'_>) -> Option<usize> {
        Engine::record_unit(self, parsed)
    }

    fn reconfigure(&mut self, setup: &EngineSetup<'_>) {
        Engine::reconfigure(self, setup);
    }

    fn series_per_unit(&self) -> usize {
        E::series_per_unit()
    }

    fn unit_count(&self) -> usize {
        Engine::unit_count(self)
    }

    fn statuses(&self) -> Vec<Status> {
        Engine::statuses(self)
    }

    fn model_name(&self) -> Option<&str> {
        Engine::model_name(self)
    }

    fn warnings(&self) -> Vec<String> {
        Engine::warnings(self)
    }

    fn log_series(&self) -> Vec<(&'static Metric, f64)> {
        Engine::log_series(self)
    }

    fn save(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::to_value(self)
    }

    fn restore(&mut self, saved: &serde_json::Value) -> serde_json::Result<()> {
        *self = E::deserialize(saved)?;
        Ok(())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn clone_box(&self) -> Box<dyn EngineState> {
        Box::new(self.clone())
    }

    fn eq_state(&self, other: &dyn EngineState) -> bool {
        other.as_any().downcast_ref::<E>() == Some(self)
    }
}

impl Clone for Box<dyn EngineState> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

impl PartialEq for Box<dyn EngineState> {
    fn eq(&self, other: &Self) -> bool {
        self.eq_state(other.as_ref())
    }
}

/// A fresh state of every engine, for a log just found.
pub fn new_states(setup: &EngineSetup<'_>) -> Vec<Box<dyn EngineState>> {
    struct Make<'a> {
        setup: &'a EngineSetup<'a>,
        states: Vec<Box<dyn EngineState>>,
    }
    impl EngineVisitor for Make<'_> {
        fn visit<E: Engine>(&mut self) {
            self.states.push(Box::new(E::new(self.setup)));
        }
    }
    let mut make = Make {
        setup,
        states: Vec::new(),
    };
    for_each_engine(&mut make);
    make.states
}

/// Every engine's `NAME`, in [`for_each_engine`] order.
pub fn names() -> Vec<&'static str> {
    struct Names(Vec<&'static str>);
    impl EngineVisitor for Names {
        fn visit<E: Engine>(&mut self) {
            self.0.push(E::NAME);
        }
    }
    let mut names = Names(Vec::new());
    for_each_engine(&mut names);
    names.0
}
