//! The line KoboldCpp prints when a generation finishes (`gpttype_generate()` in
//! `gpttype_adapter.cpp`), in the shapes it has had since it was named `CtxLimit`:
//!
//! - 1.57 to 1.70.1: `CtxLimit: %d/%d, Process:%.2fs (%.1fms/T = %.2fT/s), Generate:%.2fs
//!   (%.1fms/T = %.2fT/s), Total:%.2fs (%.2fT/s)`;
//! - 1.71 to 1.73: `CtxLimit:%d/%d, Amt:%d/%d, ` before `Process:`;
//! - 1.73.1 to 1.76: `Init:%.2fs, ` after `Amt`;
//! - later releases: behind a `[hh:mm:ss] ` clock ([`super::head`]), the same line with
//!   `--debugmode`, else a short one without the `ms/T = ` parts and without the total's rate:
//!   `Process:%.2fs (%.2fT/s), Generate:%.2fs (%.2fT/s), Total:%.2fs`.
//!
//! The parts come in one order in every release, so the line is read as one sequence whose
//! later parts are optional; anything after `Total` rejects it (a changed format).

use nom::{
    bytes::complete::tag,
    character::complete::char,
    combinator::opt,
    sequence::{preceded, terminated},
    IResult, Parser,
};
use serde::Serialize;

use crate::number::{float, uint};

/// What a stats line says, as printed; `None` where the release does not print the part.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct KoboldcppStats {
    /// `CtxLimit: a/b`, a: tokens in the context after the generation (prompt and output).
    pub context_tokens: u64,
    /// `CtxLimit: a/b`, b: the context size the request was served with (its
    /// `max_context_length`, at most `--contextsize`).
    pub context_limit: u64,
    /// `Amt: g/r`, g: tokens generated (1.71+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generated_tokens: Option<u64>,
    /// `Amt: g/r`, r: tokens the request asked for at most (its `max_length`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_tokens: Option<u64>,
    /// `Init:` seconds before prompt processing (1.73.1+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub init_seconds: Option<f64>,
    pub process: Phase,
    pub generate: Phase,
    /// `Total:` seconds: `Process` plus `Generate`, as measured.
    pub total_seconds: f64,
    /// `Total: (x T/s)`: generated tokens over the total seconds (not in the short line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_tokens_per_second: Option<f64>,
}

/// `Process:` or `Generate:`: seconds, and the rate KoboldCpp derived from them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Phase {
    pub seconds: f64,
    /// `%.1fms/T`: milliseconds per token (not in the short line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ms_per_token: Option<f64>,
    /// `%.2fT/s`: tokens per second (`inf` when the phase took no measurable time).
    pub tokens_per_second: f64,
}

/// True when a message is a stats line's start, whatever follows: a cut or changed stats line.
pub fn starts(message: &str) -> bool {
    message.starts_with(super::head::OPENING)
}

/// Reads a whole message from `CtxLimit:` to the line's end (blanks after it allowed).
pub fn parse(message: &str) -> Option<KoboldcppStats> {
    let (rest, stats) = stats(message).ok()?;
    rest.trim_end().is_empty().then_some(stats)
}

/// `a/b`.
fn pair(input: &str) -> IResult<&str, (u64, u64)> {
    (uint, preceded(char('/'), uint)).parse(input)
}

/// `%.2fs`.
fn seconds(input: &str) -> IResult<&str, f64> {
    terminated(float, char('s')).parse(input)
}

/// `%.2fT/s`.
fn rate(input: &str) -> IResult<&str, f64> {
    terminated(float, tag("T/s")).parse(input)
}

/// `%.2fs (%.1fms/T = %.2fT/s)` or `%.2fs (%.2fT/s)`.
fn phase(input: &str) -> IResult<&str, Phase> {
    let per_token = terminated(float, tag("ms/T = "));
    (seconds, tag(" ("), opt(per_token), rate, char(')'))
        .map(|(seconds, _, ms_per_token, tokens_per_second, _)| Phase {
            seconds,
            ms_per_token,
            tokens_per_second,
        })
        .parse(input)
}

