//! How one vLLM engine's stats lines are spaced, and so what stretch of time each line's
//! throughput covers: what turns `Avg generation throughput: X tokens/s` into tokens.
//!
//! vLLM V1 (`v1/metrics/loggers.py`) divides the tokens since its previous `log()` call by the
//! time since that call. The API server calls `log()` from a loop that sleeps
//! `VLLM_LOG_STATS_INTERVAL` (T) *after* the previous call returned, so each window is T plus
//! however late the event loop woke up. A call whose window and the one before had no tokens
//! is logged at DEBUG (not printed), and every call, printed or not, starts a new window. So:
//!
//! - after a line that showed work the next call is always printed: the gap between the two is
//!   exactly one window. The smallest such gap is T (the log prints whole seconds; a window is
//!   never shorter than T), which is how T is learned;
//! - over a run of such consecutive lines the windows telescope: the line times give the run's
//!   length to within a second however long it is, so the lateness is the run's drift per line
//!   (`span / gaps - T`), estimated over every run seen, not per line;
//! - a line after silence covers one window (T + lateness), not the silence;
//! - the first line after a start-up covers the time since the stat logger was built, which is
//!   before the server's start-up finished and its logging loop began (see [`StartMarks`]).
//!
//! V0 engines print from their own step loop when 5 s have passed, over the time since their
//! previous print: the gap itself, capped by the API server's 10 s `do_log_stats`.

use serde::{Deserialize, Serialize};

use super::float;

/// `--vllm-stats-interval`: a number of seconds, or learned from the lines.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StatsInterval {
    Auto,
    Fixed(f64),
}

impl std::fmt::Display for StatsInterval {
    /// As the flag takes it: `auto` or seconds.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StatsInterval::Auto => f.write_str("auto"),
            StatsInterval::Fixed(seconds) => write!(f, "{seconds}"),
        }
    }
}

/// vLLM's `VLLM_LOG_STATS_INTERVAL` default, used until an interval is learned.
pub const DEFAULT_INTERVAL: f64 = 10.0;

/// Busy gaps needed before an interval is learned from them.
const GAPS_TO_LEARN: u32 = 3;

/// How often a gap must have been seen before it can be the interval: one gap alone can be a
/// late wake-up, or two lines that were written apart but read at once.
const TIMES_A_GAP_IS_SEEN: u32 = 2;

/// The shortest interval the lines can tell: their timestamps' resolution. A smaller gap (two
/// lines in one second: a line printed twice, a burst) is no evidence of the interval.
const MIN_LEARNED_INTERVAL: f64 = 1.0;

/// How many of the smallest distinct gaps are remembered (each a whole number of seconds).
const GAPS_REMEMBERED: usize = 8;

/// Gaps of consecutive lines needed before their drift is taken as the lateness: with fewer,
/// the one-second resolution of the line times is larger than any lateness worth correcting.
const GAPS_FOR_LATENESS: u32 = 6;

/// Where the interval in use comes from, for the landing page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntervalSource {
    /// `--vllm-stats-interval N`.
    Forced,
    /// Learned from this engine's lines.
    Learned,
    /// Not learned yet: vLLM's default.
    Default,
}

impl IntervalSource {
    pub fn as_str(self) -> &'static str {
        match self {
            IntervalSource::Forced => "set by --vllm-stats-interval",
            IntervalSource::Learned => "learned from the lines",
            IntervalSource::Default => "vLLM's default (not learned yet)",
        }
    }
}

/// The stretch of time a stats line covers: `seconds`, plus, when `plus_lateness`, one
/// lateness of the logging loop, which is learned as lines come (see [`LateTokens`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    pub seconds: f64,
    pub plus_lateness: bool,
}

impl Window {
    fn exact(seconds: f64) -> Window {
        Window {
            seconds,
            plus_lateness: false,
        }
    }

    fn one_interval(interval: f64) -> Window {
        Window {
            seconds: interval,
            plus_lateness: true,
        }
    }
}

/// The tokens a counter owes to the logging loop's lateness. The lateness is known better with
/// every line, so each line adds what the whole history of windows that include it is short
/// of: `lateness x (sum of their throughputs)` less what was added already. Early lines, read
/// before the lateness was known, are made up for later; an early overestimate is absorbed by
/// later lines adding less. A counter never goes down.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LateTokens {
    #[serde(with = "float")]
    throughput_sum: f64,
    #[serde(with = "float")]
    added: f64,
}

