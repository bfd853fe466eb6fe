//! Timestamps as record heads print them.
//!
//! Engines rarely print a year (vLLM: `11-22 13:25:01`; Triton's glog: `I1122 13:25:01.123456`),
//! and hardly ever a zone. A grammar keeps exactly what the line says, plus the zone when the
//! format fixes one (Triton's logger always writes UTC); the agent supplies the year and the
//! log's zone for the rest, because only it knows the clock and the host. No calendar here:
//! the agent's `timezone` module turns a `LogTime` into an instant.

use serde::{Serialize, Serializer};

/// A wall-clock time as a record head (or an envelope) prints it. `year` is `None` when the
/// line has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LogTime {
    pub year: Option<u16>,
    pub month: u8,
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub nanos: u32,
    /// Seconds east of UTC when the format fixes the zone: printed (`Z`, `+09:00`) or by the
    /// writer's convention (Triton's logger formats with `gmtime_r`). `None` is the writer's
    /// local time, which the agent reads in the log's zone (`--log-timezone`).
    pub utc_offset: Option<i32>,
}

impl LogTime {
    /// Whether month, day and clock are in range (a second of 60 is a leap second): what every
    /// record-head grammar checks before it calls digits a time.
    pub fn is_valid_clock(month: u32, day: u32, hour: u32, minute: u32, second: u32) -> bool {
        (1..=12).contains(&month)
            && (1..=31).contains(&day)
            && hour < 24
            && minute < 60
            && second < 61
    }
}

/// Case files compare times as text: `11-22 13:25:01`, `2025-04-28 09:56:44`,
/// `05-10 07:57:30.770724 UTC`, `2026-11-22 14:25:01 +01:00`.
impl Serialize for LogTime {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl std::fmt::Display for LogTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(year) = self.year {
            write!(f, "{year:04}-")?;
        }
        write!(
            f,
            "{:02}-{:02} {:02}:{:02}:{:02}",
            self.month, self.day, self.hour, self.minute, self.second
        )?;
        if self.nanos != 0 {
            let frac = format!("{:09}", self.nanos);
            write!(f, ".{}", frac.trim_end_matches('0'))?;
        }
        match self.utc_offset {
            None => Ok(()),
            Some(0) => write!(f, " UTC"),
            Some(offset) => {
                let sign = if offset < 0 { '-' } else { '+' };
                let minutes = offset.unsigned_abs() / 60;
                write!(f, " {sign}{:02}:{:02}", minutes / 60, minutes % 60)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_omits_what_the_line_did_not_print() {
        let t = LogTime {
            year: None,
            month: 5,
            day: 10,
            hour: 7,
            minute: 57,
            second: 30,
            nanos: 770_724_000,
            utc_offset: None,
        };
        assert_eq!(t.to_string(), "05-10 07:57:30.770724");
        let utc = LogTime {
            utc_offset: Some(0),
            ..t
        };
        assert_eq!(utc.to_string(), "05-10 07:57:30.770724 UTC");
        let west = LogTime {
            utc_offset: Some(-(3 * 3600 + 30 * 60)),
            ..t
        };
        assert_eq!(west.to_string(), "05-10 07:57:30.770724 -03:30");
    }
}
