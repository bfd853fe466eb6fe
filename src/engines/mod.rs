//! The engines on the agent's side, and their one registry.
//!
//! What a log's lines of one engine have said is that engine's state in the log (a
//! [`vllm::VllmLog`], a [`trtllm::TrtllmLog`]): it implements [`Engine`], which says how its
//! records change it, how it is judged up or down, which units (a vLLM engine, a TensorRT-LLM
//! rank) carry series and with which labels, which series table names them, how it is saved in
//! the state file and shown on the landing page. An engine is one folder here,
//! `src/engines/<engine>/` (its state in `mod.rs`, its series table in `series.rs`), beside
//! its grammar's `grammars/src/<engine>/`; what several engines build their states from is in
//! [`parts`].
//!
//! The list of engines is the grammars' [`llmtail_grammars::with_engines!`]: it declares the
//! modules here, [`EngineStates`] (one state per engine, in one log) and the dispatch of a
//! record to the engine whose record it is. The pipeline, the state file, the exposition and the
//! landing page know engines only through [`Engine`], [`EngineState`] and [`for_each_engine`].
//!
//! # Adding an engine
//! 1. Grammar: `grammars/src/<engine>/` with its `GRAMMAR: EngineGrammar` and `EngineRecord`,
//!    and one line in `with_engines!` (`grammars/src/lib.rs`); line cases in
//!    `fixtures/cases/<engine>*.toml`, citing where each line comes from.
//! 2. State: `src/engines/<engine>/mod.rs`, a state that implements [`Engine`] (its `NAME` is
//!    the grammar's `engine`, its `Record` the grammar's `EngineRecord`), named `State` there.
//! 3. Series: `src/engines/<engine>/series.rs`, the table of its series (`&[Row<Unit>]`,
//!    native names where the engine's own exporter means the same, else `llmtail_<engine>_`),
//!    [`Engine::TABLE`].
//! 4. Fixtures: a replay log and its golden, `fixtures/replay/<engine>-<version>-<case>.log`
//!    and `.prom`, and the engine's row in `fixtures/README.md`. `tests/registry.rs` fails
//!    while any of these is missing.
//!
//! The state file keeps each engine's state as one value under its `NAME`, in the engine's own
//! serde form: a renamed field is a new state-file version (see `checkpoint`).

pub mod engine;
pub mod families;
pub mod parts;

use std::fmt::Debug;

use llmtail_grammars::{Parsed, Record};

use crate::catalog::Metric;
use parts::caps::{Refused, SPEC_POSITIONS};
use parts::liveness::Status;
use parts::settings::StateSettings;

pub use engine::{
    ApplyContext, Charted, ChartedSeries, Engine, EngineSetup, Landing, LandingCell, LogView,
    UnitLabels,
};

/// The agent's side of the list of engines: each engine's module, its place in
/// [`EngineStates`], and the dispatch of a record to it.
macro_rules! engine_registry {
    ($($engine:ident $Variant:ident,)*) => {
        $(pub mod $engine;)*

        /// Each engine's place in [`for_each_engine`] order.
        #[derive(Debug, Clone, Copy)]
        enum EngineIndex {
            $($Variant,)*
        }

        /// What one log's lines have said, one state per engine, in [`for_each_engine`] order.
        #[derive(Debug, Clone, PartialEq)]
        pub struct EngineStates {
            $(pub $engine: $engine::State,)*
        }

        $(impl Registered for $engine::State {
            const INDEX: usize = EngineIndex::$Variant as usize;

            fn of(states: &EngineStates) -> &Self {
                &states.$engine
            }

            fn of_mut(states: &mut EngineStates) -> &mut Self {
                &mut states.$engine
            }
        })*

        /// What one unit of each engine costs against `--max-series`, in [`for_each_engine`]
        /// order.
        static SERIES_COSTS: std::sync::LazyLock<Vec<usize>> = std::sync::LazyLock::new(|| {
            vec![$(<$engine::State as Engine>::series_per_unit(),)*]
        });

        /// Every engine, in exposition order.
        pub fn for_each_engine(visitor: &mut impl EngineVisitor) {
            $(visitor.visit::<$engine::State>();)*
        }

        impl EngineStates {
            /// A fresh state of every engine, for a log just found.
            pub fn new(setup: &EngineSetup<'_>) -> Self {
                EngineStates {
                    $($engine: <$engine::State as Engine>::new(setup),)*
                }
            }

            /// Every engine's state, in [`for_each_engine`] order.
            pub fn iter(&self) -> impl Iterator<Item = &dyn EngineState> {
                [$(&self.$engine as &dyn EngineState,)*].into_iter()
            }

            /// Every engine's state, to change.
            pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut dyn EngineState> {
                [$(&mut self.$engine as &mut dyn EngineState,)*].into_iter()
            }

            /// Applies `parsed` to the engine whose record it is: that engine's index (in
            /// [`for_each_engine`] order) and its own part of the record's context.
            pub fn apply(
                &mut self,
                parsed: &Parsed<'_>,
                line_time: Option<f64>,
                log: &LogContext<'_>,
            ) -> Applied {
                match &parsed.record {
                    $(Record::$Variant(record) => {
                        apply_to(&mut self.$engine, record, parsed, line_time, log)
                    })*
                }
            }

            /// The unit a record just applied changed ([`Engine::record_unit`]).
            pub fn record_unit(&self, parsed: &Parsed<'_>) -> Option<usize> {
                match &parsed.record {
                    $(Record::$Variant(record) => self.$engine.record_unit(record, parsed),)*
                }
            }
        }
    };
}