impl LateTokens {
    /// The tokens to add for a line of `throughput` whose window is `window`.
    pub fn tokens(&mut self, throughput: f64, window: Window, lateness: f64) -> f64 {
        let mut tokens = throughput * window.seconds;
        if window.plus_lateness {
            self.throughput_sum += throughput;
            let owed = (lateness * self.throughput_sum - self.added).max(0.0);
            self.added += owed;
            tokens += owed;
        }
        tokens
    }
}

/// The start-up lines that date the first window of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StartMarks {
    /// When vLLM's stat logger was built and began counting tokens.
    #[serde(default, with = "float::option")]
    pub counting_since: Option<f64>,
}

/// Busy gaps of one length (to the whole second): how often seen, and the smallest.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct SeenGap {
    seconds: u32,
    times: u32,
    #[serde(with = "float")]
    smallest: f64,
}

/// What is known about the spacing of one engine's lines.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Pacing {
    /// The previous stats line: when, and whether it showed work.
    #[serde(with = "float::option")]
    last_at: Option<f64>,
    last_had_work: bool,
    /// How many gaps after a line that showed work were seen since the last start-up.
    /// `prior_interval` is what was learned before that start-up.
    busy_gaps: u32,
    /// The smallest busy gaps seen, by whole seconds, with how often each was seen.
    seen_gaps: Vec<SeenGap>,
    #[serde(with = "float::option")]
    prior_interval: Option<f64>,
    /// The run of regular consecutive gaps going on now: its first line and its gaps.
    #[serde(with = "float::option")]
    run_start: Option<f64>,
    run_gaps: u32,
    /// Finished runs, summed: their length and their gaps.
    #[serde(with = "float")]
    runs_span: f64,
    runs_gaps: u32,
    /// Set by a start-up, until the first stats line after it.
    first_window: Option<StartMarks>,
}

impl Pacing {
    /// The interval in use, and where it comes from.
    pub fn interval(&self, configured: StatsInterval) -> (f64, IntervalSource) {
        match configured {
            StatsInterval::Fixed(seconds) => (seconds, IntervalSource::Forced),
            StatsInterval::Auto => match (self.repeated_gap(), self.prior_interval) {
                (Some(gap), _) if self.busy_gaps >= GAPS_TO_LEARN => (gap, IntervalSource::Learned),
                (_, Some(prior)) => (prior, IntervalSource::Learned),
                _ => (DEFAULT_INTERVAL, IntervalSource::Default),
            },
        }
    }

    /// The smallest gap seen often enough to be the interval.
    fn repeated_gap(&self) -> Option<f64> {
        self.seen_gaps
            .iter()
            .find(|g| g.times >= TIMES_A_GAP_IS_SEEN)
            .map(|g| g.smallest)
    }

    /// How late, on average, the logging loop wakes up: the drift of consecutive lines.
    pub fn lateness(&self, interval: f64) -> f64 {
        let (span, gaps) = self.spans();
        if gaps < GAPS_FOR_LATENESS {
            return 0.0;
        }
        (span / f64::from(gaps) - interval).clamp(0.0, 2.0)
    }

    fn spans(&self) -> (f64, u32) {
        let current = match (self.run_start, self.last_at) {
            (Some(start), Some(last)) if self.run_gaps > 0 => last - start,
            _ => 0.0,
        };
        (self.runs_span + current, self.runs_gaps + self.run_gaps)
    }

    /// When the previous stats line was written.
    pub fn last_line_at(&self) -> Option<f64> {
        self.last_at
    }

    /// Whether the previous stats line showed work (then vLLM always prints the next one).
    pub fn last_had_work(&self) -> bool {
        self.last_had_work
    }

    /// A new start-up: the next line's window begins at `marks`; what was learned stays as a
    /// prior until the new run's own lines teach it again.
    pub fn start(&mut self, marks: StartMarks, configured: StatsInterval) {
        let (interval, source) = self.interval(configured);
        *self = Pacing {
            prior_interval: (source == IntervalSource::Learned).then_some(interval),
            runs_span: self.runs_span,
            runs_gaps: self.runs_gaps,
            first_window: Some(marks),
            ..Pacing::default()
        };
    }

