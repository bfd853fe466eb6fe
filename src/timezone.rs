//! Time zones: which zone a log's times are read in when they print none, and the one
//! conversion from a printed [`LogTime`] to seconds since the epoch.
//!
//! vLLM, TRT-LLM's Python logger, Python's `asctime` and syslog print the writer's local
//! wall-clock time with no zone (vLLM and syslog with no year either). Read as UTC, a host in
//! Asia/Tokyo would stamp every line 9 h in the future. So each log has a zone: its `timezone`,
//! else `--log-timezone`, else the agent's own; the year comes from the clock. jiff does the
//! calendar and the zone's rules (DST included) from the tz database: the system's when it has
//! one, else the copy built into the binary (`tzdb-bundle-always`).

mod steady;

use std::cell::Cell;

use jiff::civil::DateTime;
use jiff::tz::{AmbiguousOffset, Offset, TimeZone, TimeZoneDatabase};
use jiff::Timestamp;
use llmtail_grammars::LogTime;

/// The zone a log's times without one are read in, and the name the landing page shows.
#[derive(Debug, Clone, PartialEq)]
pub struct LogZone {
    zone: TimeZone,
    name: String,
    /// `auto`: the offset to the agent's clock is learned from live lines and taken off.
    auto: bool,
}

impl LogZone {
    /// An IANA name (`Asia/Tokyo`, `UTC`; any case), looked up in the system's tz database,
    /// else in the copy built in: a host whose zoneinfo lacks the name (an old or partial
    /// tzdata) still knows it.
    pub fn named(name: &str) -> Result<LogZone, jiff::Error> {
        let zone = TimeZone::get(name)
            .or_else(|e| TimeZoneDatabase::bundled().get(name).map_err(|_| e))?;
        Ok(LogZone {
            zone,
            name: name.to_string(),
            auto: false,
        })
    }

    /// `auto`: times are read in the agent's own zone, less the offset between the log's clock
    /// and the agent's once live lines have shown it (see `state::log_clock`).
    pub fn auto() -> LogZone {
        let local = LogZone::local();
        LogZone {
            name: format!("auto (learned from live lines; until then {})", local.name),
            auto: true,
            ..local
        }
    }

    /// Whether the offset is learned from live lines (`auto`).
    pub fn is_auto(&self) -> bool {
        self.auto
    }

    pub fn utc() -> LogZone {
        LogZone {
            zone: TimeZone::UTC,
            name: "UTC".to_string(),
            auto: false,
        }
    }

    /// The agent's own zone: `TZ`, else `/etc/localtime`. With neither, or with a `TZ` that
    /// names no zone, the C library an engine runs on uses UTC, so UTC is what it wrote.
    pub fn local() -> LogZone {
        let tz_variable = std::env::var("TZ").ok();
        match TimeZone::try_system() {
            Ok(zone) => {
                let name = match (zone.iana_name(), &tz_variable) {
                    (Some(iana), _) => format!("{iana} (local)"),
                    (None, Some(tz)) => format!("TZ={tz} (local)"),
                    (None, None) => "/etc/localtime (local)".to_string(),
                };
                LogZone {
                    zone,
                    name,
                    auto: false,
                }
            }
            Err(e) => {
                if let Some(tz) = tz_variable {
                    tracing::warn!(
                        error = %e,
                        "TZ={tz:?} names no time zone this agent knows; times without a zone are \
                         read as UTC (fix: set TZ to an IANA name such as Asia/Tokyo, or pass \
                         --log-timezone)"
                    );
                }
                LogZone {
                    zone: TimeZone::UTC,
                    name: "UTC (local)".to_string(),
                    auto: false,
                }
            }
        }
    }

    /// As the user gave it (`Asia/Tokyo`), or the agent's zone marked `(local)`.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn zone(&self) -> &TimeZone {
        &self.zone
    }
}