fn stats(input: &str) -> IResult<&str, KoboldcppStats> {
    let (rest, (context, amount, init_seconds)) = (
        preceded((tag(super::head::OPENING), opt(char(' '))), pair),
        opt(preceded(tag(", Amt:"), pair)),
        opt(preceded(tag(", Init:"), seconds)),
    )
        .parse(input)?;
    let (rest, (process, generate, total_seconds, total_tokens_per_second)) = (
        preceded(tag(", Process:"), phase),
        preceded(tag(", Generate:"), phase),
        preceded(tag(", Total:"), seconds),
        opt(preceded(tag(" ("), terminated(rate, char(')')))),
    )
        .parse(rest)?;
    let stats = KoboldcppStats {
        context_tokens: context.0,
        context_limit: context.1,
        generated_tokens: amount.map(|a| a.0),
        requested_tokens: amount.map(|a| a.1),
        init_seconds,
        process,
        generate,
        total_seconds,
        total_tokens_per_second,
    };
    Ok((rest, stats))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_1_57_line_has_no_amount_and_no_init() {
        // LostRuins/koboldcpp#852, as pasted.
        let s = parse("CtxLimit: 1754/8192, Process:25.05s (14.9ms/T = 66.89T/s), Generate:59.05s (152.6ms/T = 6.55T/s), Total:84.11s (4.60T/s)").unwrap();
        assert_eq!((s.context_tokens, s.context_limit), (1754, 8192));
        assert_eq!((s.generated_tokens, s.init_seconds), (None, None));
        assert_eq!(s.process.ms_per_token, Some(14.9));
        assert_eq!(s.generate.tokens_per_second, 6.55);
        assert_eq!(
            (s.total_seconds, s.total_tokens_per_second),
            (84.11, Some(4.6))
        );
    }

    #[test]
    fn later_lines_add_the_amount_and_init() {
        let s = parse("CtxLimit:2310/8192, Amt:211/512, Init:0.03s, Process:1.52s (1.5ms/T = 688.16T/s), Generate:9.73s (46.1ms/T = 21.69T/s), Total:11.25s (18.76T/s)").unwrap();
        assert_eq!(
            (s.generated_tokens, s.requested_tokens),
            (Some(211), Some(512))
        );
        assert_eq!(s.init_seconds, Some(0.03));
    }

    #[test]
    fn the_short_line_has_no_per_token_times_and_no_total_rate() {
        let s = parse("CtxLimit:2310/8192, Amt:211/512, Init:0.03s, Process:1.52s (688.16T/s), Generate:9.73s (21.69T/s), Total:11.25s").unwrap();
        assert_eq!(
            (s.process.ms_per_token, s.total_tokens_per_second),
            (None, None)
        );
        assert_eq!(s.process.tokens_per_second, 688.16);
    }

    #[test]
    fn an_unmeasurable_phase_prints_an_infinite_rate() {
        let s = parse("CtxLimit:12/4096, Amt:0/16, Init:0.00s, Process:0.00s (0.0ms/T = infT/s), Generate:0.00s (0.0ms/T = infT/s), Total:0.00s (0.00T/s)").unwrap();
        assert_eq!(s.process.tokens_per_second, f64::INFINITY);
    }

    #[test]
    fn cut_or_extended_lines_do_not_parse_but_start_one() {
        let cut = "CtxLimit: 41420/65536, Process:5.91s (54.2ms/T = 18.43T/s), Generate:199.18s (3830.3ms/T = 0.26T/s), Total:205.09s (0";
        assert!(parse(cut).is_none() && starts(cut));
        assert!(parse("CtxLimit:1/2, Amt:1/2, Init:0.01s, Process:0.01s (1.00T/s), Generate:0.01s (1.00T/s), Total:0.02s, Draft:3").is_none());
        assert!(!starts(
            "ContextLimit: 614/2048, Processing:0.43s (5.5ms/T)"
        ));
    }
}
