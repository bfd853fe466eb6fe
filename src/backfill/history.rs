//! The history a replay builds: every series' samples, kept per series as they come and
//! written once, at the end, as OpenMetrics text that `promtool tsdb create-blocks-from
//! openmetrics` reads.
//!
//! What promtool (2.42, `cmd/promtool/backfill.go`) requires of that text, and why it is
//! written this way:
//! - every sample carries a timestamp ("expected timestamp for series ..., got none"
//!   otherwise), in seconds: the parser (`model/textparse/openmetricsparse.go`) keeps
//!   `int64(ts * 1000)`, truncating, so each timestamp is written so that it truncates to its
//!   own millisecond ([`text`]);
//! - the text ends with `# EOF` ("data does not end with # EOF");
//! - it reads the whole text once per two-hour block and appends each sample to a TSDB head
//!   whose appender refuses a sample older than its series' last one (out of order) and a
//!   second value at the same millisecond (duplicate sample for timestamp): so each series'
//!   samples are written in time order, one per millisecond (the state after the last line of
//!   that millisecond). Families and series are not required to be sorted by name, but
//!   OpenMetrics forbids interleaving families, so each family is written once, its series
//!   together, each series' samples together.
//!
//! A history is held in memory up to [`MEMORY_BUDGET`] of samples; past it, every series'
//! samples so far are spilled to a temporary run file ([`spill`]) and merged back, series by
//! series, when the text is written: a replay's memory does not grow with its log.
//!
//! OpenMetrics has no staleness marker (Prometheus' own is a special NaN only its TSDB
//! writes): a gauge of an engine that went down simply has no more samples, and Prometheus'
//! lookback (5 minutes) ends it.

mod spill;
mod text;

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::Arc;

use crate::catalog::{HistogramView, Metric};
use crate::exposition::render;
use crate::samples::{self, LabelSet, SampleSink};
use text::{SampleLines, Stamps, Text};

/// One series: its text up to the value (`name{labels}`), the parts it was made of (to know
/// it again without writing the text), and its samples (milliseconds since the epoch, value).
struct Series {
    key: String,
    parts: SeriesParts,
    samples: Samples,
}

/// One series' samples, in chunks of [`Samples::CHUNK`]: a vector grown by doubling copied
/// every sample again and again, and took a tenth of a replay.
#[derive(Default)]
struct Samples {
    chunks: Vec<Vec<(i64, f64)>>,
}

impl Samples {
    const CHUNK: usize = 4096;

    /// Adds a sample; a second one in the same millisecond replaces the first (the state
    /// after the last line of that millisecond is the one that stands). Inlined where a
    /// sample is taken (a call there cost 15 instructions a sample).
    #[inline(always)]
    fn push(&mut self, time: i64, value: f64) {
        if let Some(last) = self.chunks.last_mut().and_then(|c| c.last_mut()) {
            if last.0 == time {
                last.1 = value;
                return;
            }
        }
        match self.chunks.last_mut() {
            Some(chunk) if chunk.len() < Self::CHUNK => chunk.push((time, value)),
            _ => {
                let mut chunk = Vec::with_capacity(Self::CHUNK);
                chunk.push((time, value));
                self.chunks.push(chunk);
            }
        }
    }

    fn len(&self) -> usize {
        self.chunks.iter().map(Vec::len).sum()
    }

    fn iter(&self) -> impl Iterator<Item = (i64, f64)> + Clone + '_ {
        self.chunks.iter().flatten().copied()
    }

    /// The first and last time (in order once sorted).
    fn first_and_last(&self) -> Option<(i64, i64)> {
        let first = self.chunks.first()?.first()?.0;
        let last = self.chunks.last()?.last()?.0;
        Some((first, last))
    }

    /// Puts the samples in time order, one per millisecond (a log whose clock went back, or
    /// lines written out of order).
    fn sort(&mut self) {
        let mut previous = i64::MIN;
        if self
            .iter()
            .all(|(time, _)| std::mem::replace(&mut previous, time) <= time)
        {
            return;
        }
        let mut all: Vec<(i64, f64)> = self.iter().collect();
        all.sort_by_key(|s| s.0);
        fold_duplicates(&mut all);
        self.chunks = vec![all];
    }
}

