//! What a followed log costs in memory. Counted on the test's own thread with a counting
//! allocator, so the figure is the log's own heap, whatever the allocator keeps in reserve
//! and whatever other tests allocate meanwhile.

use std::sync::Arc;

use super::{LogState, StateSettings};
use crate::source::LogSpec;

fn settings() -> StateSettings {
    StateSettings {
        stats_interval: crate::engines::parts::pacing::StatsInterval::Auto,
        model_name: None,
        constant_labels: Vec::new(),
        series: crate::engines::parts::caps::SeriesGuard {
            max_series: 100_000,
        },
        log_expiry: 60.0,
    }
}

/// A log that has read `text`, a line every second, and the heap bytes it holds.
fn log_after(text: &str) -> (LogState, i64) {
    let settings = settings();
    let mut kept = None;
    let info = allocation_counter::measure(|| {
        let mut log = LogState::new(
            Arc::from("/var/log/vllm/engine.log"),
            LogSpec::Path("/var/log/vllm/engine.log".into()),
            Vec::new(),
            None,
            None,
        );
        let mut series = 0;
        for (n, line) in text.lines().enumerate() {
            let at = 1_800_000_000.0 + n as f64;
            llmtail_grammars::each_record(line, |outcome| {
                if let llmtail_grammars::Outcome::Parsed(parsed) = outcome {
                    log.apply(parsed, Some(at), at, &settings, &mut series);
                }
            });
        }
        kept = Some(log);
    });
    (kept.unwrap(), info.bytes_current)
}

/// What a log may hold besides its units: its counters, its engines' states, a few names.
const LOG_BYTES: i64 = 1024;

/// What a unit may hold (the largest, a TensorRT-LLM rank, is 1,440 bytes).
const UNIT_BYTES: i64 = 2048;

/// A log with one vLLM engine held a B-tree node with room for eleven (9 KB; 16 KB for a
/// TensorRT-LLM rank), so 1,000 quiet logs held 9 MB for engines they never had.
#[test]
fn a_log_holds_its_own_units_not_room_for_eleven() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/replay");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "log"))
        .collect();
    paths.sort();
    assert!(paths.len() > 30, "{} fixtures in {dir}", paths.len());
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        // Once first: statics built on first use (searchers, tables) are no log's.
        log_after(&text);
        let (log, bytes) = log_after(&text);
        let units: usize = log.engines.iter().map(|e| e.unit_count()).sum();
        let most = LOG_BYTES + UNIT_BYTES * units as i64;
        assert!(
            bytes <= most,
            "{}: {bytes} bytes for {units} units, over {most}",
            path.display()
        );
    }
}
