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
    let tenths = round(counter.unwrap_or(0.0) * 10.0) + round(tokens * 10.0);
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
            let scaled = round(percent * POWERS[k]);
            if scaled / POWERS[k] == percent {
                return scaled / POWERS[k + 2];
            }
        }
    }
    percent / 100.0
}

/// `x.round()` (half away from zero) without a call: x86-64's baseline has no rounding
/// instruction, so `f64::round` is a call into libm, eight of them per stats line. Truncating
/// through `i64` is one instruction and exact below 2^52, where the fraction left is exact too;
/// from 2^52 up every double is whole. The sign is `x`'s, as `round` keeps it (`-0.3` gives
/// `-0.0`).
#[inline]
fn round(x: f64) -> f64 {
    const WHOLE_FROM: f64 = 4_503_599_627_370_496.0; // 2^52
    if x.is_nan() || x.abs() >= WHOLE_FROM {
        return x; // whole already, infinite or NaN
    }
    let truncated = x as i64 as f64;
    let fraction = x - truncated;
    let rounded = if fraction >= 0.5 {
        truncated + 1.0
    } else if fraction <= -0.5 {
        truncated - 1.0
    } else {
        truncated
    };
    rounded.copysign(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_is_f64_round_bit_for_bit_but_nan_payloads() {
        let mut values = vec![
            0.0,
            -0.0,
            0.3,
            -0.3,
            0.5,
            -0.5,
            1.5,
            2.5,
            -2.5,
            0.49999999999999994,
            -0.49999999999999994,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            -4_503_599_627_370_495.5,
            9_007_199_254_740_993.0,
            1e300,
            -1e300,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE / 3.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        // Tenths of tokens and scaled percentages, as the counters meet them.
        values.extend((0..200_000).map(|i| f64::from(i) * 0.1 * 10.0));
        values.extend((0..20_000).map(|i| f64::from(i) * 0.01 * 100.0 - 100.0));
        let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
        values.extend((0..200_000).map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            f64::from_bits(seed)
        }));
        for x in values {
            if x.is_nan() {
                assert!(round(x).is_nan());
                continue;
            }
            assert_eq!(round(x).to_bits(), x.round().to_bits(), "{x:e}");
        }
    }
}
