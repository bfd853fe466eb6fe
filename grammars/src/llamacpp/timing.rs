//! The bodies of `print_timings()` and its progress lines, as every era prints them once the
//! heads are off (the format strings are C `printf`'s; padding varies by era, so runs of spaces
//! are read as one):
//!
//! - `prompt eval time = %10.2f ms / %5d tokens (%8.2f ms per token, %8.2f tokens per second)`
//!   (2024's JSON and `--log-format text` pad the name: `prompt eval time     =`);
//! - `       eval time = ... / %5d tokens (...)` (late 2023: `runs`; 2024: `generation eval time =
//!   ... / N runs   (...)`);
//! - `      total time = %10.2f ms / %5d tokens` (late 2023 and 2024: `total time = %10.2f ms`);
//! - `   graphs reused = %10d` (May 2026 on);
//! - `draft acceptance rate = %0.5f (%5d accepted / %5d generated)` (block era),
//!   `draft acceptance = %0.5f (%5d accepted / %5d generated)[, mean len = %5.2f]` (2026),
//!   `..., mean acceptance length = %5.2f, acceptance rate per position = (...)` (PR #24536);
//! - `n_gen = %6d, tg = %6.2f t/s, tg_3s = %6.2f t/s` (also `n_decoded = `, no window, or
//!   `tg(last 5s) = `), at most every 3 s while a slot generates;
//! - `prompt processing, n_tokens = %6d, progress = %.2f, t = %6.2f s / %.2f tokens per second`
//!   while a long prompt is read.
//!
//! The per-token figures are derived from the time and the count; with no tokens they are
//! `nan` or `inf` (`-nan(ind)` on Windows), kept as `None`.

use nom::{
    branch::alt,
    bytes::complete::{tag, take_while},
    character::complete::{char, space0, space1},
    combinator::{opt, value},
    sequence::{delimited, preceded},
    IResult, Parser,
};

use super::{LlamacppRecord, Origin};
use crate::lex::number::{float, uint};

/// The words a timing body starts with: a body that starts with one and does not read is the
/// engine's own line, cut off or changed (see [`super::claimed`]).
pub const STARTS: &[&str] = &[
    "prompt eval time",
    "eval time",
    "generation eval time",
    "total time",
    "graphs reused",
    "draft acceptance",
    "n_gen =",
    "n_decoded =",
    "prompt processing, ",
];

/// True when `body` (leading spaces removed) starts as a timing body does.
pub fn starts_as_timing(body: &str) -> bool {
    STARTS.iter().any(|s| body.starts_with(s))
}

/// Reads a timing body (leading spaces allowed); `origin` says where it was written.
pub fn parse(body: &str, origin: Origin) -> Option<LlamacppRecord> {
    let body = body.trim();
    let (rest, record) = alt((
        |i| eval(i, "prompt eval time", origin, true),
        |i| eval(i, "generation eval time", origin, false),
        |i| eval(i, "eval time", origin, false),
        |i| total(i, origin),
        |i| graphs_reused(i, origin),
        |i| draft(i, origin),
        |i| generation_progress(i, origin),
        |i| prompt_progress(i, origin),
    ))
    .parse(body)
    .ok()?;
    rest.is_empty().then_some(record)
}

/// ` = ` with any padding around the sign.
fn equals(input: &str) -> IResult<&str, ()> {
    value((), (space0, char('='), space0)).parse(input)
}

/// A per-token figure: a number, or `None` for the `nan`/`inf` C prints when nothing was
/// timed or counted.
fn derived(input: &str) -> IResult<&str, Option<f64>> {
    let not_a_number = alt((
        tag("-nan(ind)"),
        tag("nan(ind)"),
        tag("-nan"),
        tag("nan"),
        tag("-inf"),
        tag("inf"),
    ));
    alt((value(None, not_a_number), float.map(Some))).parse(input)
}

/// `NAME = T ms / N tokens (x ms per token, y tokens per second)`.
fn eval<'a>(
    input: &'a str,
    name: &'static str,
    origin: Origin,
    prompt: bool,
) -> IResult<&'a str, LlamacppRecord> {
    let (rest, (_, _, time_ms, _, _, tokens, _, rates)) = (
        tag(name),
        equals,
        float,
        tag(" ms /"),
        space0,
        uint,
        preceded(space1, alt((tag("tokens"), tag("runs")))),
        opt(preceded(
            space0,
            delimited(
                char('('),
                (
                    preceded(space0, derived),
                    tag(" ms per token,"),
                    preceded(space0, derived),
                    tag(" tokens per second"),
                ),
                char(')'),
            ),
        )),
    )
        .parse(input)?;
    let (ms_per_token, tokens_per_second) = match rates {
        Some((ms, _, tps, _)) => (ms, tps),
        None => (None, None),
    };
    let eval = Eval {
        origin,
        time_ms,
        tokens,
        ms_per_token,
        tokens_per_second,
    };
    Ok((
        rest,
        if prompt {
            LlamacppRecord::PromptEval(eval)
        } else {
            LlamacppRecord::Eval(eval)
        },
    ))
}

/// `total time = T ms[ / N tokens]`.
fn total(input: &str, origin: Origin) -> IResult<&str, LlamacppRecord> {
    let (rest, (_, _, time_ms, _, tokens)) = (
        tag("total time"),
        equals,
        float,
        tag(" ms"),
        opt(delimited((tag(" /"), space0), uint, tag(" tokens"))),
    )
        .parse(input)?;
    Ok((
        rest,
        LlamacppRecord::Total(Total {
            origin,
            time_ms,
            tokens,
        }),
    ))
}

