//! Which vLLM wrote a log, and what that changes in how its lines are read.
//!
//! The same words have meant different things: `Avg prompt throughput` counts every prompt
//! token up to 0.15.x and only the ones computed locally from 0.16.0
//! (`LoggingStatLogger._track_iteration_stats` adds `prompt_token_stats.computed` since then;
//! checked in the 0.15.1 and 0.16.0 wheels), and a line with no tokens was always printed
//! before idle lines were suppressed (V0 0.6.5, V1 0.8.5).

use serde::{Deserialize, Serialize};

/// A vLLM version as printed (`0.14.1`, `0.10.2.dev378+g4d7fe40fc.d20250829`) and its release
/// numbers when they can be trusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VllmVersion {
    pub text: String,
    /// `(major, minor, patch)`; `None` for a build that does not know its release
    /// (`0.1.dev12774+g...`, a source checkout without tags).
    pub release: Option<(u32, u32, u32)>,
}

/// Where the version of a log came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VersionSource {
    /// A version or engine-config line in the log.
    Line,
    /// `--vllm-version` or the log's `vllm_version` in the config file.
    Setting,
}

impl VllmVersion {
    pub fn parse(text: &str) -> VllmVersion {
        let text = text.trim().trim_start_matches('v');
        VllmVersion {
            text: text.to_string(),
            release: release_of(text),
        }
    }

    /// Whether a V1 `Avg prompt throughput` counts every prompt token (vLLM's own
    /// `vllm:prompt_tokens_total`) rather than only those computed locally. A version that is
    /// not known reads as today's vLLM.
    pub fn v1_prompt_counts_all_tokens(version: Option<&VllmVersion>) -> bool {
        version
            .and_then(|v| v.release)
            .is_some_and(|release| release < (0, 16, 0))
    }

    /// Whether an engine prints a stats line every interval even with nothing to say. Unknown
    /// versions suppress idle lines, as every version since 0.8.5 does.
    pub fn prints_idle_lines(version: Option<&VllmVersion>, v0_line: bool) -> bool {
        let suppressing_since = if v0_line { (0, 6, 5) } else { (0, 8, 5) };
        version
            .and_then(|v| v.release)
            .is_some_and(|release| release < suppressing_since)
    }
}

/// `major.minor[.patch]` at the start of a version string. `0.1.devN` is what a vLLM built from
/// a checkout without tags calls itself, whatever its age: no release.
fn release_of(text: &str) -> Option<(u32, u32, u32)> {
    let mut parts = text.split(['.', '+', '-']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    let patch_part = parts.next().unwrap_or("0");
    if (major, minor) == (0, 1) && patch_part.starts_with("dev") {
        return None;
    }
    let digits: String = patch_part
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    let patch = digits.parse().unwrap_or(0);
    Some((major, minor, patch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_are_read_from_every_spelling() {
        assert_eq!(VllmVersion::parse("0.14.1").release, Some((0, 14, 1)));
        assert_eq!(VllmVersion::parse("v0.16.0").release, Some((0, 16, 0)));
        assert_eq!(
            VllmVersion::parse("0.10.2.dev378+g4d7fe40fc.d20250829").release,
            Some((0, 10, 2))
        );
        assert_eq!(VllmVersion::parse("0.11.1rc2").release, Some((0, 11, 1)));
        assert_eq!(VllmVersion::parse("0.9.0.1").release, Some((0, 9, 0)));
        assert_eq!(
            VllmVersion::parse("0.1.dev12774+g459541683.d20260206").release,
            None
        );
        assert_eq!(VllmVersion::parse("nightly").release, None);
    }

    #[test]
    fn prompt_throughput_counts_every_token_up_to_0_15() {
        let counts_all =
            |v: &str| VllmVersion::v1_prompt_counts_all_tokens(Some(&VllmVersion::parse(v)));
        assert!(counts_all("0.15.1"));
        assert!(counts_all("0.8.5"));
        assert!(!counts_all("0.16.0"));
        assert!(!counts_all("0.33.0"));
        assert!(!counts_all("0.1.dev12774+g459541683"));
        assert!(!VllmVersion::v1_prompt_counts_all_tokens(None));
    }

    #[test]
    fn idle_lines_are_printed_before_their_suppression() {
        let idle =
            |v: &str, v0: bool| VllmVersion::prints_idle_lines(Some(&VllmVersion::parse(v)), v0);
        assert!(idle("0.6.4", true));
        assert!(!idle("0.6.5", true));
        assert!(idle("0.8.4", false));
        assert!(!idle("0.8.5", false));
        assert!(!VllmVersion::prints_idle_lines(None, false));
    }
}
