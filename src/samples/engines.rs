//! Each engine's series: its catalog table ([`Row`]s) read over its units, with the unit's
//! labels and the log's. A scrape and a push take every unit of every shown log
//! ([`samples`]); a replay, after each record, only the units the record changed
//! ([`unit_samples`]), with label sets kept between records ([`UnitLabelSets`]).

use std::borrow::Borrow;

use crate::catalog::{Metric, Reading, Row};
use crate::engines::parts::liveness::Status;
use crate::engines::{self, Engine, EngineVisitor, Registered, UnitLabels};
use crate::state::{LogState, State, StateSettings};

use super::agent::{agent_labels, engine_log_series};
use super::{total_suffix, LabelSet, SampleSink};

/// Every engine's rows over the units of every shown log, in [`engines::for_each_engine`]
/// order.
pub(super) fn samples(state: &State, out: &mut impl SampleSink) {
    engines::for_each_engine(&mut EngineRows { out, state });
}

/// One engine's catalog table over its units (labels made once), in row order: a family
/// appears only when some unit has a value for it.
fn rows<T, L: Borrow<LabelSet>>(
    out: &mut impl SampleSink,
    table: &'static [Row<T>],
    units: &[(L, &T)],
    status: fn(&T) -> Status,
) {
    for row in table {
        let suffix = total_suffix(&row.metric);
        let name = row.metric.name;
        // The family's header goes before its first sample, if it has one. Nothing is
        // collected first: a replay renders an engine after every stats line, and a
        // collection per row was most of that cost.
        let mut family = PendingFamily {
            metric: &row.metric,
            started: false,
        };
        let shown = units
            .iter()
            .filter(|(_, unit)| row.shown_while_down() || !status(unit).is_down());
        for (common, unit) in shown {
            let common = common.borrow();
            match row.read {
                Reading::One(read) => {
                    if let Some(value) = read(unit) {
                        family.start(out);
                        out.sample(name, suffix, None, common, value);
                    }
                }
                Reading::Labelled(label, read) => {
                    for (label_value, value) in read(unit) {
                        family.start(out);
                        out.sample(name, suffix, Some((label, &label_value)), common, value);
                    }
                }
                Reading::LabelledStatic(label, read) => {
                    for (label_value, value) in read(unit) {
                        family.start(out);
                        out.sample(name, suffix, Some((label, label_value)), common, value);
                    }
                }
                Reading::LabelledOne(label, read) => {
                    if let Some((label_value, value)) = read(unit) {
                        family.start(out);
                        out.sample(name, suffix, Some((label, label_value)), common, value);
                    }
                }
                Reading::Histogram(read) => {
                    let histogram = read(unit);
                    if histogram.count > 0 {
                        family.start(out);
                        out.histogram(name, common, &histogram);
                    }
                }
            }
        }
    }
}

/// A family whose header is written once, before its first sample.
struct PendingFamily {
    metric: &'static Metric,
    started: bool,
}

impl PendingFamily {
    fn start(&mut self, out: &mut impl SampleSink) {
        if !self.started {
            out.family(self.metric);
            self.started = true;
        }
    }
}

/// Writes each engine's rows over the units of every shown log.
struct EngineRows<'a, S> {
    out: &'a mut S,
    state: &'a State,
}

impl<S: SampleSink> EngineVisitor for EngineRows<'_, S> {
    fn visit<E: Registered>(&mut self) {
        let settings = &self.state.settings;
        let mut units = Vec::new();
        for log in self.state.shown_logs() {
            push_units::<E>(&mut units, settings, log);
        }
        rows(self.out, E::TABLE, &units, E::status);
    }
}

/// Each unit of `log`'s engine `E` with its label set.
fn push_units<'a, E: Registered>(
    units: &mut Vec<(LabelSet, &'a E::Unit)>,
    settings: &'a StateSettings,
    log: &'a LogState,
) {
    let engine = log.engine::<E>();
    let own = own_labels::<E>(settings, log);
    for (labels, unit) in engine.labelled_units(&log.view(), settings) {
        debug_assert!(
            labels.iter().all(|(name, _)| E::UNIT_LABELS.contains(name)),
            "{}: a unit label missing from UNIT_LABELS, so not reserved",
            E::NAME
        );
        let pairs = labels.iter().map(|(n, v)| (*n, v.as_str()));
        units.push((LabelSet::new(pairs.chain(own.iter().copied())), unit));
    }
}

/// The log's own labels that go after its units' of engine `E`: less the names the engine's
/// units set (a config cannot name them: they are reserved; this keeps a scrape valid whatever
/// got through).
fn own_labels<'a, E: Engine>(
    settings: &'a StateSettings,
    log: &'a LogState,
) -> Vec<(&'a str, &'a str)> {
    let mut own = log_labels(settings, log);
    own.retain(|(name, _)| !E::UNIT_LABELS.contains(name));
    own
}