/// Zones a suggestion names first, when one of them has the offset: the ones inference hosts
/// and containers use most (a container's UTC above all).
const COMMON_ZONES: &[&str] = &[
    "UTC",
    "Europe/London",
    "Europe/Berlin",
    "Europe/Helsinki",
    "Europe/Moscow",
    "Asia/Dubai",
    "Asia/Kolkata",
    "Asia/Kathmandu",
    "Asia/Singapore",
    "Asia/Shanghai",
    "Asia/Tokyo",
    "Australia/Adelaide",
    "Australia/Sydney",
    "Pacific/Auckland",
    "America/Sao_Paulo",
    "America/New_York",
    "America/Chicago",
    "America/Denver",
    "America/Los_Angeles",
    "Pacific/Honolulu",
];

/// The zone an engine would write its times in for them to read `offset` seconds from the
/// agent's clock when read in `zone`, at `now`: the zone the engine most likely uses. An IANA
/// name when a common zone has that offset now, else the offset itself (`UTC+05:30`).
pub fn zone_explaining(offset: f64, zone: &TimeZone, now: f64) -> String {
    let Ok(at) = Timestamp::from_second(now.floor() as i64) else {
        return "UTC".to_string();
    };
    let reader = zone.to_offset(at).seconds();
    let writer = reader + offset.round() as i32;
    let named = COMMON_ZONES.iter().find(|name| {
        TimeZone::get(name)
            .or_else(|_| TimeZoneDatabase::bundled().get(name))
            .is_ok_and(|tz| tz.to_offset(at).seconds() == writer)
    });
    match named {
        Some(name) => (*name).to_string(),
        None => {
            let sign = if writer < 0 { '-' } else { '+' };
            let minutes = writer.unsigned_abs() / 60;
            format!("UTC{sign}{:02}:{:02}", minutes / 60, minutes % 60)
        }
    }
}

/// How far past `now` a yearless time may be and still be read as this year's: a writer's
/// clock a little ahead of the agent's must not throw its lines a year back.
const AHEAD_TOLERANCE_SECONDS: f64 = 86_400.0;

/// Seconds since the epoch at which `time` was printed. A time with an offset keeps it; one
/// without is read in `zone`. A time without a year is put in the year that puts it closest
/// before `now` on the zone's calendar: a December line read in January is last year's, and
/// each line is judged alone, so a log read across New Year changes year where it should.
/// `None` for a date that does not exist (Feb 30).
pub fn resolve_time(time: &LogTime, zone: &TimeZone, now: f64) -> Option<f64> {
    resolve_time_after(time, zone, now, None)
}

/// [`resolve_time`] for a line that follows one written at `previous`: a wall time that a DST
/// fold makes happen twice is the earlier instant unless that is before `previous`, then the
/// later one, so a log's times run on through the repeated hour instead of going back to its
/// start. A time without a date (`HH:MM:SS`) is on the day, in `zone`, that puts it closest
/// to `now`.
pub fn resolve_time_after(
    time: &LogTime,
    zone: &TimeZone,
    now: f64,
    previous: Option<f64>,
) -> Option<f64> {
    resolve_in_order(time, zone, now, previous).map(|r| r.at)
}

/// An instant a printed time was resolved to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resolved {
    /// Seconds since the epoch.
    pub at: f64,
    /// The time fell in a DST fold's repeated hour and was read as its second pass.
    pub second_pass: bool,
}

/// [`resolve_time_after`], saying whether a fold's second pass was taken.
pub fn resolve_in_order(
    time: &LogTime,
    zone: &TimeZone,
    now: f64,
    previous: Option<f64>,
) -> Option<Resolved> {
    ZoneReader::once(zone.clone()).resolve_in_order(time, now, previous)
}

/// A zone that one log's times are read in, one after another: [`resolve_in_order`] with what
/// the last times read taught of the zone kept, the same answers at a fraction of the cost.
/// It keeps the span of wall times around the last one read that share its offset
/// ([`steady`]), and the calendar date of the last `now` asked (what the year of a time
/// without one is judged by).
#[derive(Debug, Clone)]
pub struct ZoneReader {
    zone: TimeZone,
    /// `None` for a reader of one time: learning a span costs two lookups of transitions.
    steady: Option<steady::SteadyOffset>,
    /// `now` (in whole seconds) and the wall time in the zone then.
    today: Cell<Option<(i64, DateTime)>>,
}

impl ZoneReader {
    pub fn new(zone: TimeZone) -> ZoneReader {
        ZoneReader {
            steady: Some(steady::SteadyOffset::default()),
            ..ZoneReader::once(zone)
        }
    }

