//! The SGLang record head: what comes before a scheduler message.
//!
//! `configure_logger()` writes `[%(asctime)s{.ms}{ranks}] message`: the date and time (only
//! `HH:MM:SS` in 0.2.14-0.3.3, `.mmm` with `SGLANG_LOG_MS=1` from 0.5.6) and one tag per
//! parallel dimension (`DP0 TP0`, `ATTN_CP4 TP4`; the order changed between versions, so tags
//! are read by name). Before 0.2.14 there is no bracket, and 0.1.20-0.2.13 start the message
//! with `[gpu_id=N] ` or `[gpu=N] `. A writer may put its own prefix in front: Ray's
//! `(SGLangEngine pid=41820) `, `docker compose`'s `sglang-1  | `. Anything else in front
//! (`prompt='[2026-...`) is a request log quoting the line, not the engine's record.

use nom::{
    bytes::complete::{tag, take_while1, take_while_m_n},
    character::complete::char,
    combinator::opt,
    IResult, Parser,
};
use serde::Serialize;

use crate::lex::number::uint;
use crate::LogTime;

/// The rank tags of a record head, and the GPU of a `[gpu_id=N] ` message prefix: the
/// scheduler that printed the line (with DP attention or context parallelism several print).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Ranks {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dp_rank: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pp_rank: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attn_cp_rank: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moe_dp_rank: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tp_rank: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ep_rank: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_id: Option<u32>,
}

/// A line split into its head and its message.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Head<'a> {
    pub time: Option<LogTime>,
    /// Ray's actor name (`SGLangEngine`), when a Ray prefix is in front.
    pub actor: Option<&'a str>,
    pub ranks: Ranks,
    pub message: &'a str,
}

/// Splits `line`; never fails (a line without a bracket is all message).
pub fn split(line: &str) -> Head<'_> {
    let rest = line.trim_start_matches([' ', '\t']);
    let rest = compose_prefix(rest).unwrap_or(rest);
    let (rest, actor) = match ray_prefix(rest) {
        Some((rest, actor)) => (rest, Some(actor)),
        None => (rest, None),
    };
    let (rest, time, mut ranks) = match bracket(rest) {
        Ok((rest, (time, ranks))) => (rest, Some(time), ranks),
        Err(_) => (rest, None, Ranks::default()),
    };
    let rest = match gpu_prefix(rest) {
        Ok((rest, gpu)) => {
            ranks.gpu_id = Some(gpu);
            rest
        }
        Err(_) => rest,
    };
    Head {
        time,
        actor,
        ranks,
        message: rest,
    }
}

/// `sglang-1  | ` (a short service name, no quotes: not a request log's text).
fn compose_prefix(line: &str) -> Option<&str> {
    // Bounded, so a long line without the separator costs constant time per head tried.
    let at = memchr::memmem::find(&line.as_bytes()[..line.len().min(80)], b" | ")?;
    let service = &line[..at];
    (!service.trim().is_empty() && !service.contains(['\'', '"', '|', '[', '(']))
        .then(|| &line[at + 3..])
}

/// `(SGLangEngine pid=41820) `.
fn ray_prefix(line: &str) -> Option<(&str, &str)> {
    let inner = line.strip_prefix('(')?;
    // An actor name and a pid are short: a bounded search keeps this constant-time.
    let inner_end = memchr::memmem::find(&inner.as_bytes()[..inner.len().min(128)], b") ")? + 1;
    let inner = &line[1..inner_end];
    let (actor, pid) = inner.rsplit_once(" pid=")?;
    (!actor.is_empty()
        && !actor.contains(' ')
        && !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit()))
    .then(|| (&line[inner_end + 2..], actor))
}

fn digits<'a>(n: usize) -> impl Parser<&'a str, Output = u32, Error = nom::error::Error<&'a str>> {
    take_while_m_n(n, n, |c: char| c.is_ascii_digit()).map_res(str::parse::<u32>)
}

fn clock(input: &str) -> IResult<&str, (u32, u32, u32, u32)> {
    let (rest, (hour, _, minute, _, second, millis)) = (
        digits(2),
        char(':'),
        digits(2),
        char(':'),
        digits(2),
        opt((char('.'), digits(3)).map(|(_, ms)| ms)),
    )
        .parse(input)?;
    Ok((rest, (hour, minute, second, millis.unwrap_or(0))))
}