/// A log's own labels: its `[[log]] labels`, those its path gave, then the global ones it does
/// not override. Written both ways, `{gpu="0",gpu="all"}` makes Prometheus reject the whole
/// scrape. (A capture of `path_labels` named like a label of either table is refused at
/// start-up, so only the entry's and the global labels can meet here.)
fn log_labels<'a>(settings: &'a StateSettings, log: &'a LogState) -> Vec<(&'a str, &'a str)> {
    let global = settings
        .constant_labels
        .iter()
        .filter(|(name, _)| !log.labels.iter().any(|(own, _)| own == name));
    log.labels
        .iter()
        .chain(&log.path_labels)
        .chain(global)
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect()
}

/// The label sets of one engine's units in one log, kept between a replay's records: made
/// again only when a unit's labels may have changed (a model named, an engine added). Asking
/// the engine for its units' labels after every record was a tenth of a replay.
#[derive(Default)]
pub struct UnitLabelSets {
    /// Whether the units' labels must be asked again: the record may have changed them.
    pub stale: bool,
    /// The log's own labels they were made with.
    own: Vec<(String, String)>,
    /// Each unit's labels, and its label set.
    units: Vec<(UnitLabels, LabelSet)>,
    /// The label set of the log's per-log series.
    agent: LabelSet,
}

impl UnitLabelSets {
    /// Brings the sets up to `units` (each with its labels) and `own` (the log's labels).
    fn update<T>(&mut self, units: &mut [(UnitLabels, &T)], own: &[(&str, &str)]) {
        let same_own = self.own.len() == own.len()
            && self
                .own
                .iter()
                .zip(own)
                .all(|((n, v), (on, ov))| n == on && v == ov);
        if !same_own {
            self.own = own
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect();
            self.units.clear();
        }
        self.units.truncate(units.len());
        for (index, (labels, _)) in units.iter_mut().enumerate() {
            if self
                .units
                .get(index)
                .is_some_and(|(known, _)| known == labels)
            {
                continue;
            }
            let pairs = labels.iter().map(|(n, v)| (*n, v.as_str()));
            let set = LabelSet::new(pairs.chain(own.iter().copied()));
            let labels = std::mem::take(labels);
            match self.units.get_mut(index) {
                Some(known) => *known = (labels, set),
                None => self.units.push((labels, set)),
            }
        }
    }
}

/// Some series of one engine of one log, as a scrape would show them now: for each unit
/// `Some(index)` of `selected` ([`Engine::units`] order), `out.unit(Some(index))` and its rows;
/// for `None`, `out.unit(None)` and the engine's per-log series. Liveness is as last judged.
/// A replay calls this after each record, for what the record changed.
pub fn unit_samples(
    out: &mut impl SampleSink,
    settings: &StateSettings,
    log: &LogState,
    engine: usize,
    selected: &[Option<usize>],
    sets: &mut UnitLabelSets,
) {
    let Some(state) = log.engines.nth(engine) else {
        return;
    };
    if selected.iter().any(Option::is_some) {
        engines::for_each_engine(&mut SomeUnits {
            out: &mut *out,
            settings,
            log,
            name: state.name(),
            selected,
            sets: &mut *sets,
        });
    }
    if !selected.contains(&None) {
        return;
    }
    let series = state.log_series();
    if series.is_empty() {
        return;
    }
    out.unit(None);
    sets.agent.clear();
    sets.agent.extend(agent_labels(log));
    engine_log_series(out, [(&sets.agent, series)]);
}

/// Writes the rows of the engine named `name` over some of one log's units.
struct SomeUnits<'a, S> {
    out: &'a mut S,
    settings: &'a StateSettings,
    log: &'a LogState,
    name: &'static str,
    selected: &'a [Option<usize>],
    sets: &'a mut UnitLabelSets,
}

impl<S: SampleSink> EngineVisitor for SomeUnits<'_, S> {
    fn visit<E: Registered>(&mut self) {
        if E::NAME != self.name {
            return;
        }
        let engine = self.log.engine::<E>();
        // A record that changed one unit (and so no unit's labels: Engine::record_unit)
        // leaves the label sets as they were.
        if self.sets.stale || self.sets.units.len() != engine.unit_count() {
            let mut labelled = engine.labelled_units(&self.log.view(), self.settings);
            let own = own_labels::<E>(self.settings, self.log);
            self.sets.update(&mut labelled, &own);
            self.sets.stale = false;
        }
        for &index in self.selected.iter().flatten() {
            let (Some(unit), Some((_, labels))) =
                (engine.nth_unit(index), self.sets.units.get(index))
            else {
                continue;
            };
            self.out.unit(Some(index));
            rows(self.out, E::TABLE, &[(labels, unit)], E::status);
        }
    }
}
