//! The sample model: every series the agent shows, handed to an output one family and one
//! sample at a time through [`SampleSink`]. Each output is a sink: the exposition text a
//! scrape gets (`exposition::render`), the protobuf series a remote-write round pushes
//! (`remote_write::round`), a replay's per-series history (`backfill::history`). None of them
//! renders text to read it back, and all of them see the same names, labels, values and order.
//!
//! What there is to show comes from the state (each engine's catalog rows over its units,
//! `engines`; the agent's own series per log, `agent`) and from [`SampleSource`]s kept
//! beside it (the remote-write queues' counters), which a lower module cannot know by name.

mod agent;
mod engines;
mod labels;
mod spelling;

use std::sync::Arc;

use crate::catalog::{HistogramView, Metric};
use crate::state::State;

pub use engines::{unit_samples, UnitLabelSets};
pub use labels::LabelSet;
pub use spelling::{push_escaped, push_le, push_value};

/// Where samples go. One row loop feeds every output, so a pushed or replayed series is
/// exactly the series a scrape shows.
pub trait SampleSink {
    /// A family starts (`# HELP`, `# TYPE`); its samples follow.
    fn family(&mut self, metric: &'static Metric);
    /// One sample of the series `name[suffix]{first,common}`.
    fn sample(
        &mut self,
        name: &str,
        suffix: &str,
        first: Option<(&str, &str)>,
        common: &LabelSet,
        value: f64,
    );
    /// A classic histogram's `_sum`, `_count` and cumulative `_bucket`s.
    fn histogram(&mut self, name: &str, common: &LabelSet, histogram: &HistogramView<'_>);
    /// The samples that follow are of the engine's unit `index` (`Engine::units` order), or,
    /// with `None`, its per-log series, and pass one label set, the same each time (a replay's
    /// history compares it once per unit). Only [`unit_samples`] says so; a scrape does not.
    fn unit(&mut self, _index: Option<usize>) {}
}

/// Series kept outside the state (the remote-write queues' counters), which every output
/// reads after the state's.
pub trait SampleSource {
    /// Writes its families, each whole, into `out`.
    fn samples(&self, out: &mut dyn SampleSink);
}

/// The sources beside the state that the server, the pusher and the landing page share.
pub type SharedSources = Arc<[Arc<dyn SampleSource + Send + Sync>]>;

/// Every series in the order a scrape shows them: each engine's rows, the agent's own series,
/// then those of `sources`. Liveness is as last judged.
pub fn all_samples(
    state: &State,
    sources: &[Arc<dyn SampleSource + Send + Sync>],
    out: &mut impl SampleSink,
) {
    engines::samples(state, out);
    agent::samples(state, out);
    for source in sources {
        source.samples(out);
    }
}

/// `_total` for a counter's samples, nothing for the others.
pub fn total_suffix(metric: &Metric) -> &'static str {
    if metric.kind == crate::catalog::Kind::Counter {
        "_total"
    } else {
        ""
    }
}
