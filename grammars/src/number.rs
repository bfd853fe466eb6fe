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
    digit1.map_res(str::parse::<u64>).parse(input)
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
    fn floats_cover_python_spellings() {
        assert_eq!(float("63.1%"), Ok(("%", 63.1)));
        assert_eq!(float("12 reqs"), Ok((" reqs", 12.0)));
        assert!(float("nan%").unwrap().1.is_nan());
        assert_eq!(float("1e-05,"), Ok((",", 1e-5)));
        assert!(float("abc").is_err());
    }
}
