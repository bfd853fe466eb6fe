//! The last hour of each engine, for the landing page's charts: running and waiting requests,
//! KV-cache usage and generation throughput, as a fixed ring of 30-second slots per engine.
//!
//! The pipeline's judging tick samples what `/metrics` serves at that moment (the engine's own
//! gauges, its units and logs combined by [`Charted::combine`], a unit that is down giving
//! nothing), on the agent's clock, once the logs' backlog is read. So a chart is what a scrape
//! every second would have drawn, and a line's own stamp never places a point: a backlog stamped
//! days ago counts only through the state it leaves (a busy engine silent since then is down:
//! no point), and a line stamped ahead of the host's clock draws at the moment it was read.
//! What the agent did not watch (before it started, while it was stopped) is a gap.
//!
//! Each slot keeps the highest value sampled in its 30 seconds, so a burst between two stats
//! lines is not lost to a later, quieter one. An engine costs nothing until it has a unit, then
//! [`Ring`]'s fixed size (see `a_ring_costs_a_fixed_few_kilobytes`).

use crate::engines::Charted;

/// How many slots a ring holds, and how long each one is: an hour in all.
pub const SLOTS: usize = 120;
pub const SLOT_SECONDS: f64 = 30.0;

/// What the ring knows of one slot's 30 seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Slot {
    /// Which 30 seconds since the epoch this slot holds (the ring's position only says which
    /// they are modulo [`SLOTS`]): a slot left from an earlier hour is a gap.
    number: u32,
    /// The highest value of each [`Charted`] quantity sampled; NaN for none.
    values: [f32; 4],
}

const EMPTY: Slot = Slot {
    number: u32::MAX,
    values: [f32::NAN; 4],
};

/// One engine's last hour. See the module's doc.
#[derive(Debug, Clone, PartialEq)]
pub struct Ring {
    slots: [Slot; SLOTS],
    /// The last sample, and when it was taken: the charts' "now".
    latest: [f32; 4],
    latest_at: f64,
}

impl Default for Ring {
    fn default() -> Self {
        Ring {
            slots: [EMPTY; SLOTS],
            latest: [f32::NAN; 4],
            latest_at: f64::NEG_INFINITY,
        }
    }
}

/// The number of the 30 seconds that hold agent time `at`.
fn slot_number(at: f64) -> u32 {
    (at / SLOT_SECONDS)
        .floor()
        .clamp(0.0, f64::from(u32::MAX / 2)) as u32
}

fn value(v: f32) -> Option<f64> {
    (!v.is_nan()).then_some(f64::from(v))
}

impl Ring {
    /// A sample taken at agent time `now`: each quantity's value, or none.
    pub fn note(&mut self, now: f64, values: [Option<f64>; 4]) {
        let number = slot_number(now);
        let slot = &mut self.slots[number as usize % SLOTS];
        if slot.number != number {
            *slot = Slot { number, ..EMPTY };
        }
        for (kept, new) in slot.values.iter_mut().zip(values) {
            if let Some(new) = new {
                *kept = if kept.is_nan() {
                    new as f32
                } else {
                    kept.max(new as f32)
                };
            }
        }
        self.latest = values.map(|v| v.map_or(f32::NAN, |v| v as f32));
        self.latest_at = now;
    }

    /// The hour up to agent time `now`, oldest slot first: one point per slot, `None` where
    /// nothing was sampled (the agent stopped, the engine down or not yet seen).
    pub fn hour(&self, now: f64, quantity: Charted) -> [Option<f64>; SLOTS] {
        let last = slot_number(now);
        let index = quantity as usize;
        std::array::from_fn(|i| {
            let number = (last + 1 + i as u32).checked_sub(SLOTS as u32)?;
            let slot = &self.slots[number as usize % SLOTS];
            (slot.number == number).then_some(())?;
            value(slot.values[index])
        })
    }

    /// The last sample of `quantity`, if it was taken in the last slot or the one before (an
    /// older one is no longer "now").
    pub fn latest(&self, now: f64, quantity: Charted) -> Option<f64> {
        (now - self.latest_at < 2.0 * SLOT_SECONDS)
            .then(|| value(self.latest[quantity as usize]))
            .flatten()
    }
}

/// Every engine's ring, in [`crate::engines::for_each_engine`] order; an engine never seen has
/// none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    rings: Vec<Option<Box<Ring>>>,
}

impl History {
    /// A sample of the engine at `index` ([`crate::engines::Registered::INDEX`]).
    pub fn note(&mut self, index: usize, now: f64, values: [Option<f64>; 4]) {
        if self.rings.len() <= index {
            self.rings.resize_with(index + 1, || None);
        }
        self.rings[index]
            .get_or_insert_with(Box::default)
            .note(now, values);
    }

