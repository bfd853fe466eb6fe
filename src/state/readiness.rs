//! Whether the logs the agent was given are being read: what `/-/ready` answers and what the
//! landing page warns of first. A log that cannot be opened (a typo'd path, a file the agent
//! may not read, a glob that matches nothing) and a log in which no line was ever recognised
//! are facts of the log's state, so that every reader of the state tells the same story.

use super::{LogState, State};
use crate::source::LogSpec;

/// A log given to the agent (`--log` or `[[log]]`), as the user wrote it: what a glob that
/// matches nothing is reported as, since no file of it has a state of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct GivenLog {
    pub spec: LogSpec,
    pub given: String,
}

/// Why a log's path could not be opened, until it is.
#[derive(Debug, Clone, PartialEq)]
pub struct CannotOpen {
    pub why: String,
    pub fix: String,
}

impl CannotOpen {
    /// The path names no file.
    pub fn missing() -> CannotOpen {
        CannotOpen {
            why: "does not exist".into(),
            fix: "check the path; it is waited for and read when it appears".into(),
        }
    }

    /// The path names a file that did not open.
    pub fn failed(error: &std::io::Error) -> CannotOpen {
        CannotOpen {
            why: error.to_string(),
            fix: crate::source::open_fix(error),
        }
    }

    /// A glob that matches no file.
    fn no_match() -> CannotOpen {
        CannotOpen {
            why: "matches no file".into(),
            fix: "check the pattern (quoted, so that the shell does not expand it) and the \
                  directory; files that match later are followed"
                .into(),
        }
    }
}

/// One log that is not being read, and why: a line of `/-/ready`'s answer.
#[derive(Debug, Clone, PartialEq)]
pub struct NotOpen {
    /// The path (as given or as a glob matched it), or the glob.
    pub log: String,
    pub cannot: CannotOpen,
}

impl std::fmt::Display for NotOpen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let NotOpen { log, cannot } = self;
        write!(f, "{log}: {}; fix: {}", cannot.why, cannot.fix)
    }
}

/// Lines read with none recognised before a following agent says the log is not one it reads.
/// A start-up prints its lines (about a hundred in the fixtures' whole logs) before the first
/// stats line, and between two stats lines (vLLM's come every 10 s) an engine may print a line
/// per request: 1,000 at 100 requests a second. 10,000 is ten times that, so a busy engine
/// between two stats lines is not mistaken for a wrong log, and a wrong log is told within
/// minutes of lines. A one-shot read sees the whole log, so there one line is enough
/// ([`LogState::nothing_recognised_in`]).
pub const UNRECOGNISED_AFTER_LINES: u64 = 10_000;

impl LogState {
    /// At least `lines` lines read, and not one of them an engine's line, parsed or rejected.
    pub fn nothing_recognised_in(&self, lines: u64) -> bool {
        self.io.lines_read >= lines.max(1) && self.parsed.is_empty() && self.rejected.is_empty()
    }

    /// What to say of a log in which nothing was recognised: what llmtail reads, and where
    /// the formats are listed.
    pub fn nothing_recognised_warning(&self) -> String {
        format!(
            "{}: {} lines read and none recognised. llmtail reads the stats lines of {}; the \
             formats and versions are listed in docs/REFERENCE.md. Is this an inference \
             engine's log, with its stats logging on?",
            self.label,
            self.io.lines_read,
            crate::engines::display_names()
        )
    }
}

impl State {
    /// Every given log that is not being read, and why: a path that does not open, and a glob
    /// with no file (one that matched files that are all gone counts).
    pub fn not_open(&self) -> Vec<NotOpen> {
        let unopened = self.shown_logs().filter_map(|log| {
            Some(NotOpen {
                log: log.label.to_string(),
                cannot: log.cannot_open.clone()?,
            })
        });
        let unmatched = self.given_logs.iter().filter_map(|given| {
            let LogSpec::Glob(_) = given.spec else {
                return None;
            };
            let matched = self
                .iter_logs()
                .any(|log| log.source == given.spec && log.gone_since.is_none());
            (!matched).then(|| NotOpen {
                log: given.given.clone(),
                cannot: CannotOpen::no_match(),
            })
        });
        unopened.chain(unmatched).collect()
    }