    /// A reader for one time, which learns nothing for the next.
    fn once(zone: TimeZone) -> ZoneReader {
        ZoneReader {
            zone,
            steady: None,
            today: Cell::new(None),
        }
    }

    pub fn zone(&self) -> &TimeZone {
        &self.zone
    }

    /// [`resolve_in_order`] in this zone.
    pub fn resolve_in_order(
        &self,
        time: &LogTime,
        now: f64,
        previous: Option<f64>,
    ) -> Option<Resolved> {
        let order = Order {
            previous,
            second_pass: Cell::new(false),
        };
        let at = if time.month == 0 {
            self.on_closest_day(time, now, &order)
        } else {
            match time.year {
                Some(year) => self.instant(time, i16::try_from(year).ok()?, &order),
                None => self.in_closest_year(time, now, &order),
            }
        }?;
        Some(Resolved {
            at,
            second_pass: order.second_pass.get(),
        })
    }

    /// The wall time in this zone at `now`.
    fn today(&self, now: f64) -> Option<DateTime> {
        let second = now.floor() as i64;
        match self.today.get() {
            Some((asked, today)) if asked == second => Some(today),
            _ => {
                let today = self.zone.to_datetime(Timestamp::from_second(second).ok()?);
                self.today.set(Some((second, today)));
                Some(today)
            }
        }
    }

    /// A clock time without a date, on yesterday's, today's or tomorrow's date in the zone: the
    /// one closest to `now` (a line printed at 23:59:58 and read after midnight is yesterday's).
    fn on_closest_day(&self, time: &LogTime, now: f64, order: &Order) -> Option<f64> {
        let today = self.today(now)?.date();
        [today.yesterday().ok()?, today, today.tomorrow().ok()?]
            .into_iter()
            .filter_map(|day| {
                let dated = LogTime {
                    month: day.month() as u8,
                    day: day.day() as u8,
                    ..*time
                };
                self.instant(&dated, day.year(), order)
            })
            .min_by(|a, b| (a - now).abs().total_cmp(&(b - now).abs()))
    }

    fn in_closest_year(&self, time: &LogTime, now: f64, order: &Order) -> Option<f64> {
        let today = self.today(now)?;
        let latest = now + AHEAD_TOLERANCE_SECONDS;
        // Only a January time read in December can belong to next year (a clock just behind the
        // writer's at midnight on Dec 31).
        if time.month == 1 && today.month() == 12 {
            let next_year = self.instant(time, today.year() + 1, order);
            if let Some(t) = next_year.filter(|t| *t <= latest) {
                return Some(t);
            }
        }
        // Four years back at most: Feb 29 read in a common year is the last leap year's.
        (today.year() - 4..=today.year())
            .rev()
            .find_map(|year| self.instant(time, year, order).filter(|t| *t <= latest))
    }

    /// `time` in `year`: at its own offset when it printed one, else in the zone (a fold's
    /// repeated hour as its earlier instant, unless that is before `previous`).
    fn instant(&self, time: &LogTime, year: i16, order: &Order) -> Option<f64> {
        // jiff's clock stops at :59; a leap second (`:60`, which record heads may print) is read
        // as the second after :59.
        let leap = time.second == 60;
        let second = if leap { 59 } else { time.second };
        let seconds = match time.utc_offset {
            Some(offset) => {
                let civil = civil(time, year, second)?;
                Offset::from_seconds(offset)
                    .ok()?
                    .to_timestamp(civil)
                    .ok()?
                    .as_second()
            }
            None => {
                let wall = steady::wall_seconds(
                    year,
                    time.month,
                    time.day,
                    time.hour,
                    time.minute,
                    second,
                )?;
                match self.steady.as_ref().and_then(|s| s.instant(wall)) {
                    Some(at) => at,
                    None => self.instant_by_rules(wall, time, year, second, order)?,
                }
            }
        };
        let seconds = seconds + i64::from(leap);
        Some(seconds as f64 + f64::from(time.nanos) / 1e9)
    }

