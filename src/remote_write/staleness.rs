//! Staleness markers: a series that leaves the exposition (an engine gone down hides its
//! gauges, a log expired takes its series) ends in Prometheus at once, as it would had
//! Prometheus scraped the agent and found it missing. Without the marker a pushed series would
//! go on answering queries with its last value for five minutes (Prometheus' lookback).

use std::collections::HashSet;

use super::prompb::{Label, Sample, TimeSeries};

/// Prometheus' `value.StaleNaN`: a NaN with this bit pattern marks a series as ended; an
/// ordinary NaN (0x7ff8000000000000) is a value.
pub const STALE_NAN: u64 = 0x7ff0_0000_0000_0002;

/// The label sets of the last round pushed.
#[derive(Debug, Default)]
pub struct Staleness {
    previous: HashSet<Vec<Label>>,
}

impl Staleness {
    /// Adds to `series` a stale marker at `timestamp_ms` for each series of the previous round
    /// that this one lacks, and remembers this round's.
    pub fn mark(&mut self, series: &mut Vec<TimeSeries>, timestamp_ms: i64) {
        let current: HashSet<Vec<Label>> = series.iter().map(|s| s.labels.clone()).collect();
        for labels in self.previous.difference(&current) {
            series.push(TimeSeries {
                labels: labels.clone(),
                samples: vec![Sample {
                    value: f64::from_bits(STALE_NAN),
                    timestamp: timestamp_ms,
                }],
            });
        }
        self.previous = current;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(name: &str, value: f64) -> TimeSeries {
        TimeSeries {
            labels: vec![Label {
                name: "__name__".into(),
                value: name.into(),
            }],
            samples: vec![Sample {
                value,
                timestamp: 0,
            }],
        }
    }

    #[test]
    fn a_series_missing_from_a_round_gets_one_stale_marker() {
        let mut staleness = Staleness::default();
        let mut first = vec![series("a", 1.0), series("b", 2.0)];
        staleness.mark(&mut first, 1_000);
        assert_eq!(first.len(), 2, "nothing is stale in the first round");
        let mut second = vec![series("a", 1.0)];
        staleness.mark(&mut second, 2_000);
        assert_eq!(second.len(), 2);
        assert_eq!(second[1].labels, series("b", 0.0).labels);
        assert_eq!(second[1].samples[0].value.to_bits(), STALE_NAN);
        assert_eq!(second[1].samples[0].timestamp, 2_000);
        let mut third = vec![series("a", 1.0)];
        staleness.mark(&mut third, 3_000);
        assert_eq!(third.len(), 1, "marked once");
    }

    #[test]
    fn an_ordinary_nan_is_not_a_stale_marker() {
        assert_ne!(f64::NAN.to_bits(), STALE_NAN);
        assert!(f64::from_bits(STALE_NAN).is_nan());
    }
}
