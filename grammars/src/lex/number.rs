//! Number productions shared by every grammar.
//!
//! Engines print numbers with Python's `%d`, `%.1f`, `{:,}` and `repr`: so besides plain
//! integers and decimals we meet thousands separators (`2,042,016`), `nan`, `inf` and a
//! leading `-`. Each production is a small nom parser over `&str`.

use nom::{
    branch::alt,
    bytes::complete::{tag, take_while1},
    character::complete::{char, digit1},
    combinator::{opt, recognize},
    sequence::pair,
    IResult, Parser,
};

/// An unsigned integer as `%d` prints it.
pub fn uint(input: &str) -> IResult<&str, u64> {
    let bytes = input.as_bytes();
    // One pass: the digits counted and, up to 19 of them (which always fit in a u64), summed.
    let mut value = 0u64;
    let mut digits = 0;
    while let Some(&d) = bytes.get(digits).filter(|d| d.is_ascii_digit()) {
        if digits < 19 {
            value = value * 10 + u64::from(d - b'0');
        }
        digits += 1;
    }
    match digits {
        0 => Err(nom::Err::Error(nom::error::Error::new(
            input,
            nom::error::ErrorKind::Digit,
        ))),
        1..=19 => Ok((&input[digits..], value)),
        _ => digit1.map_res(str::parse::<u64>).parse(input),
    }
}

/// Powers of ten that are exact in a double.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The common `123.45` (what `%.Nf` prints) without the general parser: when its digits as an
/// integer stay within 2^53, the digits as an integer and the power of ten are both exact doubles, so their
/// quotient is the correctly rounded value, the same double `str::parse` gives. Stats lines are
/// mostly such numbers, and this is several times cheaper than recognising and re-parsing them.
fn plain_decimal(input: &str) -> Option<(&str, f64)> {
    let bytes = input.as_bytes();
    let negative = bytes.first() == Some(&b'-');
    let mut i = usize::from(negative);
    let int_start = i;
    let mut mantissa: u64 = 0;
    while let Some(d) = bytes.get(i).filter(|b| b.is_ascii_digit()) {
        mantissa = mantissa * 10 + u64::from(d - b'0');
        i += 1;
        if i - int_start > 18 {
            return None;
        }
    }
    if i == int_start {
        return None;
    }
    let mut decimals = 0;
    if bytes.get(i) == Some(&b'.') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i += 1;
        while let Some(d) = bytes.get(i).filter(|b| b.is_ascii_digit()) {
            mantissa = mantissa * 10 + u64::from(d - b'0');
            i += 1;
            decimals += 1;
            if i - int_start - 1 > 18 {
                return None;
            }
        }
    }
    // An exponent, or a mantissa or power of ten that is not exact: the general parser.
    if matches!(bytes.get(i), Some(b'e' | b'E')) || mantissa > (1 << 53) || decimals >= POW10.len()
    {
        return None;
    }
    let value = mantissa as f64 / POW10[decimals];
    Some((&input[i..], if negative { -value } else { value }))
}

/// A signed integer as `%d` prints it.
pub fn int(input: &str) -> IResult<&str, i64> {
    recognize(pair(opt(char('-')), digit1))
        .map_res(str::parse::<i64>)
        .parse(input)
}

/// An unsigned integer that may carry Python's `{:,}` thousands separators (`2,042,016`).
///
/// A comma is only taken as a separator when exactly three digits follow it, so
/// `1,234, Maximum` stops after `1,234`.
pub fn grouped_uint(input: &str) -> IResult<&str, u64> {
    let (mut rest, first) = digit1(input)?;
    let mut value: u64 = first.parse().map_err(|_| {
        nom::Err::Error(nom::error::Error::new(input, nom::error::ErrorKind::Digit))
    })?;
    loop {
        let bytes = rest.as_bytes();
        if bytes.len() >= 4
            && bytes[0] == b','
            && bytes[1..4].iter().all(u8::is_ascii_digit)
            && !bytes.get(4).is_some_and(u8::is_ascii_digit)
        {
            value = value
                .checked_mul(1000)
                .and_then(|v| v.checked_add(rest[1..4].parse::<u64>().ok()?))
                .ok_or_else(|| {
                    nom::Err::Error(nom::error::Error::new(
                        input,
                        nom::error::ErrorKind::TooLarge,
                    ))
                })?;
            rest = &rest[4..];
        } else {
            return Ok((rest, value));
        }
    }
}

