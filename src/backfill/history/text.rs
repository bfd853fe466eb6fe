//! The history's text: each series' samples as OpenMetrics lines (`name{labels} value time`),
//! gathered in a buffer and written out in large pieces.
//!
//! A replay writes about as many bytes of history as it reads of log, so this is a hot loop:
//! a line is put together from three copies (the series' text, its value's, its time's) and
//! nothing else per line but a time lookup. The value's text is made again only when the
//! value changes, a time's once for all the series that share it. Both are kept in slots of
//! a fixed size and copied whole, the write position then moved on by their length (the bytes
//! copied past it are overwritten by the next line): a fixed-size copy is a few moves, where
//! a copy of the text's own length was a call to `memcpy` and a capacity check each.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::samples;

/// How much text is gathered before it is written out: a buffer that stays in the core's
/// cache, and a write call per 64 KiB.
const WRITE_BUFFER: usize = 1 << 16;

/// Bytes of a value's slot: the longest value text (`-2.2250738585072014e-308`, 24 bytes)
/// and its space.
const VALUE_SLOT: usize = 32;

/// Bytes of a time's text in [`Stamps`]: the longest time text (`-9223372036854776.1925`, 22
/// bytes), its newline, and the length in the last byte.
const STAMP_SLOT: usize = 24;

/// A time's text and newline, its length in the last byte: 24 bytes a time kept, as a text
/// and its end took before.
type StampText = [u8; STAMP_SLOT];

/// A text of at most `N` bytes, kept in `N` bytes so that it is copied whole.
#[derive(Clone, Copy)]
struct Slot<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> Slot<N> {
    /// `text` in a slot. Every text put in one is shorter than `N` by construction (the
    /// sizes above); a longer one would be a bug, and panics rather than write a cut line.
    fn of(text: &str) -> Slot<N> {
        let mut bytes = [0; N];
        bytes[..text.len()].copy_from_slice(text.as_bytes());
        Slot {
            bytes,
            len: text.len(),
        }
    }
}

impl<const N: usize> Slot<N> {
    /// Adds the digits of `n`: two at a time, as itoa does.
    #[inline(always)]
    fn push_integer(&mut self, mut n: u64) {
        const PAIRS: &[u8; 200] = b"\
            0001020304050607080910111213141516171819\
            2021222324252627282930313233343536373839\
            4041424344454647484950515253545556575859\
            6061626364656667686970717273747576777879\
            8081828384858687888990919293949596979899";
        self.len += n.checked_ilog10().unwrap_or(0) as usize + 1;
        let mut end = self.len;
        while n >= 100 {
            let pair = (n % 100) as usize * 2;
            n /= 100;
            self.bytes[end - 2..end].copy_from_slice(&PAIRS[pair..pair + 2]);
            end -= 2;
        }
        if n >= 10 {
            let pair = n as usize * 2;
            self.bytes[end - 2..end].copy_from_slice(&PAIRS[pair..pair + 2]);
        } else {
            self.bytes[end - 1] = b'0' + n as u8;
        }
    }

    /// Adds the `places` last digits of `n`, zeros in front (a decimal's fraction).
    #[inline(always)]
    fn push_fraction(&mut self, mut n: u64, places: usize) {
        self.len += places;
        for at in (self.len - places..self.len).rev() {
            self.bytes[at] = b'0' + (n % 10) as u8;
            n /= 10;
        }
    }

    #[inline(always)]
    fn push(&mut self, text: &[u8]) {
        self.bytes[self.len..self.len + text.len()].copy_from_slice(text);
        self.len += text.len();
    }
}