    /// [`ZoneReader::instant`] by the zone's rules, for a wall time outside the steady span;
    /// learns the span around it when it reads at one offset.
    #[cold]
    fn instant_by_rules(
        &self,
        wall: i64,
        time: &LogTime,
        year: i16,
        second: u8,
        order: &Order,
    ) -> Option<i64> {
        let civil = civil(time, year, second)?;
        // A wall time in a DST gap never happened and one in a fold happened twice: jiff's
        // `compatible` choice (RFC 5545, Temporal) reads a gap's with the offset before it, so
        // it lands as far after the gap as it was into it, and a fold's as the earlier one.
        let ambiguous = self.zone.to_ambiguous_timestamp(civil);
        let compatible = ambiguous.compatible().ok()?;
        match ambiguous.offset() {
            AmbiguousOffset::Unambiguous { offset } => {
                if let Some(steady) = &self.steady {
                    steady.learn(&self.zone, wall, i64::from(offset.seconds()));
                }
            }
            AmbiguousOffset::Fold { .. } => {
                // Lines a few seconds out of order (two writers) stay in the first pass; only
                // a time that would go back most of the repeated hour is the second pass.
                if order.previous.is_some_and(|previous| {
                    (compatible.as_second() as f64) < previous - FOLD_BACKWARDS_SECONDS
                }) {
                    order.second_pass.set(true);
                    return Some(ambiguous.later().ok()?.as_second());
                }
            }
            AmbiguousOffset::Gap { .. } => {}
        }
        Some(compatible.as_second())
    }
}

/// `time`'s wall clock in `year`, at `second` (a leap second's :59); `None` for a time that
/// does not exist.
fn civil(time: &LogTime, year: i16, second: u8) -> Option<DateTime> {
    DateTime::new(
        year,
        time.month as i8,
        time.day as i8,
        time.hour as i8,
        time.minute as i8,
        second as i8,
        0,
    )
    .ok()
}

/// The previous line's time, and whether a fold's second pass was taken after it.
struct Order {
    previous: Option<f64>,
    second_pass: Cell<bool>,
}

/// How far back a fold's earlier instant must be from the previous line's for the later one to
/// be taken.
const FOLD_BACKWARDS_SECONDS: f64 = 600.0;

#[cfg(test)]
mod tests {
    use super::*;

    /// The wall times a log in `zone` prints through `year`, one after another: an hour and a
    /// bit apart, and a minute and a bit apart in the days around each of the zone's
    /// transitions (through a fold's repeated hour twice, as a clock prints it).
    fn wall_times_through(zone: &TimeZone, year: i16) -> Vec<LogTime> {
        let at = |month, day| {
            let civil = DateTime::new(year, month, day, 0, 0, 0, 0).unwrap();
            zone.to_timestamp(civil).unwrap()
        };
        let (start, end) = (at(1, 1), at(12, 31));
        let mut instants = Vec::new();
        let mut t = start;
        while t < end {
            instants.push(t);
            t += jiff::SignedDuration::from_secs(4_033);
        }
        for transition in zone.following(start).take_while(|tr| tr.timestamp() < end) {
            let mut t = transition.timestamp() - jiff::SignedDuration::from_hours(30);
            let stop = transition.timestamp() + jiff::SignedDuration::from_hours(30);
            while t < stop {
                instants.push(t);
                t += jiff::SignedDuration::from_secs(61);
            }
        }
        instants.sort();
        instants
            .into_iter()
            .map(|t| {
                let wall = zone.to_datetime(t);
                LogTime {
                    year: u16::try_from(wall.year()).ok(),
                    month: wall.month() as u8,
                    day: wall.day() as u8,
                    hour: wall.hour() as u8,
                    minute: wall.minute() as u8,
                    second: wall.second() as u8,
                    nanos: 250_000_000,
                    utc_offset: None,
                }
            })
            .collect()
    }

