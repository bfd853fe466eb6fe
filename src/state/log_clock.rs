//! A log's clock against the agent's: when the log was last heard from, and how far the times
//! its lines print are from the moment they arrive.
//!
//! Engines stamp their lines with their own clock, in their own zone: a container logging in
//! UTC on a host in Tokyo prints times that read 9 h old the instant they are written. Judging
//! an engine by `now - stamp` then calls a healthy engine dead, or (five hours ahead, in New
//! York) keeps a dead one up. So liveness is measured on the agent's clock: a record read from
//! a followed log is a sign of life at the moment it is read, and the log's stamps only say how
//! its engines' lines stand against each other (an engine of a data-parallel log that fell
//! silent while the others went on). [`LogClock::log_now`] is that mapping: the log's own
//! present, on the log's timeline, as it stands at an agent time.
//!
//! The offset between the two clocks (`llmtail_log_time_offset_seconds`) is the median of
//! `stamp - arrival` over the last live records. When it is a whole number of quarter hours
//! and at least half an hour, it is a zone mistake, and the fix is named; with
//! `--log-timezone auto` the agent applies it itself.

use std::collections::VecDeque;

/// How many live records the offset is the median of.
const OFFSET_SAMPLES: usize = 31;

/// Live records needed before an offset is told, warned about or learned: one late line (a
/// logger that flushed after a pause) must not decide it.
const OFFSET_SAMPLES_TO_TELL: usize = 3;

/// An offset at least this large is a zone mistake or a wrong clock, worth a warning.
const WARN_OFFSET_SECONDS: f64 = 1800.0;

/// Zones differ by whole quarter hours (UTC+05:45, UTC-09:30); how close to one an offset must
/// be to be called a zone's. Lines arrive up to a few seconds after their stamp (buffered
/// loggers, the reader's poll), never minutes.
const QUARTER_HOUR_SLACK_SECONDS: f64 = 120.0;

const QUARTER_HOUR: f64 = 900.0;

/// The last record heard from a log: when it arrived (agent clock) and the time it carried
/// (the log's timeline).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Heard {
    pub at: f64,
    pub stamp: f64,
}

/// How a log's clock stands against the agent's. See the module's doc.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogClock {
    heard: Option<Heard>,
    /// `stamp - arrival` of the last live records, as the stamps read before any correction.
    offsets: VecDeque<f64>,
    /// `--log-timezone auto`: learn the offset and take it off every stamp.
    auto: bool,
    /// The offset taken off every stamp (whole quarter hours; 0 unless `auto`).
    correction: f64,
    /// The offset was warned about once already.
    warned: bool,
}

impl LogClock {
    /// `auto`: `--log-timezone auto` for this log.
    pub fn new(auto: bool) -> LogClock {
        LogClock {
            auto,
            ..LogClock::default()
        }
    }

    /// A reload's zone setting: a correction learned stays while `auto` stays.
    pub fn set_auto(&mut self, auto: bool) {
        if !auto {
            self.correction = 0.0;
        }
        self.auto = auto;
    }

    pub fn is_auto(&self) -> bool {
        self.auto
    }

    /// What is taken off every stamp of the log (seconds; 0 unless `--log-timezone auto` learned
    /// an offset).
    pub fn correction(&self) -> f64 {
        self.correction
    }

    /// A record read live at `now` (agent clock) whose line says `raw` (on the log's timeline
    /// before any correction), or nothing. Returns the record's time after the correction.
    pub fn heard_live(&mut self, now: f64, raw: Option<f64>) -> Option<f64> {
        let Some(raw) = raw else {
            // No time in the line: the log is heard from now, and its timeline runs on.
            self.heard = Some(Heard {
                at: now,
                stamp: self.log_now(now),
            });
            return None;
        };
        if self.offsets.len() == OFFSET_SAMPLES {
            self.offsets.pop_front();
        }
        self.offsets.push_back(raw - now);
        if self.auto {
            self.learn_correction();
        }
        let stamp = raw - self.correction;
        self.heard = Some(Heard { at: now, stamp });
        Some(stamp)
    }

    /// A record of what the log already held when the agent started, stamped `stamp` (after the
    /// correction). Its arrival is unknown: until the catch-up ends ([`LogClock::caught_up`]) it
    /// is taken as written at its stamp, or now if that is in the future.
    pub fn heard_backlog(&mut self, now: f64, stamp: f64) {
        self.heard = Some(Heard {
            at: stamp.min(now),
            stamp,
        });
    }

    /// The agent has read what the log held: its last record was written when the file was
    /// last modified (`modified`, agent clock), not at whatever its stamp says. `latest` stands
    /// in for the last record when the state came from the state file and no line was read.
    pub fn caught_up(&mut self, now: f64, modified: Option<f64>, latest: Option<f64>) {
        let written = modified.map_or(now, |m| m.min(now));
        match &mut self.heard {
            Some(heard) => heard.at = written,
            None => {
                self.heard = latest.map(|stamp| Heard { at: written, stamp });
            }
        }
    }

    /// The log's own present at agent time `now`: the last record's time, plus the agent time
    /// since it was heard. Engines are judged at it, so silence is measured on the agent's clock
    /// and the stamps only order the log's own lines.
    pub fn log_now(&self, now: f64) -> f64 {
        match self.heard {
            Some(heard) => heard.stamp + (now - heard.at).max(0.0),
            None => now,
        }
    }

