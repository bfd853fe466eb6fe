//! Replay goldens: every `fixtures/replay/<engine>-<version>-<case>.log` goes through the whole
//! pipeline (reader, envelope, grammar, state, exposition) in one-shot mode, and its samples,
//! sorted, must equal `<same name>.prom`. A `<same name>.args` file adds flags (one per line).
//! Times without a zone are read as UTC (`--log-timezone UTC`), so the goldens are the same on
//! every machine, whatever its `TZ`.
//!
//! After a deliberate change, `LLMTAIL_BLESS=1 cargo test --test integration replay` rewrites
//! the goldens; review the diff before committing it.

use std::path::{Path, PathBuf};

use clap::Parser;
use llmtail::cli::Cli;
use llmtail::clock::Clock;
use llmtail::config::Settings;

/// 2026-12-31T12:00:00Z: after every fixture's yearless timestamp, so they all read as 2026.
const REPLAY_NOW: f64 = 1_798_718_400.0;

pub fn replay_logs() -> Vec<PathBuf> {
    let mut logs: Vec<PathBuf> = std::fs::read_dir("fixtures/replay")
        .expect("fixtures/replay")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    logs
}

/// The samples of an exposition, sorted; build info is left out (it names the version).
fn samples(exposition: &str) -> Vec<String> {
    let mut lines: Vec<String> = exposition
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty() && !l.starts_with("llmtail_build_info"))
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

/// The one-shot exposition of a replay log, with its `.args`.
pub fn replay(log: &Path) -> String {
    let mut argv = vec![
        "llmtail".to_string(),
        "--log".into(),
        log.display().to_string(),
        "--one-shot".into(),
        "--log-timezone".into(),
        "UTC".into(),
    ];
    if let Ok(args) = std::fs::read_to_string(log.with_extension("args")) {
        argv.extend(
            args.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(String::from),
        );
    }
    one_shot(&argv)
}

/// The one-shot exposition for a command line (`argv[0]` included), read at the replay time.
pub fn one_shot(argv: &[String]) -> String {
    let settings = Settings::from_cli(Cli::try_parse_from(argv).expect("flags parse"))
        .expect("valid settings");
    let mut out = Vec::new();
    llmtail::run::one_shot(&settings, Clock::fixed(REPLAY_NOW), &mut out).expect("one-shot run");
    String::from_utf8(out).expect("utf-8 exposition")
}

#[test]
fn every_replay_log_yields_its_golden_exposition() {
    let bless = std::env::var_os("LLMTAIL_BLESS").is_some_and(|v| v == "1");
    let logs = replay_logs();
    assert!(!logs.is_empty(), "no replay logs in fixtures/replay");
    let mut failures = Vec::new();
    for log in &logs {
        let got = samples(&replay(log));
        let golden = log.with_extension("prom");
        if bless {
            std::fs::write(&golden, got.join("\n") + "\n").unwrap();
            continue;
        }
        let expected = match std::fs::read_to_string(&golden) {
            Ok(text) => samples(&text),
            Err(_) => {
                failures.push(format!(
                    "{}: no golden; run with LLMTAIL_BLESS=1 and review it",
                    golden.display()
                ));
                continue;
            }
        };
        if got != expected {
            let missing: Vec<_> = expected.iter().filter(|l| !got.contains(l)).collect();
            let extra: Vec<_> = got.iter().filter(|l| !expected.contains(l)).collect();
            failures.push(format!(
                "{}:\n  expected but not produced:\n    {}\n  produced but not expected:\n    {}",
                log.display(),
                missing
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("\n    "),
                extra
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("\n    ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} replays differ:\n{}",
        failures.len(),
        logs.len(),
        failures.join("\n")
    );
}
