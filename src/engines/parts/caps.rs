//! Caps on the series a log's lines can make: per log and engine ([`Cap`]) and for the whole
//! agent (`--max-series`, [`SeriesGuard`]). What a record would have made past one is
//! [`Refused`], counted, and not made.

// A log is one server: each cap is the most its engine can print, with room to spare. Past
// them a log is garbled or hostile, and every new label value would be series kept for ever
// (100k `Engine NNN:` values made 900k series). Each engine's own caps ([`Cap`]) are in its
// folder; these are shared.

/// Per-position acceptance rates (vLLM, LMDeploy): one per draft position
/// (`num_speculative_tokens`, 1 to 10 in practice; EAGLE trees and n-gram drafts stay under
/// 64).
pub const SPEC_POSITIONS: usize = 64;
/// `--max-series`: a 64 MiB agent keeps about this many series comfortably.
pub const DEFAULT_MAX_SERIES: usize = 100_000;

/// A per-log cap of an engine: the most label values of one kind a log can make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cap {
    /// What the cap counts, for the warning: "a vLLM engine index (Engine NNN:)".
    pub what: &'static str,
    pub cap: usize,
}

/// `--max-series`: a global guard on the series engines and ranks of all logs can make,
/// counted as units times what each costs (its rows in its engine's catalog table,
/// [`Engine::series_per_unit`]). The one place where logs affect each other: units already
/// made keep their series, and the log that asks for a new one past the guard is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeriesGuard {
    pub max_series: usize,
}

/// What a record would have created past a cap; it is not created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// A new unit (engine, rank, slot) past one of its engine's per-log caps.
    Cap(Cap),
    /// Positions past the cap are dropped; the rest of the line is kept.
    SpecPosition,
    /// A new engine or rank past `--max-series`.
    MaxSeries,
}

impl Refused {
    pub fn what(self) -> &'static str {
        match self {
            Refused::Cap(cap) => cap.what,
            Refused::SpecPosition => "per-position acceptance rates past the cap",
            Refused::MaxSeries => "a new unit: an engine, rank, slot or route (--max-series)",
        }
    }

    pub fn cap(self, guard: &SeriesGuard) -> usize {
        match self {
            Refused::Cap(cap) => cap.cap,
            Refused::SpecPosition => SPEC_POSITIONS,
            Refused::MaxSeries => guard.max_series,
        }
    }
}
