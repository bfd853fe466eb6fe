//! The heads in front of a llama-server message, outermost first:
//!
//! - router mode (2026): `[42027] `, the port of the child instance whose line the router
//!   re-emits (its own lines have none);
//! - `common/log.cpp`'s time since the process started, `M.SS.mmm.uuu ` (`%d.%02d.%03d.%03d`:
//!   minutes are not padded and pass 99 on a server up for hours), then the level, `I `, `W `,
//!   `E ` or `D ` (both on by default since `common_init()` turned them on; off in most logs
//!   from late 2024 to early 2025);
//! - the server's own `slot %12.*s: id %2d | task %d | ` (`SLT_*`) or `srv  %12.*s: ` (`SRV_*`),
//!   the function name right-aligned and cut to 12 characters.
//!
//! A block-era continuation line (`prompt eval time = ...`) has none of the log heads: it is
//! the rest of the one message whose first line held them (only the router's bracket, which
//! is added per line).

use nom::{
    bytes::complete::{tag, take_while1, take_while_m_n},
    character::complete::{char, space0},
    combinator::opt,
    sequence::terminated,
    IResult, Parser,
};

use crate::lex::number::{int, uint};

/// What the log heads of a line say, and the message after them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Head<'a> {
    pub port: Option<u16>,
    pub uptime_us: Option<u64>,
    pub message: &'a str,
}

/// Splits the router bracket, the time since start and the level off `line`.
pub fn split(line: &str) -> Head<'_> {
    let (rest, port) = opt(router_port).parse(line).unwrap_or((line, None));
    let (rest, uptime_us) = opt(uptime).parse(rest).unwrap_or((rest, None));
    let rest = level(rest).map_or(rest, |(rest, _)| rest);
    Head {
        port,
        uptime_us,
        message: rest,
    }
}

/// `[42027] `: a port, so at most five digits that fit a u16.
fn router_port(input: &str) -> IResult<&str, u16> {
    let (rest, digits) = terminated(
        nom::sequence::preceded(
            char('['),
            take_while_m_n(1, 5, |c: char| c.is_ascii_digit()),
        ),
        tag("] "),
    )
    .parse(input)?;
    match digits.parse::<u16>() {
        Ok(port) => Ok((rest, port)),
        Err(_) => Err(nom::Err::Error(nom::error::Error::new(
            input,
            nom::error::ErrorKind::TooLarge,
        ))),
    }
}

/// `317.06.410.187 `: minutes (unpadded), seconds, milliseconds, microseconds since start, as
/// microseconds.
fn uptime(input: &str) -> IResult<&str, u64> {
    let fixed = |n: usize| take_while_m_n(n, n, |c: char| c.is_ascii_digit());
    let (rest, (minutes, _, seconds, _, millis, _, micros, _)) = (
        take_while1(|c: char| c.is_ascii_digit()),
        char('.'),
        fixed(2),
        char('.'),
        fixed(3),
        char('.'),
        fixed(3),
        char(' '),
    )
        .parse(input)?;
    let number = |s: &str| s.parse::<u64>().ok();
    let (Some(minutes), Some(seconds), Some(millis), Some(micros)) = (
        number(minutes),
        number(seconds),
        number(millis),
        number(micros),
    ) else {
        return Err(nom::Err::Error(nom::error::Error::new(
            input,
            nom::error::ErrorKind::Digit,
        )));
    };
    if seconds >= 60 || minutes > u64::MAX / 61_000_000 {
        return Err(nom::Err::Error(nom::error::Error::new(
            input,
            nom::error::ErrorKind::Verify,
        )));
    }
    Ok((
        rest,
        ((minutes * 60 + seconds) * 1000 + millis) * 1000 + micros,
    ))
}

/// `I `, `W `, `E `, `D `: `common_log`'s level letter.
fn level(input: &str) -> IResult<&str, char> {
    terminated(nom::character::complete::one_of("IWED"), char(' ')).parse(input)
}

/// The server's slot head: `slot print_timing: id  0 | task 160 | `.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlotHead<'a> {
    /// The function name, without the padding (`print_timing`, `release`, `launch_slot_`).
    pub function: &'a str,
    pub slot: u32,
    /// The body after the head; empty for the block era's timing header.
    pub body: &'a str,
}

/// `slot %12.*s: id %2d | task %d | body`. The task id is read to find the body, and dropped:
/// it grows with every request, so no series may carry it.
pub fn slot_head(message: &str) -> Option<SlotHead<'_>> {
    let rest = message.strip_prefix("slot ")?;
    // The function name is 12 characters; a fork that pads differently still has `: id `
    // right after it (the name is checked below).
    let colon = rest.find(": id ")?;
    let function = rest[..colon].trim_start();
    if function.is_empty() || function.len() > 16 || function.contains(' ') {
        return None;
    }
    let rest = &rest[colon + ": id ".len()..];
    let (body, (_, slot, _, _, _, _)) = (
        space0::<&str, nom::error::Error<&str>>,
        uint,
        tag(" | task "),
        int,
        char(' '),
        char('|'),
    )
        .parse(rest)
        .ok()?;
    let slot = u32::try_from(slot).ok()?;
    let body = body.strip_prefix(' ').unwrap_or(body);
    Some(SlotHead {
        function,
        slot,
        body,
    })
}

/// `srv  %12.*s: body`: the function name and the body.
pub fn server_head(message: &str) -> Option<(&str, &str)> {
    let rest = message.strip_prefix("srv ")?;
    let colon = rest.find(": ")?;
    let function = rest[..colon].trim_start();
    if function.is_empty() || function.len() > 16 || function.contains(' ') {
        return None;
    }
    Some((function, &rest[colon + 2..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_are_optional_and_read_in_order() {
        let head = split("[42027] 1.37.495.377 I slot print_timing: id  0 | task 388 | ");
        assert_eq!(head.port, Some(42027));
        assert_eq!(head.uptime_us, Some(97_495_377));
        assert_eq!(head.message, "slot print_timing: id  0 | task 388 | ");
        let head = split("[42027] prompt eval time = 1 ms");
        assert_eq!((head.port, head.uptime_us), (Some(42027), None));
        assert_eq!(split("       eval time").message, "       eval time");
        // Minutes are not padded and pass 99.
        assert_eq!(split("317.06.410.187 I x").uptime_us, Some(19_026_410_187));
        assert_eq!(split("[99999] x").port, None);
        assert_eq!(split("1.75.000.000 I x").uptime_us, None);
    }

    #[test]
    fn slot_heads_keep_the_slot_and_drop_the_task() {
        let head = slot_head("slot      release: id  3 | task -1 | stop processing").unwrap();
        assert_eq!(
            (head.function, head.slot, head.body),
            ("release", 3, "stop processing")
        );
        let head = slot_head("slot print_timing: id 12 | task 0 |").unwrap();
        assert_eq!((head.slot, head.body), (12, ""));
        assert!(slot_head("slot 0 : in cache: 0 tokens | to process: 492 tokens").is_none());
        // A short line, and one with a multi-byte character early on, still read.
        let head = slot_head("slot run: id 1 | task 2 |").unwrap();
        assert_eq!((head.function, head.slot, head.body), ("run", 1, ""));
        let head = slot_head("slot release: id 1 | task 2 | café ☕ done").unwrap();
        assert_eq!(head.body, "café ☕ done");
        assert!(slot_head("slot é: the rest of some prose mentions : id 4 | task 1 |").is_none());
        assert_eq!(
            server_head("srv  update_slots: all slots are idle"),
            Some(("update_slots", "all slots are idle"))
        );
    }
}