/// What [`SampleSink::sample`] is given for a series, but the label set (its emission's).
/// The name and suffix come from the catalog's statics, so they are known again by address
/// (strings compared by content cost a call each: four per sample were a quarter of a
/// replay's time).
struct SeriesParts {
    name: StaticText,
    suffix: StaticText,
    first: Option<(String, String)>,
}

/// A string known by its address and length, and its text for when the address differs.
struct StaticText {
    address: usize,
    text: String,
}

impl StaticText {
    fn new(text: &str) -> StaticText {
        StaticText {
            address: text.as_ptr() as usize,
            text: text.to_string(),
        }
    }

    #[inline(always)]
    fn is(&self, text: &str) -> bool {
        (self.address == text.as_ptr() as usize && self.text.len() == text.len())
            || self.text == text
    }
}

impl SeriesParts {
    fn new(name: &str, suffix: &str, first: Option<(&str, &str)>) -> SeriesParts {
        SeriesParts {
            name: StaticText::new(name),
            suffix: StaticText::new(suffix),
            first: first.map(|(l, v)| (l.to_string(), v.to_string())),
        }
    }

    /// Whether these are the parts, but for the label set: the caller knows it is the same.
    #[inline(always)]
    fn matches_within(&self, name: &str, suffix: &str, first: Option<(&str, &str)>) -> bool {
        self.name.is(name)
            && self.suffix.is(suffix)
            && match (&self.first, first) {
                (None, None) => true,
                (Some((label, value)), Some((l, v))) => label == l && value == v,
                _ => false,
            }
    }
}

/// One family: its `# HELP` and `# TYPE` lines, and its series in the order first seen.
struct Family {
    header: String,
    series: Vec<usize>,
}

/// A unit that is not the one a record changed is written again after that record only once
/// its last samples are this old (milliseconds): its counters then go on at least as densely
/// as a 15 s scrape's, and its values in between are the ones it had.
pub const UNIT_REWRITTEN_AFTER_MS: i64 = 15_000;

/// The series one unit of one engine of one log (or, with `unit` `None`, that engine's
/// per-log series) wrote last time, in the order it wrote them: the same unit almost always
/// writes the same series in the same order, so a sample is matched to its series by
/// comparing its text with the one at the same place, without a hash lookup.
#[derive(Default)]
struct Emission {
    series: Vec<usize>,
    /// The label set they share (a unit's), which every series in `series` has.
    common: String,
    /// When it was last written, in milliseconds.
    written_at: Option<i64>,
}

/// One engine of one log: its units' emissions, and its per-log series'.
struct Group {
    log: Arc<str>,
    engine: usize,
    units: Vec<Emission>,
    log_series: Emission,
}

/// How many bytes of samples a history holds in memory before it spills them to a run file:
/// with the rest of a replay (the reader's buffers, the state, the series' text) well under
/// 64 MB, and a run every 2 million samples, so that a replay's runs stay few (the merge
/// reads all of them at once).
pub const MEMORY_BUDGET: usize = 32 << 20;

/// Bytes a sample takes in memory, for the budget.
const SAMPLE_BYTES: usize = std::mem::size_of::<(i64, f64)>();

/// The samples spilled so far, and when to spill next.
struct Spill {
    /// Samples taken between two spills (the budget in samples).
    every: u64,
    /// [`History::samples_taken`] at the last spill.
    taken_before: u64,
    runs: spill::Runs,
    /// How many times samples were spilled: from the first, the times are no longer
    /// gathered for [`Stamps`] (they grow with the log).
    spills: usize,
    /// The first failure to spill: returned by [`History::write`].
    error: Option<io::Error>,
}

impl Spill {
    fn new(budget_bytes: usize) -> Spill {
        Spill {
            every: (budget_bytes / SAMPLE_BYTES).max(1) as u64,
            taken_before: 0,
            runs: spill::Runs::default(),
            spills: 0,
            error: None,
        }
    }
}

impl Default for Spill {
    fn default() -> Spill {
        Spill::new(MEMORY_BUDGET)
    }
}

