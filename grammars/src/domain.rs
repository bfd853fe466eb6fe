//! What values an engine can print, for the records' `possible` checks: a line with a value
//! outside them is rejected whole (see [`crate::Outcome::Rejected`]).

/// The largest rate (tokens/s) or duration (ms) a grammar accepts. The busiest engines print a
/// few 10^5 tokens/s (a node of eight GPUs prefilling) and iterations of seconds; 10^12 leaves
/// six orders of margin, and keeps a counter fed rate x interval finite and exact to well
/// under a token for years of lines, where `1e307` would make it +Inf at the next line.
pub const MAX_MAGNITUDE: f64 = 1e12;

/// A rate, duration, length or count printed as a float: finite, `>= 0`, at most
/// [`MAX_MAGNITUDE`]. (`contains` is false for NaN.)
pub fn magnitude(value: f64) -> bool {
    (0.0..=MAX_MAGNITUDE).contains(&value)
}

/// A percentage as `%.1f%%` prints a fraction: a printed `100.0%` is full, not more.
pub fn percent(value: f64) -> bool {
    (0.0..=100.0).contains(&value)
}

/// A fraction in [0, 1].
pub fn fraction(value: f64) -> bool {
    (0.0..=1.0).contains(&value)
}

/// An optional value: absent, or possible.
pub fn opt(value: Option<f64>, check: fn(f64) -> bool) -> bool {
    value.is_none_or(check)
}

/// An optional value the engine prints as `nan` when it has no data (`nan%` acceptance when
/// nothing was drafted): absent, NaN, or possible.
pub fn opt_or_nan(value: Option<f64>, check: fn(f64) -> bool) -> bool {
    value.is_none_or(|v| v.is_nan() || check(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_infinite_negative_or_nan_is_possible() {
        for v in [f64::NAN, f64::INFINITY, -f64::INFINITY, -0.05, 1e307] {
            assert!(!magnitude(v) && !percent(v) && !fraction(v), "{v}");
        }
        assert!(magnitude(0.0) && percent(100.0) && fraction(1.0) && !percent(100.1));
        assert!(opt_or_nan(Some(f64::NAN), percent) && !opt(Some(f64::NAN), percent));
    }
}