    /// The start-up marks of a start-up the next line is the first after, updated as more
    /// start-up lines arrive.
    pub fn update_marks(&mut self, update: impl FnOnce(&mut StartMarks)) {
        if let Some(marks) = &mut self.first_window {
            update(marks);
        }
    }

    /// The window a V1 stats line written `at` covers.
    pub fn v1_window(
        &mut self,
        at: Option<f64>,
        had_work: bool,
        configured: StatsInterval,
    ) -> Window {
        let (interval, _) = self.interval(configured);
        let Some(at) = at else {
            return Window::one_interval(interval);
        };
        let previous = self.last_at.replace(at);
        let previous_had_work = std::mem::replace(&mut self.last_had_work, had_work);
        match (previous, self.first_window.take()) {
            (_, Some(marks)) => self.first_after_start(at, previous, marks, interval),
            (Some(last), None) if at >= last => {
                self.after_gap(at, last, previous_had_work, configured)
            }
            (last, None) => {
                self.close_run(last);
                self.run_start = Some(at);
                Window::one_interval(interval)
            }
        }
    }

    /// The window of a V0 line: the gap since its previous line, at most the API server's
    /// logging interval.
    pub fn v0_window(&mut self, at: Option<f64>, had_work: bool, configured: StatsInterval) -> f64 {
        let cap = match configured {
            StatsInterval::Fixed(seconds) => seconds,
            StatsInterval::Auto => DEFAULT_INTERVAL,
        };
        let window = match (at, self.last_at) {
            (Some(now), Some(before)) if now >= before => (now - before).min(cap),
            _ => cap,
        };
        self.last_at = at.or(self.last_at);
        self.last_had_work = had_work;
        self.first_window = None;
        window
    }

    /// The first line after a start-up. vLLM's first call comes one interval after its logging
    /// loop began, which is after counting began by the rest of the server's start-up (under a
    /// second for a text model, 18 s in a multimodal one); its window reaches back to when
    /// counting began. A later call (the first ones had no tokens and were not printed) covers
    /// one interval: a line less than two intervals after counting began is taken as the first
    /// call.
    fn first_after_start(
        &mut self,
        at: f64,
        previous: Option<f64>,
        marks: StartMarks,
        interval: f64,
    ) -> Window {
        self.close_run(previous);
        self.run_start = Some(at);
        let first_call = marks
            .counting_since
            .is_some_and(|c| at - c < 2.0 * interval);
        match marks.counting_since {
            Some(counting) if first_call && at >= counting => Window::exact(at - counting),
            _ => Window::one_interval(interval),
        }
    }

    /// A line written `at`, after the previous one at `last`.
    fn after_gap(
        &mut self,
        at: f64,
        last: f64,
        last_had_work: bool,
        configured: StatsInterval,
    ) -> Window {
        let gap = at - last;
        let (interval, _) = self.interval(configured);
        if gap < MIN_LEARNED_INTERVAL {
            // Two calls cannot share a second unless the interval is under one (which takes
            // --vllm-stats-interval): this is one line read twice or a burst, and it covers one
            // interval like any call. It says nothing of the rhythm.
            return Window::one_interval(interval);
        }
        let consecutive = last_had_work || gap < 1.5 * interval;
        if last_had_work {
            self.learn(gap);
        }
        let (interval, _) = self.interval(configured);
        // A whole second of resolution either way, and up to a second of lateness.
        if consecutive && gap >= interval - 1.0 && gap <= interval + 2.0 {
            if self.run_start.is_none() {
                self.run_start = Some(last);
            }
            self.run_gaps += 1;
            return Window::one_interval(interval);
        }
        self.close_run(Some(last));
        self.run_start = Some(at);
        if consecutive && gap <= 2.0 * interval {
            // The call came later (or sooner) than the loop's rhythm, with no room for a call
            // in between: vLLM measured that gap. It is no sample of the usual lateness.
            Window::exact(gap)
        } else {
            // Calls in between had no tokens and were not printed (each started a new window),
            // or their lines are missing (a log rotated away, Ray folding lines): one window.
            Window::one_interval(interval)
        }
    }

