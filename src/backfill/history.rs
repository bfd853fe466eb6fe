//! The history a replay builds: every series' samples, kept per series as they come and
//! written once, at the end, as OpenMetrics text that `promtool tsdb create-blocks-from
//! openmetrics` reads.
//!
//! What promtool (2.42, `cmd/promtool/backfill.go`) requires of that text, and why it is
//! written this way:
//! - every sample carries a timestamp ("expected timestamp for series ..., got none"
//!   otherwise), in seconds: the parser (`model/textparse/openmetricsparse.go`) keeps
//!   `int64(ts * 1000)`, truncating, so each timestamp is written so that it truncates to its
//!   own millisecond ([`push_timestamp`]);
//! - the text ends with `# EOF` ("data does not end with # EOF");
//! - it reads the whole text once per two-hour block and appends each sample to a TSDB head
//!   whose appender refuses a sample older than its series' last one (out of order) and a
//!   second value at the same millisecond (duplicate sample for timestamp): so each series'
//!   samples are written in time order, one per millisecond (the state after the last line of
//!   that millisecond). Families and series are not required to be sorted by name, but
//!   OpenMetrics forbids interleaving families, so each family is written once, its series
//!   together, each series' samples together.
//!
//! OpenMetrics has no staleness marker (Prometheus' own is a special NaN only its TSDB
//! writes): a gauge of an engine that went down simply has no more samples, and Prometheus'
//! lookback (5 minutes) ends it.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;
use std::sync::Arc;

use crate::catalog::{HistogramView, Metric};
use crate::exposition::render::{self, SampleSink};

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
    /// after the last line of that millisecond is the one that stands).
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

    fn iter(&self) -> impl Iterator<Item = (i64, f64)> + '_ {
        self.chunks.iter().flatten().copied()
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

/// What [`SampleSink::sample`] is given for a series. The name and suffix come from the
/// catalog's statics, so they are known again by address (strings compared by content cost a
/// call each: four per sample were a quarter of a replay's time).
struct SeriesParts {
    name: StaticText,
    suffix: StaticText,
    first: Option<(String, String)>,
    common: String,
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

    fn is(&self, text: &str) -> bool {
        (self.address == text.as_ptr() as usize && self.text.len() == text.len())
            || self.text == text
    }
}

impl SeriesParts {
    fn new(name: &str, suffix: &str, first: Option<(&str, &str)>, common: &str) -> SeriesParts {
        SeriesParts {
            name: StaticText::new(name),
            suffix: StaticText::new(suffix),
            first: first.map(|(l, v)| (l.to_string(), v.to_string())),
            common: common.to_string(),
        }
    }

    fn matches(&self, name: &str, suffix: &str, first: Option<(&str, &str)>, common: &str) -> bool {
        self.name.is(name)
            && self.suffix.is(suffix)
            && match (&self.first, first) {
                (None, None) => true,
                (Some((label, value)), Some((l, v))) => label == l && value == v,
                _ => false,
            }
            && self.common == common
    }
}

/// One family: its `# HELP` and `# TYPE` lines, and its series in the order first seen.
struct Family {
    header: String,
    series: Vec<usize>,
}

/// The series one engine of one log wrote last time, in the order it wrote them: the same
/// engine almost always writes the same series in the same order, so a sample is matched to
/// its series by comparing its text with the one at the same place, without a hash lookup.
struct Emission {
    log: Arc<str>,
    engine: usize,
    series: Vec<usize>,
}

/// Every series' samples so far. Fed through [`SampleSink`], between [`History::begin`] and
/// [`History::end`].
#[derive(Default)]
pub struct History {
    families: Vec<Family>,
    family_of: HashMap<&'static str, usize>,
    series: Vec<Series>,
    series_of: HashMap<String, usize>,
    emissions: Vec<Emission>,
    /// The emission being written: its index in `emissions`, and how many samples it has
    /// written so far.
    current: usize,
    position: usize,
    /// The time of the samples being written, in milliseconds.
    time: i64,
    /// The family of the samples being written.
    family: Option<Metric>,
    /// The text of a new sample's series, up to its value.
    key: String,
    /// Samples taken (before duplicates within a millisecond were folded).
    pub samples_taken: u64,
}