/// The text of a sample's value (as [`push_value`] writes it) and its space, in a slot. Whole
/// numbers and short decimals (most values) are written into it digit by digit: through a
/// `String` they cost three copies (each a call to `memcpy`) and a capacity check per piece.
#[inline]
fn value_slot(value: f64, scratch: &mut String, digits: &mut Digits) -> Slot<VALUE_SLOT> {
    let mut slot = Slot {
        bytes: [0; VALUE_SLOT],
        len: 0,
    };
    let whole = value as i64;
    if whole as f64 == value && value.abs() < 9.0e15 && value.is_sign_positive() {
        slot.push_integer(whole as u64);
        slot.push(b".0 ");
    } else if let Some(decimal) = short_decimal(value) {
        slot.push_integer(decimal.whole);
        slot.push(b".");
        slot.push_fraction(decimal.fraction, decimal.places);
        slot.push(b" ");
    } else {
        scratch.clear();
        push_value(scratch, value, digits);
        scratch.push(' ');
        slot = Slot::of(scratch);
    }
    slot
}

/// The text being written: `buffer[..len]`, written out once past [`WRITE_BUFFER`]. The
/// buffer's length is fixed, with room past `WRITE_BUFFER` for the longest line and the
/// slots' spare bytes, so that a line is put in place without a capacity check per piece.
pub(super) struct Text<'a> {
    buffer: Vec<u8>,
    len: usize,
    out: &'a mut dyn Write,
}

impl<'a> Text<'a> {
    pub fn new(out: &'a mut dyn Write) -> Text<'a> {
        Text {
            buffer: vec![0; WRITE_BUFFER + 4096],
            len: 0,
            out,
        }
    }

    /// Adds `bytes` (a family's header).
    pub fn push(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.len + bytes.len() > WRITE_BUFFER {
            self.write_out()?;
        }
        if bytes.len() > WRITE_BUFFER {
            return self.out.write_all(bytes);
        }
        self.buffer[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
        Ok(())
    }

    /// Makes room past [`WRITE_BUFFER`] for a line of `line` bytes (slots included).
    fn make_room(&mut self, line: usize) {
        if self.buffer.len() < WRITE_BUFFER + line {
            self.buffer.resize(WRITE_BUFFER + line, 0);
        }
    }

    fn write_out(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buffer[..self.len])?;
        self.len = 0;
        Ok(())
    }

    /// Writes out what is left, and flushes.
    pub fn finish(mut self) -> io::Result<()> {
        self.write_out()?;
        self.out.flush()
    }
}

/// The lines of one series' samples. Each line is three pieces: the series and a space, the
/// value and a space, the time and a newline.
pub(super) struct SampleLines<'a> {
    head: Vec<u8>,
    stamp: StampCursor<'a>,
    /// A series' value is often the one before (a counter at rest): its text is kept rather
    /// than made again (formatting was a fifth of a replay).
    last_value: Option<u64>,
    value: Slot<VALUE_SLOT>,
    scratch: String,
    digits: Digits,
}

