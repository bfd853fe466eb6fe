//! Counting what engines print: totals that restart with the engine, token counts kept in
//! tenths, percentages as fractions. Shared by the engines whose lines print them.

use serde::{Deserialize, Serialize};

use super::float;

/// A counter that an engine prints as a running total since it started (vLLM V0's spec decoding
/// and preemption warnings, TensorRT-LLM's KV block counts). A smaller total than the last one means the engine restarted:
/// what was counted before is kept, so the exported counter never goes down.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CumulativeCounter {
    #[serde(with = "float")]
    before_restarts: f64,
    #[serde(with = "float")]
    last_total: f64,
}

impl CumulativeCounter {
    pub fn observe(&mut self, total: f64) {
        if total < self.last_total {
            self.before_restarts += self.last_total;
        }
        self.last_total = total;
    }

    pub fn value(&self) -> f64 {
        self.before_restarts + self.last_total
    }
}

/// Adds `throughput x window` tokens to a token counter. vLLM prints throughputs to 0.1 token/s,
/// so the counter is kept in whole tenths of a token: a sum of binary fractions such as
/// `0.1 + 0.2` would otherwise drift into `0.30000000000000004`.
pub fn add_tokens(counter: Option<f64>, tokens: f64) -> f64 {
    let tokens = if tokens.is_finite() { tokens } else { 0.0 };
    let tenths = (counter.unwrap_or(0.0) * 10.0).round() + (tokens * 10.0).round();
    tenths / 10.0
}

/// `63.1` (a percentage as printed) to `0.631`. Moving the decimal point in the shortest
/// digits of the value gives the double nearest to what the line says; dividing by 100 would
/// export `0.7%` as `0.006999999999999999`.
pub fn fraction_of_percent(percent: f64) -> f64 {
    // The printed value has at most a few decimals: find them as an integer `n / 10^k`, both
    // exact in a double, so one correctly rounded division gives the nearest double to the
    // printed digits moved two places. (Formatting and parsing text gives the same answer,
    // at ten times the cost: this runs for every percentage of every stats line.)
    const POWERS: [f64; 7] = [1.0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6];
    if percent.is_finite() && percent.abs() < 1e9 {
        for k in 0..POWERS.len() - 2 {
            let scaled = (percent * POWERS[k]).round();
            if scaled / POWERS[k] == percent {
                return scaled / POWERS[k + 2];
            }
        }
    }
    percent / 100.0
}