    #[test]
    fn a_zone_reader_reads_every_time_as_the_zone_rules_do() {
        let zones = [
            "America/New_York",
            "Australia/Lord_Howe",
            "Europe/London",
            "Asia/Tokyo",
            "UTC",
            "America/Sao_Paulo",
            "Pacific/Apia",
        ];
        for name in zones {
            let zone = TimeZone::get(name).unwrap();
            for year in [2011, 2026] {
                let now = seconds_at(&format!("{year}-12-31T23:00:00Z")) + 86_400.0;
                let times = wall_times_through(&zone, year);
                let yearless = times.iter().map(|&t| LogTime { year: None, ..t });
                for times in [times.clone(), yearless.collect()] {
                    let reader = ZoneReader::new(zone.clone());
                    let mut previous = None;
                    for time in times {
                        let by_rules = resolve_in_order(&time, &zone, now, previous);
                        let read = reader.resolve_in_order(&time, now, previous);
                        assert_eq!(read, by_rules, "{name} {time:?}");
                        previous = read.map(|r| r.at).or(previous);
                    }
                }
            }
        }
    }

    /// A vLLM head time: `MM-DD HH:MM:SS`, no year, no zone.
    fn head(month: u8, day: u8, hour: u8, minute: u8, second: u8) -> LogTime {
        LogTime {
            year: None,
            month,
            day,
            hour,
            minute,
            second,
            nanos: 0,
            utc_offset: None,
        }
    }

    fn seconds_at(rfc3339: &str) -> f64 {
        rfc3339.parse::<Timestamp>().unwrap().as_second() as f64
    }

    fn zone(name: &str) -> TimeZone {
        LogZone::named(name).unwrap().zone
    }

    #[test]
    fn a_time_without_a_zone_is_read_in_the_logs_zone() {
        let now = seconds_at("2026-11-22T05:00:00Z");
        let line = head(11, 22, 13, 25, 1);
        assert_eq!(
            resolve_time(&line, &zone("Asia/Tokyo"), now),
            Some(seconds_at("2026-11-22T04:25:01Z"))
        );
        assert_eq!(
            resolve_time(&line, &TimeZone::UTC, now + 86_400.0),
            Some(seconds_at("2026-11-22T13:25:01Z"))
        );
    }

    #[test]
    fn a_time_with_an_offset_keeps_it_whatever_the_logs_zone() {
        let triton = LogTime {
            utc_offset: Some(0),
            ..head(11, 22, 13, 25, 1)
        };
        let now = seconds_at("2026-11-23T00:00:00Z");
        assert_eq!(
            resolve_time(&triton, &zone("Asia/Tokyo"), now),
            Some(seconds_at("2026-11-22T13:25:01Z"))
        );
        let docker = LogTime {
            year: Some(2026),
            utc_offset: Some(3600),
            nanos: 500_000_000,
            ..head(11, 22, 14, 25, 1)
        };
        assert_eq!(
            resolve_time(&docker, &zone("America/New_York"), now),
            Some(seconds_at("2026-11-22T13:25:01Z") + 0.5)
        );
    }

    #[test]
    fn a_december_line_read_in_january_is_from_last_year() {
        let jan1 = seconds_at("2027-01-01T00:00:10Z");
        assert_eq!(
            resolve_time(&head(12, 31, 23, 59, 50), &TimeZone::UTC, jan1),
            Some(seconds_at("2026-12-31T23:59:50Z"))
        );
    }

    #[test]
    fn the_year_is_the_one_on_the_logs_calendar() {
        // 00:30 on Jan 1 in Tokyo is still Dec 31 in UTC: the line is this (Tokyo) year's.
        let now = seconds_at("2026-12-31T15:30:00Z");
        assert_eq!(
            resolve_time(&head(1, 1, 0, 10, 0), &zone("Asia/Tokyo"), now),
            Some(seconds_at("2026-12-31T15:10:00Z"))
        );
    }

    #[test]
    fn a_jan_1_line_read_by_a_clock_still_on_dec_31_is_next_years() {
        let now = seconds_at("2026-12-31T23:59:58Z");
        assert_eq!(
            resolve_time(&head(1, 1, 0, 0, 1), &TimeZone::UTC, now),
            Some(seconds_at("2027-01-01T00:00:01Z"))
        );
    }

    #[test]
    fn feb_29_read_in_a_common_year_is_the_last_leap_years() {
        let now = seconds_at("2027-03-01T00:00:00Z");
        assert_eq!(
            resolve_time(&head(2, 29, 12, 0, 0), &TimeZone::UTC, now),
            Some(seconds_at("2024-02-29T12:00:00Z"))
        );
        let impossible = LogTime {
            year: Some(2026),
            ..head(2, 30, 12, 0, 0)
        };
        assert_eq!(resolve_time(&impossible, &TimeZone::UTC, now), None);
    }

