//! Records printed twice. A logging handler configured twice (a known vLLM logging-config
//! mistake: the root logger and vLLM's own both print) writes every record twice in a row;
//! two processes writing through doubled handlers interleave their doubles. A repeat says
//! nothing new: counted as a repeat, it must add nothing to any counter, or the token counters
//! read double and the learned interval collapses to the one second the two copies share.
//!
//! A repeat is a record of the same grammar, at the same place in the same text, stamped
//! within the same second as one of the last few records of its log. Engines never print two
//! identical stats records in one second: a record carries its own time and changing values,
//! and vLLM's interval is at least a second unless set lower by hand.

/// How many recent records a new one is compared with: enough for several processes'
/// doubled lines to interleave.
const REMEMBERED: usize = 4;

/// Stamps this close are "the same stamp": an envelope (Docker, CRI) stamps each copy with
/// the nanosecond it was written.
const SAME_STAMP_SECONDS: f64 = 1.0;

#[derive(Debug, Clone, Default, PartialEq)]
struct Remembered {
    grammar: &'static str,
    /// The record's place among the records of its line (glued records share a line).
    ordinal: u32,
    stamp: f64,
    text: Vec<u8>,
}

/// The last records of one log, to tell a repeat. Records without a time are never repeats:
/// without a stamp, two identical lines may be two events.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecentRecords {
    records: Vec<Remembered>,
    /// Where the next record is remembered, once `records` is full.
    next: usize,
}

impl RecentRecords {
    /// Whether the record is a repeat of a recent one; remembers it when it is not.
    pub fn is_repeat(
        &mut self,
        grammar: &'static str,
        ordinal: u32,
        stamp: Option<f64>,
        text: &str,
    ) -> bool {
        let Some(stamp) = stamp else {
            return false;
        };
        // Cheapest first: most records differ from the recent ones in their time.
        let repeat = self.records.iter().any(|r| {
            (r.stamp - stamp).abs() < SAME_STAMP_SECONDS
                && r.ordinal == ordinal
                && r.text.len() == text.len()
                && r.grammar == grammar
                && r.text == text.as_bytes()
        });
        if !repeat {
            self.remember(grammar, ordinal, stamp, text);
        }
        repeat
    }

    fn remember(&mut self, grammar: &'static str, ordinal: u32, stamp: f64, text: &str) {
        if self.records.len() < REMEMBERED {
            self.records.push(Remembered::default());
        }
        let at = self.next % self.records.len();
        let slot = &mut self.records[at];
        self.next = (self.next + 1) % REMEMBERED;
        slot.grammar = grammar;
        slot.ordinal = ordinal;
        slot.stamp = stamp;
        // Reuses the slot's buffer: one copy per record, no allocation once warm.
        slot.text.clear();
        slot.text.extend_from_slice(text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str =
        "INFO 11-22 13:25:01 [loggers.py:257] Engine 000: Avg prompt throughput: 1.0 tokens/s";

    #[test]
    fn a_line_printed_twice_is_one_record_and_a_repeat() {
        let mut recent = RecentRecords::default();
        assert!(!recent.is_repeat("vllm_stats", 0, Some(1000.0), LINE));
        assert!(recent.is_repeat("vllm_stats", 0, Some(1000.0), LINE));
    }

    #[test]
    fn two_processes_doubled_lines_interleaved_are_repeats() {
        let mut recent = RecentRecords::default();
        let other = LINE.replace("Engine 000", "Engine 001");
        assert!(!recent.is_repeat("vllm_stats", 0, Some(1000.0), LINE));
        assert!(!recent.is_repeat("vllm_stats", 0, Some(1000.0), &other));
        assert!(recent.is_repeat("vllm_stats", 0, Some(1000.0), LINE));
        assert!(recent.is_repeat("vllm_stats", 0, Some(1000.0), &other));
    }

    #[test]
    fn the_same_text_at_another_time_or_without_one_is_no_repeat() {
        let mut recent = RecentRecords::default();
        assert!(!recent.is_repeat("vllm_stats", 0, Some(1000.0), LINE));
        assert!(!recent.is_repeat("vllm_stats", 0, Some(1010.0), LINE));
        assert!(!recent.is_repeat("vllm_stats", 0, None, LINE));
        assert!(!recent.is_repeat("vllm_stats", 0, None, LINE));
    }

    #[test]
    fn glued_records_of_one_line_are_not_repeats_of_each_other() {
        let mut recent = RecentRecords::default();
        assert!(!recent.is_repeat("vllm_stats", 0, Some(1000.0), LINE));
        assert!(!recent.is_repeat("vllm_stats", 1, Some(1000.0), LINE));
    }

    #[test]
    fn memory_is_bounded_to_the_last_few_records() {
        let mut recent = RecentRecords::default();
        for k in 0..100 {
            recent.is_repeat("vllm_stats", 0, Some(1000.0), &format!("{LINE} {k}"));
        }
        assert_eq!(recent.records.len(), REMEMBERED);
        assert!(recent.is_repeat("vllm_stats", 0, Some(1000.0), &format!("{LINE} 99")));
        assert!(!recent.is_repeat("vllm_stats", 0, Some(1000.0), &format!("{LINE} 0")));
    }
}