    /// Ready: every given log open and what it held at start-up read. `Err` says why not, one
    /// line per log.
    pub fn readiness(&self) -> Result<(), String> {
        let not_open = self.not_open();
        if !not_open.is_empty() {
            let lines: Vec<String> = not_open.iter().map(NotOpen::to_string).collect();
            return Err(format!(
                "Not ready: {} of the logs given cannot be opened\n{}\n",
                not_open.len(),
                lines.join("\n")
            ));
        }
        if !self.caught_up {
            return Err("Not ready: still reading what the logs already hold\n".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::StateSettings;
    use std::sync::Arc;

    fn state_with(given: &[LogSpec]) -> State {
        let mut state = State::new(StateSettings {
            stats_interval: crate::engines::parts::pacing::StatsInterval::Auto,
            model_name: None,
            constant_labels: Vec::new(),
            series: crate::engines::parts::caps::SeriesGuard { max_series: 100 },
            log_expiry: 60.0,
        });
        state.given_logs = given
            .iter()
            .map(|spec| GivenLog {
                spec: spec.clone(),
                given: match spec {
                    LogSpec::Path(p) => p.display().to_string(),
                    LogSpec::Glob(g) => g.clone(),
                    LogSpec::Stdin => "-".into(),
                },
            })
            .collect();
        state.caught_up = true;
        state
    }

    fn log(label: &str, source: LogSpec) -> LogState {
        LogState::new(Arc::from(label), source, Vec::new(), None, None)
    }

    #[test]
    fn a_glob_with_no_file_is_not_ready_and_says_so() {
        let glob = LogSpec::Glob("/var/log/vllm/*.log".into());
        let state = state_with(std::slice::from_ref(&glob));
        let why = state.readiness().unwrap_err();
        assert!(
            why.contains("/var/log/vllm/*.log: matches no file"),
            "{why}"
        );
    }

    #[test]
    fn a_missing_path_is_not_ready_until_it_opens() {
        let path = LogSpec::Path("/var/log/vlm.log".into());
        let mut state = state_with(std::slice::from_ref(&path));
        let mut missing = log("/var/log/vlm.log", path);
        missing.cannot_open = Some(CannotOpen::missing());
        state.insert_log(0, missing);
        let why = state.readiness().unwrap_err();
        assert!(why.contains("/var/log/vlm.log: does not exist; fix: check the path"));
        state.log_mut(0).unwrap().cannot_open = None;
        assert_eq!(state.readiness(), Ok(()));
    }

    #[test]
    fn a_glob_whose_files_are_all_gone_matches_no_file() {
        let glob = LogSpec::Glob("/logs/*.log".into());
        let mut state = state_with(std::slice::from_ref(&glob));
        state.insert_log(0, log("/logs/a.log", glob));
        assert_eq!(state.readiness(), Ok(()));
        state.log_mut(0).unwrap().gone_since = Some(1.0);
        assert!(state.readiness().is_err());
    }

    #[test]
    fn nothing_recognised_needs_the_lines_and_no_engine_line() {
        let mut log = log("/a.log", LogSpec::Path("/a.log".into()));
        assert!(!log.nothing_recognised_in(1), "no line read yet");
        log.io.lines_read = UNRECOGNISED_AFTER_LINES - 1;
        assert!(!log.nothing_recognised_in(UNRECOGNISED_AFTER_LINES));
        log.io.lines_read = UNRECOGNISED_AFTER_LINES;
        assert!(log.nothing_recognised_in(UNRECOGNISED_AFTER_LINES));
        let warning = log.nothing_recognised_warning();
        assert!(
            warning.contains("vLLM") && warning.contains("docs/REFERENCE.md"),
            "{warning}"
        );
        log.reject("vllm");
        assert!(
            !log.nothing_recognised_in(1),
            "a rejected line was an engine's"
        );
    }
}