impl<'a> SampleLines<'a> {
    pub fn new(key: &str, stamps: &'a Stamps) -> SampleLines<'a> {
        let mut head = Vec::with_capacity(key.len() + 1);
        head.extend_from_slice(key.as_bytes());
        head.push(b' ');
        SampleLines {
            head,
            stamp: StampCursor { stamps, at: 0 },
            last_value: None,
            value: Slot::of(""),
            scratch: String::new(),
            digits: Digits::default(),
        }
    }

    /// Writes the lines of `samples`, in time order and later than the series' last. (A
    /// slice, one chunk of a series' samples at a time: a flattening iterator cost ten
    /// instructions a line.)
    pub fn write(&mut self, text: &mut Text<'_>, samples: &[(i64, f64)]) -> io::Result<()> {
        let SampleLines {
            head,
            stamp,
            last_value,
            value,
            scratch,
            digits,
        } = self;
        text.make_room(head.len() + VALUE_SLOT + STAMP_SLOT);
        // The cursor, the value and the position as locals, kept in registers, and put back
        // at the end.
        let (mut cursor, mut last, mut slot) = (*stamp, *last_value, *value);
        let mut spare = [0; STAMP_SLOT];
        let Text { buffer, len, out } = text;
        let mut at = *len;
        for &(time, sample) in samples {
            if last != Some(sample.to_bits()) {
                slot = value_slot(sample, scratch, digits);
                last = Some(sample.to_bits());
            }
            let end = at + head.len();
            buffer[at..end].copy_from_slice(head);
            buffer[end..end + VALUE_SLOT].copy_from_slice(&slot.bytes);
            let end = end + slot.len;
            let stamp = cursor.find(time, &mut spare, scratch, digits);
            buffer[end..end + STAMP_SLOT].copy_from_slice(stamp);
            at = end + usize::from(stamp[STAMP_SLOT - 1]);
            if at >= WRITE_BUFFER {
                out.write_all(&buffer[..at])?;
                at = 0;
            }
        }
        *len = at;
        (*stamp, *last_value, *value) = (cursor, last, slot);
        Ok(())
    }
}

/// The text of every time samples were taken at, each with the newline that ends a sample,
/// made once: a time is shared by all the series of a record, and formatting it for each
/// sample was a tenth of a replay.
pub(super) struct Stamps {
    /// The times, sorted, without duplicates, and `i64::MAX` last: a lookup stops there
    /// rather than checking for the end at every step.
    times: Vec<i64>,
    /// Their texts, in the same order.
    texts: Vec<StampText>,
}

impl Stamps {
    pub fn new(mut times: Vec<i64>) -> Stamps {
        times.push(i64::MAX);
        if !times.is_sorted() {
            times.sort_unstable();
        }
        times.dedup();
        let (mut scratch, mut digits) = (String::new(), Digits::default());
        let texts = times
            .iter()
            .map(|&time| stamp_text(time, &mut scratch, &mut digits))
            .collect();
        Stamps { times, texts }
    }
}

/// The text of `millis` and a newline.
fn stamp_text(millis: i64, scratch: &mut String, digits: &mut Digits) -> StampText {
    scratch.clear();
    push_timestamp(scratch, millis, digits);
    scratch.push('\n');
    let mut text = Slot::<STAMP_SLOT>::of(scratch).bytes;
    text[STAMP_SLOT - 1] = scratch.len() as u8;
    text
}

/// A reader of the times' texts, for times asked in order (one series' samples).
#[derive(Clone, Copy)]
struct StampCursor<'a> {
    stamps: &'a Stamps,
    at: usize,
}

impl<'a> StampCursor<'a> {
    /// The text of `millis`, a time no earlier than the last one asked, and a newline: one
    /// kept, or else made in `spare`.
    #[inline(always)]
    fn find<'s>(
        &mut self,
        millis: i64,
        spare: &'s mut StampText,
        scratch: &mut String,
        digits: &mut Digits,
    ) -> &'s StampText
    where
        'a: 's,
    {
        let Stamps { times, texts } = self.stamps;
        while times[self.at] < millis {
            self.at += 1;
        }
        if times[self.at] == millis {
            &texts[self.at]
        } else {
            // Not a time kept: a spilled history's (or, in memory, cannot happen).
            *spare = stamp_text(millis, scratch, digits);
            spare
        }
    }
}

/// A value as the exposition spells it ([`samples::push_value`]), without going through
/// `core::fmt` (a tenth of a replay's time): whole numbers (most values: requests, tokens,
/// times) with itoa, the others with ryu (the same shortest digits).
fn push_value(out: &mut String, value: f64, digits: &mut Digits) {
    // Below 2^53 every whole number is exact; -0.0 keeps its sign through ryu. (A round trip
    // through i64 rather than `fract()`, which calls libm's trunc for every value.)
    let whole = value as i64;
    if whole as f64 == value && value.abs() < 9.0e15 && value.is_sign_positive() {
        out.push_str(digits.integer.format(whole));
        out.push_str(".0");
    } else if push_short_decimal(out, value, digits) {
    } else if value.is_finite() {
        out.push_str(digits.float.format_finite(value));
    } else {
        samples::push_value(out, value);
    }
}

