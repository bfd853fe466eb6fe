//! What engines' states are built from: liveness, the pacing that turns throughputs into token
//! counts, histograms, counters that restart with the engine, caps, and the settings every
//! engine reads. No engine imports another: what two of them share lives here.

pub mod caps;
pub mod counting;
pub mod float;
pub mod histogram;
pub mod liveness;
pub mod pacing;
pub mod settings;
pub mod units;
pub mod version;
