//! A log's own first stage: once a log is known to hold one engine's records, its lines are
//! searched for that engine's pieces only, and for the pieces of the other engines' start-up
//! lines ([`crate::EngineGrammar::banner`]).
//!
//! Why: the first stage is one SIMD search of every line of every log, and every string it
//! looks for costs every line (BENCHMARKS.md, "First stage"): one budget for all engines left
//! lines unread. A log holds one engine's records nearly always, so each engine gets the budget
//! of its own logs ([`crate::EngineGrammar::known_stage`]), and a log costs what its engine's
//! pieces cost rather than what all seven engines' do.
//!
//! The states:
//! - unknown (a new log, or one whose engine changed): every engine's first-stage pieces
//!   ([`crate::PREFILTER`], in the measured order), as every log was searched before;
//! - known to hold engine E: E's pieces (first stage and known stage) and every other engine's
//!   banner. A record of another engine (read through its banner) sends the log back to unknown,
//!   so a log whose engine changes (a path reused by another server, a container image swapped)
//!   is read whole again from that engine's first start-up line on.
//!
//! What it gives up: a log in which two engines write at once (two containers into one file) is
//! read whole only until its first record; after that, the other engine's records are read from
//! its next start-up line. The line that decides is always read by the dispatch with every
//! engine's anchors, so a line this log's searcher flags is read exactly as [`crate::read`]
//! would read it.

use std::sync::{LazyLock, OnceLock};

use aho_corasick::packed;

use crate::{Outcome, Record, ENGINES};

/// The first stage of a log known to hold [`ENGINES`]`[i]`'s records, for each `i`: each built
/// when a log of that engine is first known, as most agents follow one engine's logs.
static KNOWN: LazyLock<Vec<OnceLock<packed::Searcher>>> =
    LazyLock::new(|| ENGINES.iter().map(|_| OnceLock::new()).collect());

/// [`KNOWN`]`[i]`, built on first use.
fn known_stage_of(i: usize) -> &'static packed::Searcher {
    KNOWN[i].get_or_init(|| crate::slim_searcher(&known_pieces(i)))
}

/// [`ENGINES`]`[i]`'s pieces and every other engine's banner, in the order measured for a log
/// of that engine ([`KNOWN_ORDERS`]), else in [`crate::PREFILTER`]'s.
fn known_pieces(i: usize) -> Vec<&'static str> {
    let own = (ENGINES[i].first_stage)()
        .into_iter()
        .chain(ENGINES[i].known_stage.iter().copied());
    let banners = ENGINES
        .iter()
        .enumerate()
        .filter(move |&(j, _)| j != i)
        .flat_map(|(_, e)| e.banner.iter().copied());
    let mut pieces = crate::in_measured_order(own.chain(banners));
    if let Some((_, order)) = KNOWN_ORDERS.iter().find(|(e, _)| *e == ENGINES[i].engine) {
        // Stable: a piece the order does not list keeps its place, after them.
        pieces.sort_by_cached_key(|p| order.iter().position(|o| o == p).unwrap_or(usize::MAX));
    }
    pieces
}

/// The order of a known log's strings that measured cheapest, per engine. Teddy buckets its
/// strings round-robin by their order (see [`crate::PREFILTER`]): the 28 strings of a vLLM log
/// in the unknown log's order cost the one-shot's first stage twice what the 36 did, and in
/// this order (a hill climb of swaps, BENCHMARKS.md "A log's own first stage") no more. An
/// engine not listed uses the unknown log's order until it is measured.
const KNOWN_ORDERS: &[(&str, &[&str])] = &[(
    "vllm",
    &[
        "r version ",
        "hput: ",
        "unexpectedly",
        "DeadError",
        "TensorRT-LLM version: ",
        "disabling stats",
        "unner",
        "Running: ",
        "_gpu_blocks is: ",
        "Iteration(",
        "fatal error",
        "blocks: ",
        "Prefix cache hit rate: GPU: ",
        "d tasks: [",
        "_router",
        "l_num_tokens=",
        "_cumulative_preemption=",
        "FastAPI HTTP",
        "SpecDecoding metrics: ",
        "loading: ",
        "RUNNING: ",
        "KV cache",
        "Maximum concurrency for ",
        "[GIN] ",
        "Speculative metrics: ",
        "slot",
        "dead, terminating",
        "onfig: ",
    ],
)];