    /// The engine's ring, once it was sampled.
    pub fn ring(&self, index: usize) -> Option<&Ring> {
        self.rings.get(index)?.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An agent time at the start of a slot.
    const T0: f64 = 1_800_000_000.0;

    fn running(ring: &Ring, now: f64) -> Vec<Option<f64>> {
        ring.hour(now, Charted::Running).to_vec()
    }

    fn sample(running: f64) -> [Option<f64>; 4] {
        [Some(running), Some(0.0), None, None]
    }

    #[test]
    fn a_slot_keeps_the_highest_value_sampled_in_its_30_seconds() {
        let mut ring = Ring::default();
        ring.note(T0 + 1.0, sample(3.0));
        ring.note(T0 + 11.0, sample(7.0));
        ring.note(T0 + 21.0, sample(2.0));
        let hour = running(&ring, T0 + 21.0);
        assert_eq!(hour[SLOTS - 1], Some(7.0));
        assert_eq!(hour[..SLOTS - 1], [None; SLOTS - 1]);
        assert_eq!(ring.latest(T0 + 21.0, Charted::Running), Some(2.0));
    }

    #[test]
    fn a_quantity_the_engine_does_not_say_has_no_point() {
        let mut ring = Ring::default();
        ring.note(T0, sample(1.0));
        assert_eq!(ring.hour(T0, Charted::KvUsage), [None; SLOTS]);
        assert_eq!(ring.latest(T0, Charted::KvUsage), None);
    }

    #[test]
    fn the_hour_moves_with_the_clock_and_drops_what_is_older() {
        let mut ring = Ring::default();
        ring.note(T0, sample(1.0));
        ring.note(T0 + SLOT_SECONDS, sample(2.0));
        let later = T0 + SLOT_SECONDS * 10.0;
        let hour = running(&ring, later);
        assert_eq!(hour[SLOTS - 11..SLOTS - 9], [Some(1.0), Some(2.0)]);
        // An hour and a slot later the first point is gone, the second is the oldest.
        let hour = running(&ring, T0 + SLOT_SECONDS * SLOTS as f64);
        assert_eq!(hour[0], Some(2.0));
        assert_eq!(hour.iter().flatten().count(), 1);
    }

    #[test]
    fn the_ring_wraps_over_slots_of_an_earlier_hour() {
        let mut ring = Ring::default();
        for i in 0..SLOTS * 2 + 5 {
            ring.note(T0 + SLOT_SECONDS * i as f64, sample(i as f64));
        }
        let now = T0 + SLOT_SECONDS * (SLOTS * 2 + 4) as f64;
        let hour = running(&ring, now);
        let expected: Vec<Option<f64>> =
            (SLOTS + 5..SLOTS * 2 + 5).map(|i| Some(i as f64)).collect();
        assert_eq!(hour, expected);
    }

    #[test]
    fn the_time_the_agent_was_not_sampling_is_a_gap_not_the_value_before_it() {
        let mut ring = Ring::default();
        ring.note(T0, sample(5.0));
        // Stopped for 40 minutes; the slots in between still hold an earlier hour's values.
        let back = T0 + 40.0 * 60.0;
        ring.note(back, sample(1.0));
        let hour = running(&ring, back);
        assert_eq!(hour[SLOTS - 81], Some(5.0));
        assert_eq!(hour[SLOTS - 80..SLOTS - 1], [None; 79]);
        assert_eq!(hour[SLOTS - 1], Some(1.0));
        // "Now" is the last sample only while it is recent.
        assert_eq!(ring.latest(back + 5.0 * 60.0, Charted::Running), None);
    }

    #[test]
    fn slots_from_before_a_clock_set_back_are_not_drawn_as_the_present() {
        let mut ring = Ring::default();
        ring.note(T0 + 3600.0, sample(9.0));
        let hour = running(&ring, T0);
        assert_eq!(hour, [None; SLOTS]);
    }

    #[test]
    fn an_engine_costs_nothing_until_it_is_sampled() {
        let mut history = History::default();
        assert!(history.ring(3).is_none());
        history.note(3, T0, sample(1.0));
        assert!(history.ring(3).is_some());
        assert!(history.ring(0).is_none());
    }

    /// The figure the README gives: what one engine's last hour costs.
    #[test]
    fn a_ring_costs_a_fixed_few_kilobytes() {
        let per_engine = std::mem::size_of::<Ring>() + std::mem::size_of::<Option<Box<Ring>>>();
        assert_eq!(std::mem::size_of::<Slot>(), 20);
        assert_eq!(per_engine, SLOTS * 20 + 16 + 8 + 8);
        assert!(per_engine < 2500, "{per_engine} bytes");
    }
}