impl History {
    /// The series `engine` of `log` shows at `time` (seconds since the epoch) follow.
    pub fn begin(&mut self, log: &Arc<str>, engine: usize, time: f64) {
        self.time = (time * 1000.0).round() as i64;
        self.position = 0;
        self.current = match self
            .emissions
            .iter()
            .position(|e| e.engine == engine && (Arc::ptr_eq(&e.log, log) || e.log == *log))
        {
            Some(at) => at,
            None => {
                self.emissions.push(Emission {
                    log: Arc::clone(log),
                    engine,
                    series: Vec::new(),
                });
                self.emissions.len() - 1
            }
        };
    }

    /// The emission begun is complete: a series it no longer writes is dropped from its
    /// order (a unit gone, a gauge of an engine that went down).
    pub fn end(&mut self) {
        let emission = &mut self.emissions[self.current];
        emission.series.truncate(self.position);
    }

    /// The series of a sample, made if new: the one at the same place in this engine's last
    /// emission if it is the same, else found by its text.
    fn series_for(
        &mut self,
        name: &str,
        suffix: &str,
        first: Option<(&str, &str)>,
        common: &str,
    ) -> usize {
        let emission = &self.emissions[self.current];
        if let Some(&id) = emission.series.get(self.position) {
            if self.series[id].parts.matches(name, suffix, first, common) {
                return id;
            }
        }
        self.key.clear();
        render::push_series(&mut self.key, name, suffix, first, common);
        let id = match self.series_of.get(&self.key) {
            Some(&id) => id,
            None => self.new_series(SeriesParts::new(name, suffix, first, common)),
        };
        let emission = &mut self.emissions[self.current];
        if self.position < emission.series.len() {
            emission.series[self.position] = id;
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
                    header: render::family_header(&metric, render::Format::OpenMetrics),
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
    fn take(&mut self, id: usize, value: f64) {
        self.position += 1;
        self.samples_taken += 1;
        let time = self.time;
        self.series[id].samples.push(time, value);
    }

    pub fn series_count(&self) -> usize {
        self.series.len()
    }

    /// Samples as written: one per series and millisecond.
    pub fn sample_count(&self) -> usize {
        self.series.iter().map(|s| s.samples.len()).sum()
    }

    /// Writes the OpenMetrics text: each family once, its series, each series' samples in
    /// time order, `# EOF`.
    pub fn write(mut self, out: &mut dyn Write) -> std::io::Result<()> {
        let mut text = String::with_capacity(1 << 20);
        let mut digits = Digits::default();
        let mut value_text = String::new();
        for family in &self.families {
            text.push_str(&family.header);
            for &id in &family.series {
                let series = &mut self.series[id];
                // A log whose clock went back (or lines written out of order) is put in order.
                series.samples.sort();
                // A series' value is often the one before (a counter at rest, an engine's
                // gauges written again at the other engine's lines): its digits are kept
                // rather than formatted again (formatting was a fifth of a replay).
                let mut last_value: Option<u64> = None;
                for (time, value) in series.samples.iter() {
                    text.push_str(&series.key);
                    text.push(' ');
                    if last_value != Some(value.to_bits()) {
                        value_text.clear();
                        push_value(&mut value_text, value, &mut digits);
                        last_value = Some(value.to_bits());
                    }
                    text.push_str(&value_text);
                    text.push(' ');
                    push_timestamp(&mut text, time, &mut digits);
                    text.push('\n');
                    if text.len() >= 1 << 20 {
                        out.write_all(text.as_bytes())?;
                        text.clear();
                    }
                }
            }
        }
        text.push_str("# EOF\n");
        out.write_all(text.as_bytes())?;
        out.flush()
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

/// A value as the exposition spells it ([`render::push_value`]), without going through
/// `core::fmt` (a tenth of a replay's time): whole numbers (most values: requests, tokens,
/// times) with itoa, the others with ryu (the same shortest digits).
fn push_value(out: &mut String, value: f64, digits: &mut Digits) {
    // Below 2^53 every whole number is exact; -0.0 keeps its sign through ryu. (A round trip
    // through i64 rather than `fract()`, which calls libm's trunc for every value.)
    let whole = value as i64;
    if whole as f64 == value && value.abs() < 9.0e15 && value.is_sign_positive() {
        out.push_str(digits.integer.format(whole));
        out.push_str(".0");
    } else if value.is_finite() {
        out.push_str(digits.float.format_finite(value));
    } else {
        render::push_value(out, value);
    }
}

/// The formatters' buffers.
#[derive(Default)]
struct Digits {
    integer: itoa::Buffer,
    float: ryu::Buffer,
}

/// A timestamp in seconds that Prometheus' OpenMetrics parser reads back as `millis`: it
/// keeps `int64(seconds * 1000)`, so `1768903200.123` could come back as ...122 (the nearest
/// double to it is a hair below). Such a time gets one more digit, half a millisecond, which
/// truncates to the right one.
fn push_timestamp(out: &mut String, millis: i64, digits: &mut Digits) {
    let (seconds, fraction) = (millis.div_euclid(1000), millis.rem_euclid(1000));
    let start = out.len();
    out.push_str(digits.integer.format(seconds));
    if fraction == 0 {
        return;
    }
    let _ = write!(out, ".{fraction:03}");
    let read_back = out[start..].parse::<f64>().map(|s| (s * 1000.0) as i64);
    if read_back != Ok(millis) {
        out.push('5');
    }
}

impl SampleSink for History {
    fn family(&mut self, metric: &Metric) {
        self.family = Some(*metric);
    }

    fn sample(
        &mut self,
        name: &str,
        suffix: &str,
        first: Option<(&str, &str)>,
        common: &str,
        value: f64,
    ) {
        let id = self.series_for(name, suffix, first, common);
        self.take(id, value);
    }

    fn histogram(&mut self, name: &str, common: &str, histogram: &HistogramView<'_>) {
        self.sample(name, "_sum", None, common, histogram.sum);
        self.sample(name, "_count", None, common, histogram.count as f64);
        let mut cumulative = 0;
        let mut le = String::new();
        let bounds = histogram.bounds.iter().copied().chain([f64::INFINITY]);
        let counts = histogram.counts.iter().copied().chain(std::iter::repeat(0));
        for (bound, count) in bounds.zip(counts) {
            cumulative += count;
            le.clear();
            render::push_le(&mut le, bound, histogram.le);
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
    fn every_timestamp_reads_back_as_its_own_millisecond() {
        // What Prometheus' parser does: the nearest double, times 1000, truncated.
        for millis in (1_768_903_200_000..1_768_903_210_000).step_by(7) {
            let mut text = String::new();
            push_timestamp(&mut text, millis, &mut Digits::default());
            let seconds: f64 = text.parse().unwrap();
            assert_eq!((seconds * 1000.0) as i64, millis, "{text}");
        }
        let mut text = String::new();
        push_timestamp(&mut text, 1_768_903_200_000, &mut Digits::default());
        assert_eq!(text, "1768903200");
    }

    #[test]
    fn values_read_back_as_the_exposition_s_values() {
        let values = [
            0.0,
            14.0,
            2_960_000.0,
            0.631,
            1848.3,
            -3.0,
            -0.0,
            1e16,
            1.5e-7,
            1e-5,
            0.0001,
            123_456_789_012_345_680.0,
            f64::NAN,
            f64::INFINITY,
        ];
        for value in values {
            let (mut fast, mut exposition) = (String::new(), String::new());
            push_value(&mut fast, value, &mut Digits::default());
            render::push_value(&mut exposition, value);
            // The same double either way (ryu writes 1e-5 as 0.00001); NaN as NaN.
            let read = |text: &str| text.replace("+Inf", "inf").parse::<f64>().unwrap();
            assert!(
                read(&fast) == read(&exposition) || (value.is_nan() && fast == "NaN"),
                "{fast} against {exposition}"
            );
        }
    }

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