/// Every series' samples so far. Fed through [`SampleSink`], after [`History::begin`].
#[derive(Default)]
pub struct History {
    families: Vec<Family>,
    family_of: HashMap<&'static str, usize>,
    series: Vec<Series>,
    series_of: HashMap<String, usize>,
    groups: Vec<Group>,
    /// The group being written, its unit (`None`: its per-log series), whether that
    /// emission has begun, and how many samples it has written so far.
    current: usize,
    unit: Option<usize>,
    open: bool,
    position: usize,
    /// The address and length of the label set the emission's samples were last found to
    /// share with it: the samples of one emission pass the same text, so it is compared
    /// once per emission rather than once per sample.
    common_checked: Option<(usize, usize)>,
    /// The time of the samples being written, in milliseconds.
    time: i64,
    /// The family of the samples being written.
    family: Option<&'static Metric>,
    /// The text of a new sample's series, up to its value.
    key: String,
    /// Samples taken (before duplicates within a millisecond were folded).
    pub samples_taken: u64,
    /// Every time samples were taken at, in the order first met (in time order, but for a
    /// log whose clock went back or a second log); none once spilled.
    times: Vec<i64>,
    spill: Spill,
}

impl History {
    /// A history that holds at most `budget_bytes` of samples in memory ([`MEMORY_BUDGET`]
    /// by default).
    pub fn with_memory_budget(budget_bytes: usize) -> History {
        History {
            spill: Spill::new(budget_bytes),
            ..History::default()
        }
    }

    /// How many times the samples held were spilled to a temporary file.
    pub fn spills(&self) -> usize {
        self.spill.spills
    }

    /// Series of `engine` of `log` at `time` (seconds since the epoch) follow. Returns the
    /// engine's index among those written, and puts in `due` what to write: of its
    /// `unit_count` units, `changed` (the only one the record changed) and the others not
    /// written for [`UNIT_REWRITTEN_AFTER_MS`], and its per-log series (`None`) if not written
    /// for that long either; everything when the record may have changed several units.
    pub fn begin(
        &mut self,
        log: &Arc<str>,
        engine: usize,
        time: f64,
        units: (usize, Option<usize>),
        due: &mut Vec<Option<usize>>,
    ) -> usize {
        let (unit_count, changed) = units;
        self.time = (time * 1000.0).round() as i64;
        if self.spill.spills == 0 && self.times.last() != Some(&self.time) {
            self.times.push(self.time);
        }
        self.unit = None;
        self.open = false;
        self.position = 0;
        self.common_checked = None;
        self.current = self.group(log, engine);
        let now = self.time;
        let stale = |emission: &Emission| {
            emission
                .written_at
                .is_none_or(|at| now - at >= UNIT_REWRITTEN_AFTER_MS)
        };
        let group = &mut self.groups[self.current];
        group
            .units
            .resize_with(unit_count.max(group.units.len()), Emission::default);
        due.clear();
        for (index, emission) in group.units.iter().enumerate().take(unit_count) {
            if changed.is_none_or(|c| c == index) || stale(emission) {
                due.push(Some(index));
            }
        }
        if changed.is_none() || stale(&group.log_series) {
            due.push(None);
        }
        self.current
    }

    /// The index of `engine` of `log` among the groups, made if new.
    fn group(&mut self, log: &Arc<str>, engine: usize) -> usize {
        let known = self
            .groups
            .iter()
            .position(|g| g.engine == engine && (Arc::ptr_eq(&g.log, log) || g.log == *log));
        known.unwrap_or_else(|| {
            self.groups.push(Group {
                log: Arc::clone(log),
                engine,
                units: Vec::new(),
                log_series: Emission::default(),
            });
            self.groups.len() - 1
        })
    }

    /// The emission being written.
    fn emission(&mut self) -> &mut Emission {
        let group = &mut self.groups[self.current];
        match self.unit {
            Some(index) => &mut group.units[index],
            None => &mut group.log_series,
        }
    }

    /// The series begun are complete. Spills the samples held once over the budget (checked
    /// here, once per record, rather than for every sample).
    pub fn end(&mut self) {
        self.end_emission();
        if self.samples_taken - self.spill.taken_before >= self.spill.every {
            self.spill_samples();
        }
    }

    /// Writes every series' samples held to a new run and lets them go. A failure is kept for
    /// [`History::write`] to return, and the samples are let go all the same: the history
    /// cannot be written whole any more, and memory must not grow.
    #[cold]
    #[inline(never)]
    fn spill_samples(&mut self) {
        self.spill.taken_before = self.samples_taken;
        self.spill.spills += 1;
        self.times = Vec::new();
        if self.spill.error.is_none() {
            if let Err(error) = self.write_run() {
                self.spill.error = Some(error);
            }
        }
        for series in &mut self.series {
            series.samples = Samples::default();
        }
    }