fn verify_failed(input: &str) -> nom::Err<nom::error::Error<&str>> {
    nom::Err::Error(nom::error::Error::new(input, nom::error::ErrorKind::Verify))
}

/// `[2025-02-27 04:37:29.123 DP0 TP0] ` or `[16:43:29 TP0] `. A head with only a clock gives a
/// time without a date ([`LogTime::time_only`]), which the agent reads on the day of arrival.
fn bracket(input: &str) -> IResult<&str, (LogTime, Ranks)> {
    let (rest, _) = char('[').parse(input)?;
    let (rest, date) = opt((
        digits(4),
        char('-'),
        digits(2),
        char('-'),
        digits(2),
        char(' '),
    ))
    .parse(rest)?;
    let (mut rest, (hour, minute, second, millis)) = clock(rest)?;
    let (year, month, day) = match date {
        Some((year, _, month, _, day, _)) => (year, month, day),
        None => (0, 1, 1),
    };
    if !LogTime::is_valid_clock(month, day, hour, minute, second) {
        return Err(verify_failed(input));
    }
    let mut ranks = Ranks::default();
    while let Ok((after, (_, name, number))) = (
        char(' '),
        take_while1(|c: char| c.is_ascii_uppercase() || c == '_'),
        uint,
    )
        .parse(rest)
    {
        let number = u32::try_from(number).map_err(|_| verify_failed(rest))?;
        let slot = match name {
            "DP" => &mut ranks.dp_rank,
            "PP" => &mut ranks.pp_rank,
            "ATTN_CP" => &mut ranks.attn_cp_rank,
            "MOE_DP" => &mut ranks.moe_dp_rank,
            "TP" => &mut ranks.tp_rank,
            "EP" => &mut ranks.ep_rank,
            // A tag a later version adds: the head is still SGLang's.
            _ => {
                rest = after;
                continue;
            }
        };
        *slot = Some(number);
        rest = after;
    }
    let (rest, _) = tag("] ").parse(rest)?;
    let (clock, nanos) = ((hour as u8, minute as u8, second as u8), millis * 1_000_000);
    let time = match date {
        Some(_) => crate::lex::time::build(Some(year), month, day, clock, nanos, None)
            .ok_or_else(|| verify_failed(input))?,
        None => LogTime::time_only(clock.0, clock.1, clock.2, nanos),
    };
    Ok((rest, (time, ranks)))
}

/// `[gpu_id=0] ` (0.1.20-0.2.6) or `[gpu=0] ` (0.2.7-0.2.13).
fn gpu_prefix(input: &str) -> IResult<&str, u32> {
    let (rest, _) = char('[').parse(input)?;
    let (rest, _) = nom::branch::alt((tag("gpu_id="), tag("gpu="))).parse(rest)?;
    let (rest, gpu) = uint.map_res(u32::try_from).parse(rest)?;
    let (rest, _) = tag("] ").parse(rest)?;
    Ok((rest, gpu))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_rank_tags_by_name_in_any_order() {
        let h = split("[2026-07-10 17:00:22.123 DP1 PP0 ATTN_CP4 MOE_DP2 TP4 EP3] Decode");
        assert_eq!(h.message, "Decode");
        assert_eq!(h.time.unwrap().to_string(), "2026-07-10 17:00:22.123");
        let r = h.ranks;
        assert_eq!(
            (
                r.dp_rank,
                r.pp_rank,
                r.attn_cp_rank,
                r.moe_dp_rank,
                r.tp_rank,
                r.ep_rank
            ),
            (Some(1), Some(0), Some(4), Some(2), Some(4), Some(3))
        );
    }

    #[test]
    fn wrappers_and_gpu_prefixes() {
        let h = split("(SGLangEngine pid=41820) [2026-03-22 13:53:37 TP0] Decode");
        assert_eq!((h.actor, h.message), (Some("SGLangEngine"), "Decode"));
        let h = split("sglang-1  | [gpu=2] Decode");
        assert_eq!((h.ranks.gpu_id, h.message), (Some(2), "Decode"));
        let h = split("[16:43:29 TP0] Prefill");
        assert_eq!(
            (h.time, h.ranks.tp_rank, h.message),
            (Some(LogTime::time_only(16, 43, 29, 0)), Some(0), "Prefill")
        );
    }

    #[test]
    fn a_quote_is_no_head() {
        let h = split("prompt='[2026-07-10 17:00:22 TP0] Decode");
        assert!(h.time.is_none());
        assert!(h.message.starts_with("prompt="));
    }
}
