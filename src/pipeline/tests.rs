//! The pipeline as the reader drives it, on a clock the test sets.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use clap::Parser;

use super::*;

/// A clock that reads what the test last set.
fn settable_clock(at: f64) -> (Clock, Arc<AtomicU64>) {
    let now = Arc::new(AtomicU64::new(at.to_bits()));
    let reads = Arc::clone(&now);
    let clock = Clock::new(move || f64::from_bits(reads.load(Ordering::SeqCst)));
    (clock, now)
}

fn settings(args: &[&str]) -> Settings {
    let mut argv = vec!["llmtail"];
    argv.extend_from_slice(args);
    Settings::from_cli(crate::cli::Cli::try_parse_from(argv).unwrap()).unwrap()
}

/// A following pipeline over one glob, whose file `label` is discovered, opened, and gone at
/// clock time 1000.
fn glob_log_gone_at_1000(label: &str) -> (Pipeline, Arc<Mutex<State>>, Arc<AtomicU64>) {
    let pattern = "/var/log/llmtail-test/*.log";
    let settings = settings(&["--log", pattern, "--log-expiry", "10m"]);
    let state = new_state(&settings);
    let (clock, now) = settable_clock(1000.0);
    let mut pipeline =
        Pipeline::new(&settings, Arc::clone(&state), clock).reading(Reading::Following);
    let log = LogId(0);
    let source = LogSpec::Glob(pattern.to_string());
    pipeline.event(
        log,
        TailEvent::Discovered {
            label: Arc::from(label),
            source,
        },
    );
    pipeline.event(log, TailEvent::Opened(None));
    pipeline.event(log, TailEvent::Gone);
    pipeline.event(log, TailEvent::Closed);
    (pipeline, state, now)
}

#[test]
fn an_expired_glob_log_is_forgotten_without_a_scrape() {
    let (mut pipeline, state, now) = glob_log_gone_at_1000("/var/log/llmtail-test/a.log");
    let kept = |state: &Arc<Mutex<State>>| state.lock().unwrap().iter_logs().count();

    now.store((1000.0 + 9.0 * 60.0_f64).to_bits(), Ordering::SeqCst);
    pipeline.tick();
    assert_eq!(kept(&state), 1, "kept within the expiry");

    now.store((1000.0 + 10.0 * 60.0_f64).to_bits(), Ordering::SeqCst);
    pipeline.tick();
    assert_eq!(
        kept(&state),
        0,
        "forgotten on the tick once the expiry has passed"
    );
}

#[test]
fn a_one_shot_pipeline_leaves_judging_to_whoever_prints() {
    let settings = settings(&[
        "--log",
        "/var/log/llmtail-test/*.log",
        "--log-expiry",
        "10m",
    ]);
    let state = new_state(&settings);
    let (clock, now) = settable_clock(1000.0);
    let mut pipeline = Pipeline::new(&settings, Arc::clone(&state), clock);
    let log = LogId(0);
    let label: Arc<str> = Arc::from("/var/log/llmtail-test/a.log");
    let source = LogSpec::Glob("/var/log/llmtail-test/*.log".to_string());
    pipeline.event(log, TailEvent::Discovered { label, source });
    pipeline.event(log, TailEvent::Gone);

    now.store(1_000_000.0_f64.to_bits(), Ordering::SeqCst);
    pipeline.tick();
    assert_eq!(state.lock().unwrap().iter_logs().count(), 1);
}

#[test]
fn a_log_that_comes_back_under_its_label_is_one_log_at_its_new_index() {
    let (mut pipeline, state, _) = glob_log_gone_at_1000("/var/log/llmtail-test/a.log");
    let label: Arc<str> = Arc::from("/var/log/llmtail-test/a.log");
    let source = LogSpec::Glob("/var/log/llmtail-test/*.log".to_string());
    pipeline.event(LogId(3), TailEvent::Discovered { label, source });

    let state = state.lock().unwrap();
    assert_eq!(state.find_log("/var/log/llmtail-test/a.log"), Some(3));
    assert_eq!(state.iter_logs().count(), 1);
    drop(state);
    assert!(
        pipeline.followed.get_mut(0).is_none(),
        "the old index is let go of"
    );
    assert!(pipeline.followed.get_mut(3).is_some());
}