/// One log's first stage: which engine's records the log is known to hold, if any. The agent
/// keeps one per log; a new one knows nothing.
#[derive(Debug, Clone, Copy)]
pub struct LogAnchors {
    /// The index in [`ENGINES`] of the engine whose records the log holds; `None` while unknown.
    engine: Option<usize>,
    /// The searcher of that state, kept at hand: the splitter asks for it at every line it
    /// flags, and reaching it through the state's match and [`KNOWN`]'s lazy list each time
    /// is work in the line loop.
    first_stage: &'static packed::Searcher,
}

impl Default for LogAnchors {
    fn default() -> LogAnchors {
        LogAnchors::knowing(None)
    }
}

impl PartialEq for LogAnchors {
    fn eq(&self, other: &LogAnchors) -> bool {
        self.engine == other.engine
    }
}

impl Eq for LogAnchors {}

impl LogAnchors {
    pub fn new() -> LogAnchors {
        LogAnchors::default()
    }

    // Cold: a log's engine changes once or twice in its life, and this code kept in the line
    // loop cost every line of it.
    #[cold]
    #[inline(never)]
    fn knowing(engine: Option<usize>) -> LogAnchors {
        let first_stage = match engine {
            None => &crate::FIRST_STAGE,
            Some(i) => known_stage_of(i),
        };
        LogAnchors {
            engine,
            first_stage,
        }
    }

    /// The engine the log is known to hold records of (`vllm`), if any.
    pub fn engine(&self) -> Option<&'static str> {
        self.engine.map(|i| ENGINES[i].engine)
    }

    /// Where this log's first stage first matches in `bytes` (one line or several): what
    /// [`crate::first_anchor`] is for every log, for this one.
    #[inline]
    pub fn first_anchor(&self, bytes: &[u8]) -> Option<usize> {
        self.first_stage.find(bytes).map(|m| m.start())
    }

    /// Every record of `line`, as [`crate::each_record`] reads them, found with this log's first
    /// stage; then what the parsed ones say of the log's engine is noted.
    pub fn each_record<'a>(&mut self, line: &'a str, each: impl FnMut(&Outcome<'a>)) {
        self.each_record_anchored(line, None, each);
    }

    /// [`LogAnchors::each_record`] of a line in which this log's first stage was searched for
    /// already ([`LogAnchors::first_anchor`]), and first matched at `first_anchor`: the line is
    /// not searched again.
    pub fn each_record_anchored<'a>(
        &mut self,
        line: &'a str,
        first_anchor: Option<usize>,
        mut each: impl FnMut(&Outcome<'a>),
    ) {
        let mut engines = 0u32;
        crate::records::each_record_after(self.first_stage, line, first_anchor, |outcome| {
            if let Outcome::Parsed(parsed) = outcome {
                engines |= engine_bit(&parsed.record);
            }
            each(outcome)
        });
        self.note(engines);
    }

    /// What the engines of a line's parsed records (bit `i` for [`ENGINES`]`[i]`) say of the log:
    /// one engine's records make an unknown log that engine's, another engine's records make a
    /// known log unknown again.
    fn note(&mut self, engines: u32) {
        if engines == 0 {
            return;
        }
        let engine = match self.engine {
            None if engines.is_power_of_two() => Some(engines.trailing_zeros() as usize),
            Some(known) if engines == 1 << known => Some(known),
            _ => None,
        };
        if engine != self.engine {
            *self = LogAnchors::knowing(engine);
        }
    }
}

/// Bit `i` for a record of [`ENGINES`]`[i]`.
fn engine_bit(record: &Record<'_>) -> u32 {
    1 << record.engine_index()
}

#[cfg(test)]
mod tests {
    use super::*;