llmtail_grammars::with_engines!(engine_registry);

/// Something done once per engine type (render its rows, make its state, list its metrics).
pub trait EngineVisitor {
    fn visit<E: Registered>(&mut self);
}

/// An engine in the registry: what [`engine_registry`] gives every [`Engine`].
pub trait Registered: Engine {
    /// Its index in [`for_each_engine`] order.
    const INDEX: usize;
    fn of(states: &EngineStates) -> &Self;
    fn of_mut(states: &mut EngineStates) -> &mut Self;
}

/// What applying one record did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Applied {
    /// The engine whose record it was, in [`for_each_engine`] order.
    pub engine: usize,
    /// Refused by a cap: nothing past it was created.
    pub outcome: Result<(), Refused>,
    /// What the log's units of that engine cost against `--max-series` before and after.
    pub series_before: usize,
    pub series_after: usize,
}

/// Applies a record to the engine whose record it is, and says what its units cost before and
/// after (a model change clears units: the cost goes down as well as up).
fn apply_to<E: Registered>(
    engine: &mut E,
    record: &E::Record<'_>,
    parsed: &Parsed<'_>,
    line_time: Option<f64>,
    log: &LogContext<'_>,
) -> Applied {
    let cost = series_cost::<E>();
    let series_before = engine.unit_count() * cost;
    let context = ApplyContext {
        settings: log.settings,
        may_grow: log.series + cost <= log.settings.series.max_series,
        log: log.label,
    };
    let outcome = engine.apply(record, parsed, line_time, &context);
    Applied {
        engine: E::INDEX,
        outcome,
        series_before,
        series_after: engine.unit_count() * cost,
    }
}

/// What the dispatch of a record needs of its log and of the agent.
pub struct LogContext<'a> {
    pub settings: &'a StateSettings,
    /// What every log's units cost against `--max-series` now.
    pub series: usize,
    /// The log's label.
    pub label: &'a str,
}

/// What one unit of `E` costs against `--max-series` ([`Engine::series_per_unit`], worked
/// out once: it is asked for every record).
pub fn series_cost<E: Registered>() -> usize {
    SERIES_COSTS[E::INDEX]
}

/// What every engine's state can be asked without knowing which engine it is: the state
/// file, judging, the `--max-series` count and the landing page's summary go through this.
pub trait EngineState: Debug + Send + Sync {
    fn name(&self) -> &'static str;
    fn judge(&mut self, now: f64, settings: &StateSettings);
    fn reconfigure(&mut self, setup: &EngineSetup<'_>);
    /// What one unit costs against `--max-series`.
    fn series_per_unit(&self) -> usize;
    /// How many units there are: each costs [`EngineState::series_per_unit`].
    fn unit_count(&self) -> usize;
    fn statuses(&self) -> Vec<Status>;
    fn model_name(&self) -> Option<&str>;
    fn warnings(&self) -> Vec<String>;
    fn log_series(&self) -> Vec<(&'static Metric, f64)>;
    fn save(&self) -> serde_json::Result<serde_json::Value>;
    fn restore(&mut self, saved: &serde_json::Value) -> serde_json::Result<()>;
}

impl<E: Registered> EngineState for E {
    fn name(&self) -> &'static str {
        E::NAME
    }

    fn judge(&mut self, now: f64, settings: &StateSettings) {
        Engine::judge(self, now, settings);
    }

    fn reconfigure(&mut self, setup: &EngineSetup<'_>) {
        Engine::reconfigure(self, setup);
    }

    fn series_per_unit(&self) -> usize {
        series_cost::<E>()
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
}

impl EngineStates {
    /// The state of engine `E`.
    pub fn get<E: Registered>(&self) -> &E {
        E::of(self)
    }

    /// The state of engine `E`, to change.
    pub fn get_mut<E: Registered>(&mut self) -> &mut E {
        E::of_mut(self)
    }

    /// The state of the engine at `index` in [`for_each_engine`] order.
    pub fn nth(&self, index: usize) -> Option<&dyn EngineState> {
        self.iter().nth(index)
    }

    /// The state of the engine at `index`, to change.
    pub fn nth_mut(&mut self, index: usize) -> Option<&mut dyn EngineState> {
        self.iter_mut().nth(index)
    }

    /// What the log's units cost against `--max-series`.
    pub fn series(&self) -> usize {
        self.iter()
            .map(|engine| engine.unit_count() * engine.series_per_unit())
            .sum()
    }
}

/// How users name every engine, in [`for_each_engine`] order: "vLLM, TensorRT-LLM, ...".
pub fn display_names() -> String {
    struct Names(Vec<&'static str>);
    impl EngineVisitor for Names {
        fn visit<E: Registered>(&mut self) {
            self.0.push(E::DISPLAY_NAME);
        }
    }
    let mut names = Names(Vec::new());
    for_each_engine(&mut names);
    names.0.join(", ")
}

/// Every engine's per-log caps, for `--help`: "a TensorRT-LLM rank: 4096; ...".
pub fn caps_text() -> String {
    struct Caps(Vec<String>);
    impl EngineVisitor for Caps {
        fn visit<E: Registered>(&mut self) {
            let caps = E::CAPS.iter();
            self.0
                .extend(caps.map(|cap| format!("{}: {}", cap.what, cap.cap)));
        }
    }
    let mut caps = Caps(Vec::new());
    for_each_engine(&mut caps);
    caps.0.push(format!("draft positions: {SPEC_POSITIONS}"));
    caps.0.join("; ")
}
