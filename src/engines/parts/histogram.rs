//! A classic Prometheus histogram: a count per bucket, the sum and the count of what was
//! observed. The bucket bounds are a property of the family (TensorRT-LLM iterations take
//! milliseconds, Ollama's requests up to half an hour, TGI's are TGI's own), so the state keeps
//! only counts and the engine names the bounds when it observes and when its catalog row
//! reads the histogram ([`Histogram::view`]). Every engine's histograms are this one type.

use serde::{Deserialize, Serialize};

use super::float;
use crate::catalog::{HistogramView, LeFormat};

/// Counts over a list of finite upper bounds (ascending; `+Inf` is implied).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    /// Non-cumulative counts per bucket, the last one `+Inf`; empty until the first value.
    counts: Vec<u64>,
    #[serde(with = "float")]
    pub sum: f64,
    pub count: u64,
}

impl Histogram {
    /// Counts `value` in the first bucket whose bound holds it. A negative or non-finite value
    /// is no duration: it is left out.
    pub fn observe(&mut self, bounds: &[f64], value: f64) {
        if !value.is_finite() || value < 0.0 {
            return;
        }
        if self.counts.len() != bounds.len() + 1 {
            // First observation; or a state file saved with other bounds, whose counts cannot
            // be moved into these: the histogram starts again whole, never half.
            *self = Histogram {
                counts: vec![0; bounds.len() + 1],
                ..Histogram::default()
            };
        }
        let slot = bounds
            .iter()
            .position(|&bound| value <= bound)
            .unwrap_or(bounds.len());
        self.counts[slot] += 1;
        self.sum += value;
        self.count += 1;
    }

    /// `(upper bound, count in that bucket alone)`, ending with `+Inf`; the exposition adds
    /// them up into Prometheus' cumulative buckets.
    pub fn buckets(&self, bounds: &[f64]) -> Vec<(f64, u64)> {
        bounds
            .iter()
            .copied()
            .chain([f64::INFINITY])
            .zip(self.counts.iter().copied().chain(std::iter::repeat(0)))
            .collect()
    }

    /// The histogram over `bounds` as the exposition reads it, `le` spelled as `le` says.
    pub fn view<'a>(&'a self, bounds: &'a [f64], le: LeFormat) -> HistogramView<'a> {
        HistogramView {
            bounds,
            counts: &self.counts,
            sum: self.sum,
            count: self.count,
            le,
        }
    }

    /// The series one histogram of a family over `bounds` writes: its buckets, `+Inf`, sum and
    /// count.
    pub fn series(bounds: &[f64]) -> usize {
        bounds.len() + 3
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOUNDS: [f64; 3] = [0.001, 0.025, 1.0];

    #[test]
    fn each_value_is_counted_in_its_first_bucket() {
        let mut h = Histogram::default();
        for v in [0.0005, 0.02, 0.02, 20.0, -1.0, f64::NAN] {
            h.observe(&BOUNDS, v);
        }
        assert_eq!(
            h.buckets(&BOUNDS),
            [(0.001, 1), (0.025, 2), (1.0, 0), (f64::INFINITY, 1)]
        );
        assert_eq!((h.count, h.sum), (4, 20.0405));
    }

    #[test]
    fn an_empty_histogram_has_every_bucket_at_zero() {
        let buckets = Histogram::default().buckets(&BOUNDS);
        assert_eq!(buckets.len(), 4);
        assert!(buckets.iter().all(|(_, n)| *n == 0));
    }
}
