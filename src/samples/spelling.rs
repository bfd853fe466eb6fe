//! How the exposition spells what a sample is made of: label values escaped, sample values
//! and histogram bounds as Prometheus reads them back. A histogram's bound is a label value
//! (`le`), so even an output that writes no text (remote write) spells it this way.

use std::fmt::Write;

use crate::catalog::LeFormat;

/// Appends a label value with the exposition's escapes (`\\`, `\"`, `\n`).
pub fn push_escaped(out: &mut String, value: &str) {
    // memchr3: `contains` with a set of chars tests them one char at a time, and a replay
    // escapes every unit's labels after every stats line.
    if memchr::memchr3(b'\\', b'"', b'\n', value.as_bytes()).is_none() {
        out.push_str(value);
        return;
    }
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// A histogram bucket's `le` value, as `le` says to spell it.
pub fn push_le(out: &mut String, bound: f64, le: LeFormat) {
    match le {
        LeFormat::Display if bound.is_finite() => {
            let _ = write!(out, "{bound}");
        }
        _ => push_value(out, bound),
    }
}

/// A sample value as both text formats spell it.
pub fn push_value(out: &mut String, value: f64) {
    if value.is_nan() {
        out.push_str("NaN");
    } else if value.is_infinite() {
        out.push_str(if value > 0.0 { "+Inf" } else { "-Inf" });
    } else {
        // Debug gives the shortest digits that read back as the same double, with `.0` on whole
        // numbers and an exponent only for very large or small ones.
        let _ = write!(out, "{value:?}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped_and_values_spelled_as_prometheus_reads_them() {
        let mut out = String::new();
        push_escaped(&mut out, "a\\b\"c\nd");
        assert_eq!(out, "a\\\\b\\\"c\\nd");
        for (value, text) in [
            (14.0, "14.0"),
            (0.631, "0.631"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "+Inf"),
            (-f64::INFINITY, "-Inf"),
        ] {
            let mut out = String::new();
            push_value(&mut out, value);
            assert_eq!(out, text);
        }
    }
}