    #[test]
    fn dst_gaps_and_folds_take_jiffs_compatible_choice() {
        let new_york = zone("America/New_York");
        let now = seconds_at("2026-12-01T00:00:00Z");
        // 02:30 on Mar 8 2026 never happened (02:00 EST -> 03:00 EDT): read as 03:30 EDT.
        assert_eq!(
            resolve_time(&head(3, 8, 2, 30, 0), &new_york, now),
            Some(seconds_at("2026-03-08T07:30:00Z"))
        );
        // 01:30 on Nov 1 2026 happened twice: the first time, in EDT.
        assert_eq!(
            resolve_time(&head(11, 1, 1, 30, 0), &new_york, now),
            Some(seconds_at("2026-11-01T05:30:00Z"))
        );
    }

    #[test]
    fn a_leap_second_is_the_second_after_59() {
        let now = seconds_at("2027-01-01T12:00:00Z");
        assert_eq!(
            resolve_time(&head(12, 31, 23, 59, 60), &TimeZone::UTC, now),
            Some(seconds_at("2027-01-01T00:00:00Z"))
        );
    }

    #[test]
    fn zones_are_iana_names() {
        assert_eq!(LogZone::named("Asia/Tokyo").unwrap().name(), "Asia/Tokyo");
        let now = seconds_at("2026-11-23T00:00:00Z");
        assert_eq!(
            resolve_time(&head(11, 22, 13, 25, 1), &zone("UTC"), now),
            Some(seconds_at("2026-11-22T13:25:01Z"))
        );
        assert!(LogZone::named("Asia/Tokio").is_err());
        assert!(LogZone::named("").is_err());
    }

    #[test]
    fn a_folds_repeated_hour_after_its_first_pass_is_the_second_pass() {
        let new_york = zone("America/New_York");
        let now = seconds_at("2026-11-02T00:00:00Z");
        let first_pass_end = seconds_at("2026-11-01T05:59:00Z");
        let again =
            resolve_in_order(&head(11, 1, 1, 0, 0), &new_york, now, Some(first_pass_end)).unwrap();
        assert_eq!(again.at, seconds_at("2026-11-01T06:00:00Z"));
        assert!(again.second_pass);
        // A line a few seconds out of order stays in the first pass.
        let late = resolve_in_order(
            &head(11, 1, 1, 58, 55),
            &new_york,
            now,
            Some(first_pass_end),
        )
        .unwrap();
        assert_eq!(late.at, seconds_at("2026-11-01T05:58:55Z"));
        assert!(!late.second_pass);
    }

    #[test]
    fn a_time_without_a_date_is_on_the_day_closest_to_now() {
        let time_only = LogTime {
            month: 0,
            day: 0,
            ..head(1, 1, 23, 59, 58)
        };
        let just_after_midnight = seconds_at("2026-11-23T00:00:03Z");
        assert_eq!(
            resolve_time(&time_only, &TimeZone::UTC, just_after_midnight),
            Some(seconds_at("2026-11-22T23:59:58Z"))
        );
        let evening = seconds_at("2026-11-22T23:59:59Z");
        assert_eq!(
            resolve_time(&time_only, &TimeZone::UTC, evening),
            Some(seconds_at("2026-11-22T23:59:58Z"))
        );
    }

    #[test]
    fn the_zone_explaining_an_offset_is_a_common_zone_or_the_offset() {
        let tokyo = zone("Asia/Tokyo");
        let now = seconds_at("2026-11-28T12:00:00Z");
        assert_eq!(zone_explaining(-9.0 * 3600.0, &tokyo, now), "UTC");
        assert_eq!(zone_explaining(-3.5 * 3600.0, &tokyo, now), "Asia/Kolkata");
        assert_eq!(
            zone_explaining(-9.0 * 3600.0 + 60.0, &tokyo, now),
            "UTC+00:01"
        );
    }

    #[test]
    fn auto_reads_in_the_local_zone_until_it_learns() {
        let auto = LogZone::auto();
        assert!(auto.is_auto());
        assert!(auto.name().starts_with("auto"));
        assert!(!LogZone::utc().is_auto());
    }
}