/// A positive value with at most four decimals and fifteen digits (most of what a log
/// prints: `0.631`, `1848.3`), written from its digits: the text ryu would write, for a
/// tenth of the cost. Returns false, writing nothing, for any other value.
///
/// Why it is the same text: `n / 10^d` in floating point is the double nearest to the exact
/// quotient (both are exact doubles below 2^53), which is the double that parsing "n e-d"
/// gives; so if it equals `value`, the decimal reads back as `value`. And no decimal of
/// fifteen digits or fewer other than this one reads back as the same double, so it is the
/// shortest one, which is what ryu writes (in plain notation at these magnitudes).
fn push_short_decimal(out: &mut String, value: f64, digits: &mut Digits) -> bool {
    let Some(ShortDecimal {
        whole,
        fraction,
        places,
    }) = short_decimal(value)
    else {
        return false;
    };
    out.push_str(digits.integer.format(whole));
    out.push('.');
    let fraction = digits.integer.format(fraction);
    for _ in fraction.len()..places {
        out.push('0');
    }
    out.push_str(fraction);
    true
}

/// A decimal `whole.fraction`, the fraction `places` digits long with its leading zeros.
struct ShortDecimal {
    whole: u64,
    fraction: u64,
    places: usize,
}

/// The digits of [`push_short_decimal`]'s text, if it writes one.
///
/// Tried at four places only, then cut to the fewest: a decimal of fewer places that reads
/// back as `value` is also `n / 10^4` with `n` its digits and trailing zeros (`value * 10^4`
/// is within 0.15 of that `n` below 1e11, so rounds to it; and `n / 10^4` is the same
/// rational, whose nearest double is `value`). So the test at four places passes whenever
/// one at fewer places would, and cutting the zeros gives the fewest places: what a loop
/// over one to four places finds, with one division where it took up to four.
#[inline]
fn short_decimal(value: f64) -> Option<ShortDecimal> {
    if !(value > 0.0 && value < 1e11) {
        return None;
    }
    // Below 1e15: fifteen digits at most. (Rounded by hand: `f64::round` is a libm call.)
    let n = (value * 10_000.0 + 0.5) as u64;
    if n as f64 / 10_000.0 != value {
        return None;
    }
    let (whole, mut fraction, mut places) = (n / 10_000, n % 10_000, 4);
    if fraction == 0 {
        // A whole number: not a short decimal (and written as one before this is asked).
        return None;
    }
    while fraction % 10 == 0 {
        fraction /= 10;
        places -= 1;
    }
    Some(ShortDecimal {
        whole,
        fraction,
        places,
    })
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
            samples::push_value(&mut exposition, value);
            // The same double either way (ryu writes 1e-5 as 0.00001); NaN as NaN.
            let read = |text: &str| text.replace("+Inf", "inf").parse::<f64>().unwrap();
            assert!(
                read(&fast) == read(&exposition) || (value.is_nan() && fast == "NaN"),
                "{fast} against {exposition}"
            );
        }
    }

    #[test]
    fn short_decimals_are_written_as_ryu_writes_them() {
        let mut digits = Digits::default();
        let mut ryu = ryu::Buffer::new();
        // Every decimal of up to four places below 100, then wider ones spread out.
        let small = (1..1_000_000_i64).map(|n| (n, 10_000.0));
        let wide = (1..200_000_i64).map(|i| (i * 4_999_999_937, 10_000.0));
        let places = (1..100_000_i64).flat_map(|n| [(n, 10.0), (n, 100.0), (n, 1_000.0)]);
        let mut written = 0;
        for (n, scale) in small.chain(wide).chain(places) {
            let value = n as f64 / scale;
            let mut fast = String::new();
            if push_short_decimal(&mut fast, value, &mut digits) {
                assert_eq!(fast, ryu.format_finite(value), "{n} / {scale}");
                written += 1;
            } else {
                assert!(fast.is_empty());
            }
        }
        assert!(written > 1_000_000, "{written}");
        // Not for these: ryu writes them.
        let mut out = String::new();
        for value in [
            0.1 + 0.2,
            1.0 / 3.0,
            0.00001,
            1e11,
            5.0,
            -0.5,
            0.0,
            f64::NAN,
        ] {
            assert!(!push_short_decimal(&mut out, value, &mut digits), "{value}");
        }
        assert!(out.is_empty());
    }

    #[test]
    fn a_time_not_taken_at_a_record_is_still_written_right() {
        let stamps = Stamps::new(vec![3_000, 1_000, 2_500, 1_000]);
        let mut cursor = StampCursor {
            stamps: &stamps,
            at: 0,
        };
        let (mut scratch, mut digits) = (String::new(), Digits::default());
        let mut text = String::new();
        for millis in [1_000, 2_000, 2_500, 3_000, 4_000] {
            let mut spare = [0; STAMP_SLOT];
            let stamp = cursor.find(millis, &mut spare, &mut scratch, &mut digits);
            let len = usize::from(stamp[STAMP_SLOT - 1]);
            text.push_str(std::str::from_utf8(&stamp[..len]).unwrap());
        }
        assert_eq!(text, "1\n2\n2.500\n3\n4\n");
    }

    #[test]
    fn a_value_s_slot_holds_the_text_push_value_writes() {
        let mut digits = Digits::default();
        let mut scratch = String::new();
        let whole = (0..100_000_u32).map(f64::from);
        let decimals = (1..200_000_i64)
            .flat_map(|n| [n as f64 / 10.0, n as f64 / 1_000.0, n as f64 / 10_000.0]);
        let others = [
            0.1 + 0.2,
            -0.0,
            -3.0,
            1e16,
            9.0e15,
            8.999_999_999_999_998e15,
            1e-5,
            1e11,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN,
            f64::MAX,
            12_345_678_901.5,
        ];
        for value in whole.chain(decimals).chain(others) {
            let mut expected = String::new();
            push_value(&mut expected, value, &mut digits);
            expected.push(' ');
            let slot = value_slot(value, &mut scratch, &mut digits);
            assert_eq!(
                std::str::from_utf8(&slot.bytes[..slot.len]).unwrap(),
                expected,
                "{value:?}"
            );
        }
    }

    #[test]
    fn the_longest_value_and_time_fit_their_slots() {
        let mut digits = Digits::default();
        for value in [
            -2.2250738585072014e-308,
            f64::MIN,
            -f64::MIN_POSITIVE,
            -1.2345678901234567e-100,
        ] {
            let mut text = String::new();
            push_value(&mut text, value, &mut digits);
            assert!(text.len() < VALUE_SLOT, "{text}");
        }
        for millis in [i64::MIN, i64::MIN + 1, i64::MAX, -1] {
            let mut text = String::new();
            push_timestamp(&mut text, millis, &mut digits);
            // With its newline, and the length after it.
            assert!(text.len() + 1 < STAMP_SLOT, "{text}");
        }
    }

    /// The lines of `samples` of a series named `key`, written by [`SampleLines`].
    fn lines_of(key: &str, samples: &[(i64, f64)], stamps: &Stamps) -> String {
        let mut out = Vec::new();
        let mut text = Text::new(&mut out);
        text.push(b"# HELP\n").unwrap();
        let mut lines = SampleLines::new(key, stamps);
        // In two calls, as a merge of spilled samples writes them.
        let (first, second) = samples.split_at(samples.len() / 3);
        lines.write(&mut text, first).unwrap();
        lines.write(&mut text, second).unwrap();
        text.finish().unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn lines_are_whole_across_the_buffer_s_pieces_whatever_the_series_length() {
        let samples: Vec<(i64, f64)> = (0..20_000_i64)
            .map(|i| (1_768_903_200_000 + i * 250, (i / 3) as f64 * 0.5))
            .collect();
        let kept = Stamps::new(samples.iter().map(|s| s.0).collect());
        let none = Stamps::new(Vec::new());
        for key in [
            "up".to_string(),
            format!("x{{log=\"{}\"}}", "a".repeat(10_000)),
        ] {
            let mut expected = String::from("# HELP\n");
            for &(time, value) in &samples {
                expected.push_str(&key);
                expected.push(' ');
                samples::push_value(&mut expected, value);
                expected.push(' ');
                push_timestamp(&mut expected, time, &mut Digits::default());
                expected.push('\n');
            }
            assert!(lines_of(&key, &samples, &kept) == expected, "{key:.20}");
            assert!(
                lines_of(&key, &samples, &none) == expected,
                "{key:.20}, times not kept"
            );
        }
    }
}