    const VLLM_STATS: &str = "INFO 11-22 13:25:01 [loggers.py:118] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 5.0%, Prefix cache hit rate: 0.0%";
    const VLLM_FATAL: &str = "(EngineCore_DP0 pid=413) ERROR 11-10 12:30:57 [core.py:710] EngineCore encountered a fatal error.";
    const SGLANG_START: &str = "[2025-03-24 12:52:35 TP0] max_total_num_tokens=665690, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=4097, context_len=65536";

    fn read(anchors: &mut LogAnchors, line: &str) -> Vec<&'static str> {
        let mut grammars = Vec::new();
        anchors.each_record(line, |outcome| {
            if let Outcome::Parsed(parsed) = outcome {
                grammars.push(parsed.record.grammar());
            }
        });
        grammars
    }

    #[test]
    fn a_new_log_searches_every_engines_first_stage() {
        let anchors = LogAnchors::new();
        assert_eq!(anchors.engine(), None);
        assert!(anchors.first_anchor(SGLANG_START.as_bytes()).is_some());
        assert!(anchors.first_anchor(VLLM_STATS.as_bytes()).is_some());
    }

    #[test]
    fn a_record_makes_the_log_its_engines() {
        let mut anchors = LogAnchors::new();
        assert_eq!(read(&mut anchors, VLLM_STATS), ["vllm_stats"]);
        assert_eq!(anchors.engine(), Some("vllm"));
        assert_eq!(read(&mut anchors, "plain text"), Vec::<&str>::new());
        assert_eq!(anchors.engine(), Some("vllm"));
    }

    #[test]
    fn a_known_log_reads_the_lines_only_its_engine_has_budget_for() {
        let mut anchors = LogAnchors::new();
        assert_eq!(anchors.first_anchor(VLLM_FATAL.as_bytes()), None);
        read(&mut anchors, VLLM_STATS);
        assert!(anchors.first_anchor(VLLM_FATAL.as_bytes()).is_some());
        assert_eq!(read(&mut anchors, VLLM_FATAL), ["vllm_lifecycle"]);
    }

    #[test]
    fn another_engines_start_up_makes_the_log_unknown_again() {
        let mut anchors = LogAnchors::new();
        read(&mut anchors, VLLM_STATS);
        assert!(anchors.first_anchor(SGLANG_START.as_bytes()).is_some());
        assert_eq!(read(&mut anchors, SGLANG_START), ["sglang_capacity"]);
        assert_eq!(anchors.engine(), None);
        read(&mut anchors, SGLANG_START);
        assert_eq!(anchors.engine(), Some("sglang"));
    }

    #[test]
    fn a_records_engine_bit_is_its_engines_place_in_the_registry() {
        for line in [VLLM_STATS, VLLM_FATAL, SGLANG_START] {
            crate::records::each_record(line, |outcome| {
                let Outcome::Parsed(parsed) = outcome else {
                    panic!("{line:?} is a record");
                };
                let engine = parsed.record.engine();
                let place = ENGINES.iter().position(|e| e.engine == engine).unwrap();
                assert_eq!(engine_bit(&parsed.record), 1 << place, "{engine}");
            });
        }
    }

    /// An order names no piece its engine's log does not search (a stale order). A piece it
    /// does not name (a new engine's banner) goes after the measured ones until the order is
    /// measured again.
    #[test]
    fn a_measured_order_lists_only_its_engines_known_pieces() {
        for (engine, order) in KNOWN_ORDERS {
            let i = ENGINES.iter().position(|e| e.engine == *engine).unwrap();
            let pieces = known_pieces(i);
            for piece in *order {
                assert!(
                    pieces.contains(piece),
                    "{engine}: {piece:?} is searched no more"
                );
            }
        }
    }

    #[test]
    fn a_known_log_searches_fewer_strings_than_an_unknown_one() {
        for (i, engine) in ENGINES.iter().enumerate() {
            let known = known_pieces(i);
            assert!(known.len() < crate::EVERY_PIECE.len(), "{}", engine.engine);
            for piece in (engine.first_stage)() {
                assert!(known.contains(&piece), "{piece:?}");
            }
        }
    }
}
