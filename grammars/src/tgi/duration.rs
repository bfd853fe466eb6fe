//! Rust's `Duration` `Debug` format, as TGI and TEI record their request timings in span fields
//! (`format!("{total_time:?}")`).
//!
//! `Debug` picks the unit from the magnitude (std `core/src/time.rs`, `fmt_decimal`): `s` when
//! there is a whole second, else `ms` from a millisecond, else `µs` (U+00B5) from a microsecond,
//! else `ns`; and without a precision it prints every significant fractional digit (at most 9,
//! 6, 3, 0 for those units), trailing zeros trimmed. So the text is exact: `"611.286748ms"` is
//! 611 286 748 ns, and reading it into integer nanoseconds loses nothing. The native histograms
//! observe `Duration::as_secs_f64()` of the same value, which [`as_secs_f64`] rebuilds bit for
//! bit, so a log-fed histogram puts each request in the bucket TGI's own would.

/// The units `Debug` prints, with their size in nanoseconds and the most fractional digits it
/// prints with them.
const UNITS: [(&str, u64, usize); 4] = [
    ("ns", 1, 0),
    ("µs", 1_000, 3),
    ("ms", 1_000_000, 6),
    ("s", 1_000_000_000, 9),
];

/// A whole `Duration` `Debug` text (`611.286748ms`, `754.5µs`, `4.065504959s`, `0ns`) as
/// nanoseconds. `None` for anything `Debug` does not print: another unit, a sign, more digits
/// than the unit has, a sub-second unit with 1000 or more of it (`1500ms` prints as `1.5s`), or
/// a whole part of 0 outside `ns` (`0.5ms` prints as `500µs`).
pub fn nanos(text: &str) -> Option<u64> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let (whole, rest) = text.split_at(digits);
    let (fraction, unit) = match rest.strip_prefix('.') {
        Some(after) => {
            let n = after.bytes().take_while(u8::is_ascii_digit).count();
            if n == 0 {
                return None;
            }
            after.split_at(n)
        }
        None => ("", rest),
    };
    let &(_, scale, max_fraction) = UNITS.iter().find(|(name, ..)| *name == unit)?;
    if fraction.len() > max_fraction {
        return None;
    }
    let whole: u64 = whole.parse().ok()?;
    let sub_second = scale < 1_000_000_000;
    if (sub_second && whole >= 1000) || (scale > 1 && whole == 0) {
        return None;
    }
    // The fraction in nanoseconds: its digits scaled up to the unit's full nine/six/three.
    let fraction_ns = if fraction.is_empty() {
        0
    } else {
        let value: u64 = fraction.parse().ok()?;
        value * 10u64.pow((max_fraction - fraction.len()) as u32)
    };
    whole.checked_mul(scale)?.checked_add(fraction_ns)
}

/// `Duration::as_secs_f64()` of a duration of `nanos` nanoseconds, computed as std does
/// (`secs as f64 + subsec_nanos as f64 / 1e9`), so a bucket edge compares as it does in TGI.
pub fn as_secs_f64(nanos: u64) -> f64 {
    (nanos / 1_000_000_000) as f64 + (nanos % 1_000_000_000) as f64 / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_unit_exactly() {
        assert_eq!(nanos("611.286748ms"), Some(611_286_748));
        assert_eq!(nanos("754.5µs"), Some(754_500));
        assert_eq!(nanos("127.337µs"), Some(127_337));
        assert_eq!(nanos("4.065504959s"), Some(4_065_504_959));
        assert_eq!(nanos("25.09912212s"), Some(25_099_122_120));
        assert_eq!(nanos("850ns"), Some(850));
        assert_eq!(nanos("0ns"), Some(0));
        assert_eq!(nanos("3s"), Some(3_000_000_000));
        assert_eq!(nanos("1ms"), Some(1_000_000));
    }

    #[test]
    fn refuses_what_debug_never_prints() {
        for text in [
            "",
            "ms",
            "-5ms",
            "1.ms",
            "1500ms",
            "0.5ms",
            "1.2345678µs",
            "12.5ns",
            "1.1234567890s",
            "5us",
            "5 ms",
            "5msx",
            "5m",
            "1000µs",
            "18446744073709551615s",
        ] {
            assert_eq!(nanos(text), None, "{text}");
        }
    }

    #[test]
    fn seconds_as_std_computes_them() {
        assert_eq!(as_secs_f64(611_286_748), 0.611286748);
        assert_eq!(as_secs_f64(4_065_504_959), 4.0 + 65_504_959.0 / 1e9);
    }
}
