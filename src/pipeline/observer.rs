//! The hook `llmtail replay` hangs its history on: told of every record as the state takes it.

use crate::state::{LogState, StateSettings};

/// Told of every record a log's engine took, once the state holds it (`llmtail replay`
/// writes the series that engine shows at that moment). `unit` is the only unit of the engine
/// the record changed, when it changed only one
/// ([`EngineStates::record_unit`](crate::engines::EngineStates::record_unit)); `line_time` is
/// when the record says it was written, if it says.
pub trait RecordObserver: Send {
    fn applied(&mut self, log: &mut LogState, applied: Applied, settings: &StateSettings);
}

/// A record a log's engine took, as [`RecordObserver::applied`] is told of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Applied {
    /// The engine's index in the log's `engines`.
    pub engine: usize,
    pub unit: Option<usize>,
    pub line_time: Option<f64>,
}