/// `graphs reused = N`.
fn graphs_reused(input: &str, origin: Origin) -> IResult<&str, LlamacppRecord> {
    let (rest, (_, _, graphs_reused)) = (tag("graphs reused"), equals, uint).parse(input)?;
    Ok((
        rest,
        LlamacppRecord::GraphsReused {
            origin,
            graphs_reused,
        },
    ))
}

/// `draft acceptance[ rate] = r (a accepted / g generated)` and what 2026 builds add.
fn draft(input: &str, origin: Origin) -> IResult<&str, LlamacppRecord> {
    let (rest, (_, _, _, acceptance_rate, _, _, accepted, _, _, generated, _)) = (
        tag("draft acceptance"),
        opt(tag(" rate")),
        equals,
        float,
        tag(" ("),
        space0,
        uint,
        tag(" accepted /"),
        space0,
        uint,
        tag(" generated)"),
    )
        .parse(input)?;
    let (rest, mean_len) = opt(preceded(
        (
            tag(", mean "),
            alt((tag("len"), tag("acceptance length"))),
            equals,
        ),
        float,
    ))
    .parse(rest)?;
    // `acceptance rate per position = (0.805, 0.632, 0.483)`: the agent exports none of it.
    let (rest, _) = opt((
        tag(", acceptance rate per position"),
        equals,
        char('('),
        take_while(|c: char| c != ')'),
        char(')'),
    ))
    .parse(rest)?;
    Ok((
        rest,
        LlamacppRecord::DraftAcceptance(DraftAcceptance {
            origin,
            acceptance_rate,
            accepted,
            generated,
            mean_len,
        }),
    ))
}

/// `n_gen = N, tg = x t/s[, tg_3s = y t/s]` (`n_decoded`, `tg(last 5s)` in some 2026 builds).
fn generation_progress(input: &str, origin: Origin) -> IResult<&str, LlamacppRecord> {
    let (rest, (_, _, generated, _, _, tokens_per_second, _)) = (
        alt((tag("n_gen"), tag("n_decoded"))),
        equals,
        uint,
        tag(", tg"),
        equals,
        float,
        tag(" t/s"),
    )
        .parse(input)?;
    let (rest, window) = opt(delimited(
        (tag(", tg"), alt((tag("_3s"), tag("(last 5s)"))), equals),
        float,
        tag(" t/s"),
    ))
    .parse(rest)?;
    Ok((
        rest,
        LlamacppRecord::GenerationProgress {
            origin,
            generated,
            tokens_per_second,
            recent_tokens_per_second: window,
        },
    ))
}

/// `prompt processing, n_tokens = N, progress = p, t = s s / r tokens per second`.
fn prompt_progress(input: &str, origin: Origin) -> IResult<&str, LlamacppRecord> {
    let (rest, (_, _, tokens, _, _, progress, _, _, elapsed_s, _, _, tokens_per_second, _)) = (
        tag("prompt processing, n_tokens"),
        equals,
        uint,
        tag(", progress"),
        equals,
        float,
        tag(", t"),
        equals,
        float,
        tag(" s /"),
        space0,
        float,
        tag(" tokens per second"),
    )
        .parse(input)?;
    Ok((
        rest,
        LlamacppRecord::PromptProgress {
            origin,
            tokens,
            progress,
            elapsed_s,
            tokens_per_second,
        },
    ))
}

/// A prompt-eval or eval line.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Eval {
    #[serde(flatten)]
    pub origin: Origin,
    /// The time spent (`T ms`), in milliseconds: `t_prompt_processing` or `t_token_generation`.
    pub time_ms: f64,
    /// Prompt tokens computed (cache hits excluded), or tokens generated (`n_decoded`).
    pub tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ms_per_token: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens_per_second: Option<f64>,
}

/// A total-time line.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Total {
    #[serde(flatten)]
    pub origin: Origin,
    pub time_ms: f64,
    /// Prompt and generated tokens (2024 Oct on; earlier lines print only the time).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
}

/// A speculative-decoding summary of one task.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct DraftAcceptance {
    #[serde(flatten)]
    pub origin: Origin,
    /// `accepted / generated`, a fraction.
    pub acceptance_rate: f64,
    /// Draft tokens the target model accepted.
    pub accepted: u64,
    /// Draft tokens the drafter generated (and the target checked).
    pub generated: u64,
    /// `mean len` / `mean acceptance length`: tokens per verification step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_len: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_varies_by_era() {
        let o = Origin::default();
        for body in [
            "prompt eval time =     252.01 ms /     4 tokens (   63.00 ms per token,    15.87 tokens per second)",
            "prompt eval time     =    2684.39 ms /    27 tokens (   99.42 ms per token,    10.06 tokens per second)",
        ] {
            assert!(matches!(parse(body, o), Some(LlamacppRecord::PromptEval(_))), "{body}");
        }
        let Some(LlamacppRecord::Eval(e)) = parse(
            "generation eval time =    3559.27 ms /    25 runs   (  142.37 ms per token,     7.02 tokens per second)",
            o,
        ) else {
            panic!()
        };
        assert_eq!((e.time_ms, e.tokens), (3559.27, 25));
        let Some(LlamacppRecord::Eval(e)) = parse(
            "eval time =       0.00 ms /     0 tokens (    -nan ms per token,      inf tokens per second)",
            o,
        ) else {
            panic!()
        };
        assert_eq!((e.ms_per_token, e.tokens_per_second), (None, None));
        assert!(parse("prompt eval time =     252.01 ms /", o).is_none());
        assert!(parse("total time =    6243.66 ms trailing", o).is_none());
    }
}
