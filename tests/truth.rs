//! What llmtail rebuilds from a vLLM log, against what vLLM's own exporter said at the same
//! moment. Each `fixtures/truth/<scenario>/` holds a log written by vLLM 0.32's real stat
//! loggers (driven by `../shared/tools/vllm-truth`, see `fixtures/README.md`) and
//! `native.csv`: vLLM's own Prometheus values right after every `log()` call, with the log's
//! length at that moment. The agent reads the log cut at each printed line, one-shot, and its
//! series must be within the budget of the native ones:
//!
//! - generation tokens and `local_compute` prompt tokens within 0.1% at the end and 1% at
//!   every printed line after the first; the first line within 5%;
//! - running and waiting equal at every printed line;
//! - no `vllm:prompt_tokens_total` (in 0.32 the line counts computed prompt tokens only).

use std::path::{Path, PathBuf};

use clap::Parser;
use llmtail::cli::Cli;
use llmtail::clock::Clock;
use llmtail::config::Settings;

use crate::support::agent::sample;

/// One row of `native.csv`: an engine at one `log()` call.
struct Native {
    offset: usize,
    engine: String,
    printed: bool,
    generation: f64,
    local_compute: f64,
    running: f64,
    waiting: f64,
}

fn scenarios() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("fixtures/truth")
        .expect("fixtures/truth")
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("native.csv").exists())
        .collect();
    dirs.sort();
    dirs
}

fn natives(dir: &Path) -> Vec<Native> {
    let text = std::fs::read_to_string(dir.join("native.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (offset, engine, printed) = (column("offset"), column("engine"), column("printed"));
    let (generation, local) = (
        column("generation_tokens_total"),
        column("prompt_local_compute_total"),
    );
    let (running, waiting) = (
        column("num_requests_running"),
        column("num_requests_waiting"),
    );
    lines
        .map(|line| {
            let cells: Vec<&str> = line.split(',').collect();
            let number = |i: usize| cells[i].parse::<f64>().unwrap();
            Native {
                offset: cells[offset].parse().unwrap(),
                engine: cells[engine].to_string(),
                printed: cells[printed] == "1",
                generation: number(generation),
                local_compute: number(local),
                running: number(running),
                waiting: number(waiting),
            }
        })
        .collect()
}

/// The agent's exposition of `log` as one-shot prints it.
fn one_shot(log: &Path) -> String {
    // vLLM's formatter wrote the truth logs in UTC (drive.py sets its converter to gmtime).
    let argv = [
        "llmtail",
        "--one-shot",
        "--log-timezone",
        "UTC",
        "--log",
        log.to_str().unwrap(),
    ];
    let settings = Settings::from_cli(Cli::try_parse_from(argv).unwrap()).unwrap();
    let mut out = Vec::new();
    llmtail::run::one_shot(&settings, Clock::fixed(1_798_718_400.0), &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn relative_error(got: f64, native: f64) -> f64 {
    if native == 0.0 {
        if got == 0.0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        (got - native) / native
    }
}

/// What one scenario got wrong, as lines of a report.
fn check(dir: &Path) -> Vec<String> {
    let name = dir.file_name().unwrap().to_string_lossy().to_string();
    let log = std::fs::read(dir.join("vllm.log")).unwrap();
    let cut = tempfile::tempdir().unwrap();
    let cut_log = cut.path().join("vllm.log");
    let rows = natives(dir);
    // Each engine's last printed line: the end of the run, where the budget is tightest.
    let last_printed: Vec<usize> = {
        let mut last = std::collections::HashMap::new();
        for (i, row) in rows.iter().enumerate().filter(|(_, r)| r.printed) {
            last.insert(row.engine.clone(), i);
        }
        last.into_values().collect()
    };
    let mut problems = Vec::new();
    let mut seen_first = std::collections::HashSet::new();
    let mut worst = (0.0_f64, String::new());
    let mut first_errors = Vec::new();
    let mut final_errors = Vec::new();
    for (i, row) in rows.iter().enumerate().filter(|(_, r)| r.printed) {
        std::fs::write(&cut_log, &log[..row.offset]).unwrap();
        let metrics = one_shot(&cut_log);
        let engine = [("engine", row.engine.as_str())];
        let got = |name: &str, extra: &[(&str, &str)]| {
            let labels: Vec<_> = engine.iter().chain(extra).copied().collect();
            sample(&metrics, name, &labels).unwrap_or(f64::NAN)
        };
        let generation = got("vllm:generation_tokens_total", &[]);
        let local = got(
            "vllm:prompt_tokens_by_source_total",
            &[("source", "local_compute")],
        );
        let first = seen_first.insert(row.engine.clone());
        let at_end = last_printed.contains(&i);
        let budget = if at_end {
            0.001
        } else if first {
            0.05
        } else {
            0.01
        };
        for (what, value, native) in [
            ("generation tokens", generation, row.generation),
            ("local_compute prompt tokens", local, row.local_compute),
        ] {
            let error = relative_error(value, native);
            if !first && error.abs() > worst.0 {
                worst = (error.abs(), format!("{what}, byte {}", row.offset));
            }
            if first {
                first_errors.push(format!("{what} {:+.3}%", error * 100.0));
            }
            if at_end {
                final_errors.push(format!("{what} {:+.4}%", error * 100.0));
            }
            if error.is_nan() || error.abs() > budget {
                problems.push(format!(
                    "{name}, engine {}, line at byte {}: {what} {value} vs native {native} ({:+.3}%, budget {}%)",
                    row.engine, row.offset, error * 100.0, budget * 100.0
                ));
            }
        }
        for (what, value, native) in [
            (
                "running",
                got("vllm:num_requests_running", &[]),
                row.running,
            ),
            (
                "waiting",
                got("vllm:num_requests_waiting", &[]),
                row.waiting,
            ),
        ] {
            if value != native {
                problems.push(format!(
                    "{name}, engine {}, line at byte {}: {what} {value} vs native {native}",
                    row.engine, row.offset
                ));
            }
        }
        if metrics.contains("vllm:prompt_tokens_total{") {
            problems.push(format!(
                "{name}: vllm:prompt_tokens_total exported for a 0.32 log"
            ));
        }
    }
    eprintln!(
        "{name}: end {}; first line {}; worst after the first line {:.4}% ({})",
        final_errors.join(", "),
        first_errors.join(", "),
        worst.0 * 100.0,
        worst.1
    );
    problems
}

#[test]
fn rebuilt_counters_and_gauges_match_vllms_own_exporter() {
    let dirs = scenarios();
    assert!(dirs.len() >= 4, "truth scenarios missing in fixtures/truth");
    let problems: Vec<String> = dirs.iter().flat_map(|d| check(d)).collect();
    assert!(
        problems.is_empty(),
        "{} differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