    /// Learns from the gap after a line that showed work (at least a second: see
    /// [`MIN_LEARNED_INTERVAL`]). Only a gap seen twice can become the interval: a single one
    /// may be a late wake-up or lines read at once.
    fn learn(&mut self, gap: f64) {
        self.busy_gaps = self.busy_gaps.saturating_add(1);
        // `gap` is at least a second: adding a half and truncating rounds it (without libm's
        // `round`, on a path every stats line takes); `as` saturates.
        let seconds = (gap + 0.5) as u32;
        match self.seen_gaps.iter_mut().find(|g| g.seconds == seconds) {
            Some(seen) => {
                seen.times = seen.times.saturating_add(1);
                seen.smallest = seen.smallest.min(gap);
            }
            None => {
                let at = self.seen_gaps.partition_point(|g| g.seconds < seconds);
                self.seen_gaps.insert(
                    at,
                    SeenGap {
                        seconds,
                        times: 1,
                        smallest: gap,
                    },
                );
                self.seen_gaps.truncate(GAPS_REMEMBERED);
            }
        }
    }

    /// Ends the run of consecutive lines at `end` (its last line), keeping its length for the
    /// lateness estimate.
    fn close_run(&mut self, end: Option<f64>) {
        if let (Some(start), Some(end)) = (self.run_start, end) {
            if self.run_gaps > 0 && end >= start {
                self.runs_span += end - start;
                self.runs_gaps += self.run_gaps;
            }
        }
        self.run_start = None;
        self.run_gaps = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_is_the_drift_of_consecutive_lines() {
        let mut pacing = Pacing::default();
        // 10.05 s apart, printed in whole seconds.
        let mut late = LateTokens::default();
        let mut total = 0.0;
        for k in 0..200 {
            let at = (1000.0 + f64::from(k) * 10.05_f64).floor();
            let window = pacing.v1_window(Some(at), true, StatsInterval::Auto);
            let tokens = late.tokens(1.0, window, pacing.lateness(10.0));
            if k > 0 {
                total += tokens;
            }
        }
        let lateness = pacing.lateness(10.0);
        assert!((lateness - 0.05).abs() < 0.01, "{lateness}");
        // One token a second: the tokens are the seconds the windows covered.
        assert!((total - 199.0 * 10.05).abs() < 1.0, "{total}");
    }

    /// Found by benches/live.sh: stats lines twice a second print the same second twice; the
    /// gap of 0 was learned as the interval, so no line added tokens and the engine was judged
    /// overdue (its gauges hidden) while it logged 20 lines a second.
    #[test]
    fn two_lines_in_one_second_do_not_make_the_interval_zero() {
        let mut pacing = Pacing::default();
        for k in 0..40 {
            let at = (1000.0 + f64::from(k) * 0.5).floor();
            pacing.v1_window(Some(at), true, StatsInterval::Auto);
        }
        assert_eq!(
            pacing.interval(StatsInterval::Auto),
            (1.0, IntervalSource::Learned)
        );
    }

    #[test]
    fn a_line_printed_twice_is_no_evidence_of_the_interval() {
        let mut pacing = Pacing::default();
        for k in 0..10 {
            let at = 1000.0 + 10.0 * f64::from(k);
            pacing.v1_window(Some(at), true, StatsInterval::Auto);
            let again = pacing.v1_window(Some(at), true, StatsInterval::Auto);
            assert_eq!(
                again,
                Window::one_interval(pacing.interval(StatsInterval::Auto).0)
            );
        }
        assert_eq!(
            pacing.interval(StatsInterval::Auto),
            (10.0, IntervalSource::Learned)
        );
    }

    #[test]
    fn a_gap_seen_once_is_not_the_interval() {
        let mut pacing = Pacing::default();
        // One late line (11 s), then a lone short gap (4 s: two lines read apart in time),
        // then the rhythm.
        for at in [1000.0, 1011.0, 1015.0, 1025.0] {
            pacing.v1_window(Some(at), true, StatsInterval::Auto);
        }
        assert_eq!(
            pacing.interval(StatsInterval::Auto).1,
            IntervalSource::Default
        );
        pacing.v1_window(Some(1035.0), true, StatsInterval::Auto);
        assert_eq!(
            pacing.interval(StatsInterval::Auto),
            (10.0, IntervalSource::Learned)
        );
    }
}