    /// Writes a run: the series with samples, in output order, each in time order.
    fn write_run(&mut self) -> io::Result<()> {
        let order: Vec<usize> = self
            .families
            .iter()
            .flat_map(|f| f.series.iter().copied())
            .collect();
        let mut run = spill::Runs::start()?;
        for &id in &order {
            let samples = &mut self.series[id].samples;
            samples.sort();
            let Some((first, last)) = samples.first_and_last() else {
                continue;
            };
            let count = samples.len() as u64;
            let block = spill::Block {
                id,
                count,
                first,
                last,
            };
            run.block(block, samples.iter())?;
        }
        self.spill.runs.finish(run, &order)
    }

    /// The emission being written is complete: a series it no longer writes is dropped from
    /// its order (a gauge of an engine that went down).
    fn end_emission(&mut self) {
        if !std::mem::replace(&mut self.open, false) {
            return;
        }
        let (position, time) = (self.position, self.time);
        let emission = self.emission();
        emission.series.truncate(position);
        emission.written_at = Some(time);
    }

    /// The series of a sample when it is the one at the same place in this unit's last
    /// emission, and the emission's label set was already found to be the sample's.
    #[inline(always)]
    fn known_series(
        &mut self,
        name: &str,
        suffix: &str,
        first: Option<(&str, &str)>,
        common: &str,
    ) -> Option<usize> {
        if self.common_checked != Some((common.as_ptr() as usize, common.len())) {
            return None;
        }
        let position = self.position;
        let id = *self.emission().series.get(position)?;
        self.series[id]
            .parts
            .matches_within(name, suffix, first)
            .then_some(id)
    }

    /// The series of a sample, made if new: the one at the same place in this unit's last
    /// emission if it is the same, else found by its text.
    #[inline(never)]
    fn series_for(
        &mut self,
        name: &str,
        suffix: &str,
        first: Option<(&str, &str)>,
        common: &str,
    ) -> usize {
        self.open = true;
        let position = self.position;
        let common_at = Some((common.as_ptr() as usize, common.len()));
        if self.common_checked != common_at {
            let emission = self.emission();
            if emission.common != common {
                // A unit's labels changed (or a caller mixes label sets): its order is
                // learnt again.
                emission.common = common.to_string();
                emission.series.clear();
            }
            self.common_checked = common_at;
        }
        if let Some(&id) = self.emission().series.get(position) {
            if self.series[id].parts.matches_within(name, suffix, first) {
                return id;
            }
        }
        self.key.clear();
        render::push_series(&mut self.key, name, suffix, first, common);
        let id = match self.series_of.get(&self.key) {
            Some(&id) => id,
            None => self.new_series(SeriesParts::new(name, suffix, first)),
        };
        let emission = self.emission();
        if position < emission.series.len() {
            emission.series[position] = id;
        } else {
            emission.series.push(id);
        }
        id
    }

    fn new_series(&mut self, parts: SeriesParts) -> usize {
        let id = self.series.len();
        self.series.push(Series {
            key: self.key.clone(),
            parts,
            samples: Samples::default(),
        });
        self.series_of.insert(self.key.clone(), id);
        let metric = self.family.expect("a sample comes after its family");
        let family = match self.family_of.get(metric.name) {
            Some(&family) => family,
            None => {
                self.families.push(Family {
                    header: render::family_header(metric, render::Format::OpenMetrics),
                    series: Vec::new(),
                });
                self.family_of.insert(metric.name, self.families.len() - 1);
                self.families.len() - 1
            }
        };
        self.families[family].series.push(id);
        id
    }

    /// Takes `value` for the series `id`.
    #[inline(always)]
    fn take(&mut self, id: usize, value: f64) {
        self.position += 1;
        self.samples_taken += 1;
        let time = self.time;
        self.series[id].samples.push(time, value);
    }

    pub fn series_count(&self) -> usize {
        self.series.len()
    }

