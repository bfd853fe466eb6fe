//! A classic Prometheus histogram over bounds its family names (TGI's and TEI's own, Ollama's
//! request durations): a count per bucket, the sum and the count. The state keeps only the
//! counts; the bounds, and how `le` is spelled, are the family's ([`DurationHistogram::view`]).

use serde::{Deserialize, Serialize};

use super::float;
use crate::catalog::{HistogramView, LeFormat};

/// A histogram of durations, over bounds the caller names.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DurationHistogram {
    /// Counts per bucket alone, `+Inf` last; empty until the first observation.
    counts: Vec<u64>,
    #[serde(with = "float")]
    pub sum: f64,
    pub count: u64,
}

impl DurationHistogram {
    /// Observes `seconds` as `metrics-exporter-prometheus` does: in every bucket whose bound
    /// it is at most (counted here in the first, summed up by the exposition).
    pub fn observe(&mut self, bounds: &[f64], seconds: f64) {
        if self.counts.len() != bounds.len() + 1 {
            // First observation; or a state file saved with other bounds, whose counts cannot
            // be moved into these: the histogram starts again whole, never half.
            *self = DurationHistogram {
                counts: vec![0; bounds.len() + 1],
                ..DurationHistogram::default()
            };
        }
        let slot = bounds
            .iter()
            .position(|&bound| seconds <= bound)
            .unwrap_or(bounds.len());
        self.counts[slot] += 1;
        self.sum += seconds;
        self.count += 1;
    }

    /// The histogram over `bounds` as the exposition reads it, `le` spelled `le`'s way.
    pub fn view<'a>(&'a self, bounds: &'a [f64], le: LeFormat) -> HistogramView<'a> {
        HistogramView {
            bounds,
            counts: &self.counts,
            sum: self.sum,
            count: self.count,
            le,
        }
    }

    /// The series one histogram over `bounds` writes: its buckets, `+Inf`, sum and count.
    pub fn series(bounds: &[f64]) -> usize {
        bounds.len() + 3
    }
}
