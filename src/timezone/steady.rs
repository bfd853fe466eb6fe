//! Reading many wall times of one zone without the zone's rules each time. A zone's offset
//! stays the same for months between two transitions, and a log's times follow one another, so
//! the span of wall times around the last one read that all read at one offset is kept: a time
//! inside it is its wall-clock seconds less that offset, the answer the rules give, at a
//! fraction of the cost (the rules were a sixth of a stats line's cost).

use std::cell::Cell;

use jiff::tz::TimeZone;
use jiff::Timestamp;

/// Two days: more than the distance between any two offsets a zone has had (UTC-12 to UTC+14),
/// so a wall time this far from a transition cannot be in its gap or fold.
const MARGIN_SECONDS: i64 = 2 * 86_400;

/// A span of wall times (in seconds counted as if they were UTC) that all read at one offset.
#[derive(Debug, Clone, Copy)]
struct Span {
    from: i64,
    to: i64,
    offset: i64,
}

/// The last two steady spans learned: a time without a year is tried in this year before
/// last year's, so a log of last year's lines asks about both years at every line.
#[derive(Debug, Default, Clone)]
pub(super) struct SteadyOffset {
    spans: [Cell<Option<Span>>; 2],
}

impl SteadyOffset {
    /// The instant of the wall time `wall` (seconds counted as if UTC), when it is inside the span
    /// learned last.
    #[inline]
    pub fn instant(&self, wall: i64) -> Option<i64> {
        self.spans.iter().find_map(|span| {
            let span = span.get()?;
            (span.from <= wall && wall < span.to).then(|| wall - span.offset)
        })
    }

    /// Learns the span around `wall`, which `zone` reads as the one instant `wall - offset`:
    /// every wall time at least [`MARGIN_SECONDS`] inside the transitions around that instant
    /// reads at `offset` too, and at no other.
    pub fn learn(&self, zone: &TimeZone, wall: i64, offset: i64) {
        let at = wall - offset;
        // `preceding` gives transitions strictly before its argument: one at `at` itself is
        // where this offset starts.
        let before = Timestamp::from_second(at.saturating_add(1))
            .ok()
            .and_then(|t| zone.preceding(t).next())
            .map_or(i64::MIN, |t| t.timestamp().as_second());
        let after = Timestamp::from_second(at)
            .ok()
            .and_then(|t| zone.following(t).next())
            .map_or(i64::MAX, |t| t.timestamp().as_second());
        // Within jiff's range of instants too, where its rules would give none.
        let span = Span {
            from: before.max(Timestamp::MIN.as_second()) + offset + MARGIN_SECONDS,
            to: after.min(Timestamp::MAX.as_second()) + offset - MARGIN_SECONDS,
            offset,
        };
        self.spans[1].set(self.spans[0].get());
        self.spans[0].set((span.from < span.to).then_some(span));
    }
}

/// Seconds from 1970-01-01 00:00:00 to the wall time given, counted as if it were UTC; `None`
/// for a time that does not exist (Feb 30, 24:00) or a year jiff does not read (outside
/// -9999..=9999), as `jiff::civil::DateTime::new` refuses them.
pub(super) fn wall_seconds(
    year: i16,
    month: u8,
    day: u8,
    hour: u8,
    minute: u8,
    second: u8,
) -> Option<i64> {
    let valid = (-9999..=9999).contains(&year)
        && (1..=12).contains(&month)
        && day >= 1
        && day <= days_in_month(year, month)
        && hour < 24
        && minute < 60
        && second < 60;
    if !valid {
        return None;
    }
    let days = days_from_civil(i64::from(year), i64::from(month), i64::from(day));
    Some(days * 86_400 + i64::from(hour) * 3_600 + i64::from(minute) * 60 + i64::from(second))
}

fn days_in_month(year: i16, month: u8) -> u8 {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::DateTime;

    #[test]
    fn wall_seconds_are_jiffs_for_every_day_and_refuse_what_it_refuses() {
        for year in [
            -9999i16, -1, 0, 1, 1600, 1900, 1970, 2000, 2024, 2026, 2100, 9999,
        ] {
            for month in 0..=13u8 {
                for day in 0..=32u8 {
                    let civil = DateTime::new(year, month as i8, day as i8, 23, 59, 58, 0).ok();
                    let ours = wall_seconds(year, month, day, 23, 59, 58);
                    assert_eq!(ours.is_some(), civil.is_some(), "{year}-{month}-{day}");
                    // Outside jiff's instants (its first day, at UTC) only the validity is
                    // compared.
                    if let Some(at) = civil.and_then(|t| TimeZone::UTC.to_timestamp(t).ok()) {
                        assert_eq!(ours, Some(at.as_second()), "{year}-{month}-{day}");
                    }
                }
            }
        }
        assert_eq!(wall_seconds(2026, 1, 1, 24, 0, 0), None);
        assert_eq!(wall_seconds(2026, 1, 1, 0, 60, 0), None);
        assert_eq!(wall_seconds(2026, 1, 1, 0, 0, 60), None);
        assert_eq!(wall_seconds(10_000, 1, 1, 0, 0, 0), None);
    }
}