    /// Writes the OpenMetrics text: each family once, its series, each series' samples in
    /// time order, `# EOF`. Returns how many samples it wrote: one per series and millisecond.
    pub fn write(mut self, out: &mut dyn Write) -> io::Result<usize> {
        if let Some(error) = self.spill.error.take() {
            return Err(error);
        }
        let mut runs = std::mem::take(&mut self.spill.runs).into_readers()?;
        // Once spilled, no times were kept: each is formatted as it is written.
        let stamps = Stamps::new(std::mem::take(&mut self.times));
        let mut text = Text::new(out);
        let mut written = 0;
        let mut batch = Vec::with_capacity(Samples::CHUNK);
        for family in &self.families {
            text.push(family.header.as_bytes())?;
            for &id in &family.series {
                let series = &mut self.series[id];
                // A log whose clock went back (or lines written out of order) is put in order.
                series.samples.sort();
                let mut lines = SampleLines::new(&series.key, &stamps);
                if runs.is_empty() {
                    for chunk in &series.samples.chunks {
                        lines.write(&mut text, chunk)?;
                    }
                    written += series.samples.len();
                } else {
                    // Merged a chunk at a time into a batch of their own, so that one loop
                    // writes samples of either kind: with two, its calls were no longer
                    // inlined, 20 instructions more per sample.
                    let memory = series.samples.iter();
                    written += spill::merge_folded(id, &mut runs, memory, |time, value| {
                        batch.push((time, value));
                        if batch.len() == Samples::CHUNK {
                            lines.write(&mut text, &batch)?;
                            batch.clear();
                        }
                        Ok(())
                    })?;
                    lines.write(&mut text, &batch)?;
                    batch.clear();
                }
            }
        }
        text.push(b"# EOF\n")?;
        text.finish()?;
        Ok(written)
    }
}

/// Keeps the last of the samples that share a millisecond (sorted, stable).
fn fold_duplicates(samples: &mut Vec<(i64, f64)>) {
    let mut kept: Vec<(i64, f64)> = Vec::with_capacity(samples.len());
    for &sample in samples.iter() {
        match kept.last_mut() {
            Some(last) if last.0 == sample.0 => *last = sample,
            _ => kept.push(sample),
        }
    }
    *samples = kept;
}

impl SampleSink for History {
    fn family(&mut self, metric: &'static Metric) {
        self.family = Some(metric);
    }

    fn unit(&mut self, index: Option<usize>) {
        self.end_emission();
        self.unit = index;
        self.open = true;
        self.position = 0;
        self.common_checked = None;
    }

    /// Inlined where samples are taken, with the usual case first ([`History::known_series`]):
    /// a call per sample, its registers saved and restored, was a sixth of its cost.
    #[inline(always)]
    fn sample(
        &mut self,
        name: &str,
        suffix: &str,
        first: Option<(&str, &str)>,
        common: &LabelSet,
        value: f64,
    ) {
        let common = common.text();
        let id = match self.known_series(name, suffix, first, common) {
            Some(id) => id,
            None => self.series_for(name, suffix, first, common),
        };
        self.take(id, value);
    }

    fn histogram(&mut self, name: &str, common: &LabelSet, histogram: &HistogramView<'_>) {
        self.sample(name, "_sum", None, common, histogram.sum);
        self.sample(name, "_count", None, common, histogram.count as f64);
        let mut cumulative = 0;
        let mut le = String::new();
        let bounds = histogram.bounds.iter().copied().chain([f64::INFINITY]);
        let counts = histogram.counts.iter().copied().chain(std::iter::repeat(0));
        for (bound, count) in bounds.zip(counts) {
            cumulative += count;
            le.clear();
            samples::push_le(&mut le, bound, histogram.le);
            self.sample(
                name,
                "_bucket",
                Some(("le", &le)),
                common,
                cumulative as f64,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_keeps_one_sample_per_millisecond_in_time_order() {
        let mut samples = Samples::default();
        for (time, value) in [(3, 1.0), (3, 7.0), (1, 2.0), (3, 4.0), (2, 5.0), (1, 6.0)] {
            samples.push(time, value);
        }
        samples.sort();
        let sorted: Vec<_> = samples.iter().collect();
        assert_eq!(sorted, vec![(1, 6.0), (2, 5.0), (3, 4.0)]);
        // Across chunks, in order: kept as they are.
        let mut many = Samples::default();
        let count = i64::try_from(Samples::CHUNK * 2 + 5).unwrap();
        for time in 0..count {
            many.push(time, time as f64);
        }
        many.sort();
        assert_eq!(many.len(), Samples::CHUNK * 2 + 5);
        assert!(many.iter().enumerate().all(|(i, (t, _))| t == i as i64));
    }
}