/// A float as `%.Nf`, `repr` or `json` print it, including `nan`, `inf` and exponents.
pub fn float(input: &str) -> IResult<&str, f64> {
    if let Some((rest, value)) = plain_decimal(input) {
        return Ok((rest, value));
    }
    alt((
        tag("nan").map(|_| f64::NAN),
        tag("NaN").map(|_| f64::NAN),
        tag("inf").map(|_| f64::INFINITY),
        tag("-inf").map(|_| f64::NEG_INFINITY),
        recognize((
            opt(char('-')),
            digit1,
            opt(pair(char('.'), take_while1(|c: char| c.is_ascii_digit()))),
            opt((
                alt((char('e'), char('E'))),
                opt(alt((char('+'), char('-')))),
                digit1,
            )),
        ))
        .map_res(str::parse::<f64>),
    ))
    .parse(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_integers_take_only_three_digit_groups() {
        assert_eq!(grouped_uint("2,042,016 tokens"), Ok((" tokens", 2_042_016)));
        assert_eq!(grouped_uint("8192 tokens"), Ok((" tokens", 8192)));
        assert_eq!(grouped_uint("1,23"), Ok((",23", 1)));
        assert_eq!(grouped_uint("12,3456"), Ok((",3456", 12)));
    }

    #[test]
    fn the_fast_path_gives_the_same_double_as_the_general_parser() {
        for text in [
            "0",
            "0.0",
            "63.1",
            "1245.3",
            "0.7",
            "-2.5",
            "100.0",
            "0.123456789012345",
            "123456789012345",
            "2042016",
            "0.1",
            "5.44",
        ] {
            let (rest, fast) = plain_decimal(text).unwrap();
            assert_eq!((rest, fast), ("", text.parse::<f64>().unwrap()), "{text}");
        }
        // More digits than are exact, or an exponent: left to the general parser.
        assert!(plain_decimal("1234567890123456.7").is_none());
        assert!(plain_decimal("1e-05").is_none());
        assert!(plain_decimal("9.999999999999999").is_none());
        assert_eq!(float("9.999999999999999"), Ok(("", 9.999999999999999)));
        assert_eq!(float("1234567890123456.7"), Ok(("", 1234567890123456.7)));
        assert_eq!(float("12."), Ok((".", 12.0)));
        assert_eq!(uint("18446744073709551615 x"), Ok((" x", u64::MAX)));
        assert!(uint("18446744073709551616").is_err());
        assert_eq!(uint("007"), Ok(("", 7)));
    }

    #[test]
    fn the_fast_path_reads_every_decimal_of_up_to_18_digits_as_str_parse_does() {
        let mut seed = 0x2545_F491_4F6C_DD1D_u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..200_000 {
            let sign = if next(4) == 0 { "-" } else { "" };
            let int: String = (0..1 + next(20))
                .map(|_| char::from(b'0' + next(10) as u8))
                .collect();
            let fraction: String = (0..next(20))
                .map(|_| char::from(b'0' + next(10) as u8))
                .collect();
            let tail = [" tokens/s", "%", "", ".", "e5", ","][next(6) as usize];
            let number = match fraction.is_empty() {
                true => format!("{sign}{int}"),
                false => format!("{sign}{int}.{fraction}"),
            };
            let text = format!("{number}{tail}");
            let digits = int.len() + fraction.len();
            match plain_decimal(&text) {
                Some((rest, value)) => {
                    assert_eq!(value, number.parse::<f64>().unwrap(), "{text}");
                    assert_eq!(rest, tail, "{text}");
                    assert!(digits <= 18, "{text}");
                }
                None => assert!(
                    digits > 18
                        || tail.starts_with('e')
                        || number
                            .replace(['-', '.'], "")
                            .parse::<u64>()
                            .is_ok_and(|m| m > 1 << 53),
                    "{text}"
                ),
            }
        }
    }

    #[test]
    fn floats_cover_python_spellings() {
        assert_eq!(float("63.1%"), Ok(("%", 63.1)));
        assert_eq!(float("12 reqs"), Ok((" reqs", 12.0)));
        assert!(float("nan%").unwrap().1.is_nan());
        assert_eq!(float("1e-05,"), Ok((",", 1e-5)));
        assert!(float("abc").is_err());
    }
}
