//! A replay's progress bar on stderr (when stderr is a terminal): bytes read of the logs'
//! total, bytes and lines per second. It sits between the reader and the pipeline, and sees
//! the read offsets the reader reports after each batch of lines.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::pipeline::Pipeline;
use crate::source::{Lines, LogId, LogSpec, Sink, TailEvent};
use crate::state::State;

/// How often the line count is read from the state (it takes the state's lock).
const REDRAW: Duration = Duration::from_millis(100);

/// The pipeline, with a bar that follows its reading.
pub struct Progress<'p> {
    pipeline: &'p mut Pipeline,
    bar: Option<ProgressBar>,
    state: Arc<Mutex<State>>,
    /// Per log: the offset after its last batch.
    offsets: Vec<u64>,
    started: Instant,
    drawn: Instant,
}

impl<'p> Progress<'p> {
    /// A bar over the sizes of the files `specs` name (a spinner's count when one is standard
    /// input), drawn only when `draw`.
    pub fn new(
        specs: &[LogSpec],
        state: Arc<Mutex<State>>,
        pipeline: &'p mut Pipeline,
        draw: bool,
    ) -> Progress<'p> {
        let bar = draw.then(|| {
            let total = total_bytes(specs);
            let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
            let template = if total.is_some() {
                "{wide_bar} {bytes}/{total_bytes} {binary_bytes_per_sec} {msg} ({eta})"
            } else {
                "{spinner} {bytes} {binary_bytes_per_sec} {msg}"
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style);
            }
            bar
        });
        Progress {
            pipeline,
            bar,
            state,
            offsets: Vec::new(),
            started: Instant::now(),
            drawn: Instant::now(),
        }
    }

    fn redraw(&mut self) {
        let Some(bar) = &self.bar else {
            return;
        };
        bar.set_position(self.offsets.iter().sum());
        if self.drawn.elapsed() >= REDRAW {
            self.drawn = Instant::now();
            let lines: u64 = {
                let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                state.iter_logs().map(|l| l.io.lines_read).sum()
            };
            let per_second = lines as f64 / self.started.elapsed().as_secs_f64().max(1e-3);
            bar.set_message(format!("{lines} lines, {per_second:.0} lines/s"));
        }
    }

    /// Takes the bar off the terminal.
    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The sum of the sizes of the files `specs` name, if none is standard input.
fn total_bytes(specs: &[LogSpec]) -> Option<u64> {
    let size = |path: &std::path::Path| std::fs::metadata(path).map_or(0, |m| m.len());
    specs
        .iter()
        .map(|spec| match spec {
            LogSpec::Path(path) => Some(size(path)),
            LogSpec::Glob(pattern) => Some(
                crate::source::glob_paths(pattern)
                    .iter()
                    .map(|p| size(p))
                    .sum(),
            ),
            LogSpec::Stdin => None,
        })
        .sum()
}

impl Sink for Progress<'_> {
    fn lines(&mut self, log: LogId, lines: &mut Lines<'_>) {
        self.pipeline.lines(log, lines);
    }

    fn event(&mut self, log: LogId, event: TailEvent) {
        if let TailEvent::Offset(offset) = &event {
            let index = log.0 as usize;
            if self.offsets.len() <= index {
                self.offsets.resize(index + 1, 0);
            }
            self.offsets[index] = *offset;
            self.redraw();
        }
        self.pipeline.event(log, event);
    }

    fn caught_up(&mut self) {
        self.pipeline.caught_up();
    }

    fn tick(&mut self) {
        self.pipeline.tick();
    }

    fn new_specs(&mut self) -> Option<Vec<LogSpec>> {
        self.pipeline.new_specs()
    }

    fn stopped(&mut self) {
        self.pipeline.stopped();
    }
}