    /// The median of `stamp - arrival` over the last live records, after the correction
    /// (negative: the stamps read as past). `None` until enough live records came.
    pub fn offset(&self) -> Option<f64> {
        self.raw_offset().map(|raw| raw - self.correction)
    }

    fn raw_offset(&self) -> Option<f64> {
        if self.offsets.len() < OFFSET_SAMPLES_TO_TELL {
            return None;
        }
        let mut sorted: Vec<f64> = self.offsets.iter().copied().collect();
        sorted.sort_by(f64::total_cmp);
        Some(sorted[sorted.len() / 2])
    }

    /// The offset as whole quarter hours, when it is one (at least half an hour, within two
    /// minutes of a quarter hour): the signature of a zone read wrongly.
    pub fn zone_offset(&self) -> Option<f64> {
        self.offset().and_then(whole_quarter_hours)
    }

    /// The zone offset, the first time it is seen (then never again for this log).
    pub fn zone_offset_to_warn(&mut self) -> Option<f64> {
        if self.warned {
            return None;
        }
        let offset = self.zone_offset()?;
        self.warned = true;
        Some(offset)
    }

    fn learn_correction(&mut self) {
        if let Some(raw) = self.raw_offset() {
            let rounded = (raw / QUARTER_HOUR).round() * QUARTER_HOUR;
            if (raw - rounded).abs() <= QUARTER_HOUR_SLACK_SECONDS {
                self.correction = rounded;
            }
        }
    }
}

/// `offset` rounded to whole quarter hours, when it is close to at least two of them.
fn whole_quarter_hours(offset: f64) -> Option<f64> {
    let rounded = (offset / QUARTER_HOUR).round() * QUARTER_HOUR;
    let close = (offset - rounded).abs() <= QUARTER_HOUR_SLACK_SECONDS;
    (close && rounded.abs() >= WARN_OFFSET_SECONDS).then_some(rounded)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: f64 = 1_795_353_905.0;
    const NINE_HOURS: f64 = 9.0 * 3600.0;

    #[test]
    fn a_live_log_is_as_present_as_its_last_record_whatever_its_stamp() {
        let mut clock = LogClock::new(false);
        clock.heard_live(NOW, Some(NOW - NINE_HOURS));
        assert_eq!(clock.log_now(NOW), NOW - NINE_HOURS);
        assert_eq!(clock.log_now(NOW + 31.0), NOW - NINE_HOURS + 31.0);
    }

    #[test]
    fn a_future_stamp_keeps_nothing_up_past_its_arrival() {
        let mut clock = LogClock::new(false);
        clock.heard_live(NOW, Some(NOW + 5.0 * 3600.0));
        // 31 s of agent time after it arrived, the log's present is 31 s past the stamp.
        assert_eq!(clock.log_now(NOW + 31.0) - (NOW + 5.0 * 3600.0), 31.0);
    }

    #[test]
    fn the_offset_of_a_utc_log_read_in_tokyo_is_minus_nine_hours_and_a_zones() {
        let mut clock = LogClock::new(false);
        for k in 0..5 {
            let arrival = NOW + 10.0 * f64::from(k);
            clock.heard_live(arrival + 0.4, Some(arrival - NINE_HOURS));
        }
        assert!((clock.offset().unwrap() + NINE_HOURS + 0.4).abs() < 1e-6);
        assert_eq!(clock.zone_offset_to_warn(), Some(-NINE_HOURS));
        assert_eq!(clock.zone_offset_to_warn(), None, "warned once");
    }

    #[test]
    fn a_clock_a_few_minutes_off_is_no_zone() {
        let mut clock = LogClock::new(false);
        for k in 0..5 {
            clock.heard_live(NOW + f64::from(k), Some(NOW + f64::from(k) - 400.0));
        }
        assert_eq!(clock.zone_offset(), None);
        let mut far = LogClock::new(false);
        for k in 0..5 {
            far.heard_live(
                NOW + f64::from(k),
                Some(NOW + f64::from(k) - 3600.0 - 400.0),
            );
        }
        assert_eq!(
            far.zone_offset(),
            None,
            "an hour and seven minutes is no zone"
        );
    }

    #[test]
    fn auto_learns_the_quarter_hours_and_takes_them_off_the_stamps() {
        let mut clock = LogClock::new(true);
        let mut corrected = Vec::new();
        for k in 0..5 {
            let arrival = NOW + 10.0 * f64::from(k);
            corrected.push(clock.heard_live(arrival, Some(arrival - NINE_HOURS + 1.0)));
        }
        assert_eq!(clock.correction(), -NINE_HOURS);
        assert_eq!(corrected[4], Some(NOW + 40.0 + 1.0));
        assert!((clock.offset().unwrap() - 1.0).abs() < 1e-6);
        assert_eq!(clock.zone_offset(), None, "nothing left to warn about");
    }

    #[test]
    fn the_backlog_is_dated_by_the_files_last_write_once_read() {
        let mut clock = LogClock::new(false);
        clock.heard_backlog(NOW, NOW - NINE_HOURS);
        assert_eq!(clock.log_now(NOW), NOW, "its stamp, while reading");
        clock.caught_up(NOW, Some(NOW - 2.0), None);
        assert_eq!(clock.log_now(NOW), NOW - NINE_HOURS + 2.0);
    }
}
