//! Grammars for the stats lines that LLM inference engines write into their logs.
//!
//! This crate is the pure middle of llmtail's data flow: a decoded log message goes in,
//! a typed record of what the line says comes out. No I/O, no clock, no Prometheus:
//! values are kept as the line prints them (a percentage stays a percentage), and the
//! agent decides what they mean as metrics.
//!
//! Dispatch is two-staged because almost every line in a real log is *not* a stats line:
//! one Aho-Corasick pass looks for the anchors of every grammar (`Avg prompt throughput: `,
//! `SpecDecoding metrics: `, ...), and only a line that contains an anchor is handed to the
//! nom grammar of the engine that owns it. A line none of them reads through the record heads
//! they know is offered once more, message by message, behind a head none knows ([`foreign`]).

#![forbid(unsafe_code)]

pub mod domain;
pub mod foreign;
pub mod lex;
mod prefilter;
mod records;

use std::ops::Range;
use std::sync::LazyLock;

use aho_corasick::packed;
use serde::Serialize;

pub use lex::time::LogTime;
// The paths the agent and the fuzzers read numbers and times by.
pub use lex::{number, time};
pub use prefilter::LogAnchors;
pub use records::{each_record, records, Records};

/// One parsed line: when the line says it was written, and what it says.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Parsed<'a> {
    /// The timestamp in the record head, when the engine's logger printed one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<LogTime>,
    /// The process name in a vLLM `(EngineCore_DP1 pid=7)` prefix, or a TRT-LLM rank, when present
    /// (LMDeploy's data-parallel rank is in its record).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process: Option<&'a str>,
    #[serde(flatten)]
    pub record: Record<'a>,
}

/// The one list of engines: the module of each (`grammars/src/<engine>/` here,
/// `src/engines/<engine>/` in the agent) and the name of its [`Record`] variant, in the order
/// the dispatch asks them (a line holds one engine's anchors nearly always, and no line of one
/// parses as another's: the line cases hold every engine's lines and check it, so the order
/// only decides how soon a stats line is claimed; vLLM's lines are the most common) and the
/// exposition writes them.
///
/// `with_engines!(then)` calls the macro `then!` with the list, as `module Variant` pairs:
/// [`Record`], [`ENGINES`], the agent's registry and the fuzz dispatch are made from it, so
/// adding an engine is its folders and one line here. Each engine's module has a
/// `GRAMMAR: EngineGrammar` and an `EngineRecord<'a>`, the type its variant holds.
///
/// The modules are declared by this list, where `cargo fmt` does not look: format them with
/// `cargo fmt --all -- grammars/src/<engine>/mod.rs src/engines/<engine>/mod.rs` (a test in
/// `tests/registry.rs` checks them).
#[macro_export]
macro_rules! with_engines {
    ($then:ident) => {
        $then! {
            vllm Vllm,
            trtllm Trtllm,
            llamacpp Llamacpp,
            lmdeploy Lmdeploy,
            tgi Tgi,
            ollama Ollama,
            sglang Sglang,
            koboldcpp Koboldcpp,
        }
    };
}

/// The grammars' side of [`with_engines!`]: each engine's module, its [`Record`] variant and
/// its place in [`ENGINES`].
macro_rules! grammar_registry {
    ($($engine:ident $Variant:ident,)*) => {
        $(pub mod $engine;)*

        /// What a line says, per engine: the variant is the engine whose record it is.
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[serde(untagged)]
        pub enum Record<'a> {
            $($Variant($engine::EngineRecord<'a>),)*
        }

        impl Record<'_> {
            /// The name of the grammar that produced this record, as used in the
            /// `grammar` label of `llmtail_lines_parsed_total`.
            pub fn grammar(&self) -> &'static str {
                match self {
                    $(Record::$Variant(r) => r.grammar(),)*
                }
            }

            /// True when every value is one the engine can print: what each engine's reader
            /// checks before it answers [`Outcome::Parsed`] (tests and fuzzers hold every
            /// parse to it).
            pub fn possible(&self) -> bool {
                match self {
                    $(Record::$Variant(r) => r.possible(),)*
                }
            }

            /// The place of its engine in [`ENGINES`]: what a log's first stage notes of
            /// every record ([`LogAnchors`]), without comparing names.
            pub(crate) fn engine_index(&self) -> usize {
                let mut index = 0;
                $(
                    if matches!(self, Record::$Variant(_)) {
                        return index;
                    }
                    index += 1;
                )*
                unreachable!("{index} engines, and a record is one of theirs")
            }

            /// The engine whose record it is: its [`EngineGrammar::engine`].
            pub fn engine(&self) -> &'static str {
                match self {
                    $(Record::$Variant(_) => $engine::GRAMMAR.engine,)*
                }
            }
        }

        /// Every engine's grammar, in [`with_engines!`] order.
        pub static ENGINES: &[&EngineGrammar] = &[$(&$engine::GRAMMAR,)*];
    };
}

with_engines!(grammar_registry);

/// One engine's grammar, as the dispatch sees it: what the first stage looks for, which anchors
/// say the line is this engine's, the names its records count under, and its reader. The lists
/// below ([`GRAMMAR_NAMES`], [`PREFILTER`], the second-stage searchers) are derived from
/// [`ENGINES`], which [`with_engines!`] makes.
pub struct EngineGrammar {
    /// The engine's name, as the agent's registry and the fixtures name it (`vllm`).
    pub engine: &'static str,
    /// Substrings at least one of which every line the engine parses contains.
    pub anchors: fn() -> Vec<&'static str>,
    /// The first stage's pieces for this engine: each anchor contains one (a test checks).
    /// Every piece costs every line of every log a little (see [`FIRST_STAGE`]).
    pub first_stage: fn() -> Vec<&'static str>,
    /// More first-stage pieces, searched only in a log known to hold this engine's records
    /// ([`LogAnchors`]): lines worth reading that would cost every other log's every line.
    pub known_stage: &'static [&'static str],
    /// The pieces, among the two above, of lines the engine prints as it starts (or, for an
    /// engine that prints none, of its commonest records): searched in every log known to hold
    /// another engine's records, so that a log whose engine changes is read again.
    pub banner: &'static [&'static str],
    /// Every value [`Record::grammar`] gives for this engine's records.
    pub grammar_names: &'static [&'static str],
    /// Reads a line holding one of the anchors: the outcome, and where the message of the
    /// record it read begins (the end of the line when it read none).
    pub read_message: for<'a> fn(&'a str) -> (Outcome<'a>, usize),
    /// Reads a message that stands behind a head no grammar knows (`head` is the text in front
    /// of it, see [`foreign`]); the dispatch fills in the time from the head's first stamp when
    /// the reader sets none. `None` for an engine whose messages never stand behind another
    /// head: one that prints its own head (LMDeploy's `print()`), or whose record is its head
    /// (TGI's spans, Ollama's key-value lines).
    pub read_foreign: Option<ForeignReader>,
}

/// See [`EngineGrammar::read_foreign`].
pub type ForeignReader = for<'a> fn(head: &'a str, message: &'a str) -> Outcome<'a>;

/// Every value [`Record::grammar`] can return: the `grammar` label's whole domain.
pub static GRAMMAR_NAMES: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    ENGINES
        .iter()
        .flat_map(|e| e.grammar_names.iter().copied())
        .collect()
});

/// The first stage's strings: a piece of each anchor (every anchor contains one, a test
/// checks), chosen so their first three bytes are rare in prose, JSON and addresses. The SIMD
/// (Teddy) search behind a leftmost-first automaton looks for those three bytes first; with
/// the anchors themselves, ` to`, ` wi` and ` fo` (` tokens in paged KV cache.`,
/// ` with config: `, ` for max tokens`) stopped it every few bytes of a prompt. Several
/// engines' anchors share a piece (`KV cache`): it is searched once.
pub static PREFILTER: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| in_measured_order(ENGINES.iter().flat_map(|e| (e.first_stage)())));

/// Every engine's every first-stage piece: [`PREFILTER`] and the pieces searched only in a log
/// known to hold the engine's records ([`EngineGrammar::known_stage`]). What the stateless
/// readers ([`read`], [`records()`], [`first_anchor`]) search, so that they read every line
/// some log's [`LogAnchors`] may send them.
pub static EVERY_PIECE: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let known = ENGINES.iter().flat_map(|e| e.known_stage.iter().copied());
    in_measured_order(PREFILTER.iter().copied().chain(known))
});

/// `pieces` without repeats, in [`FIRST_STAGE_ORDER`]; a piece that order does not list keeps
/// its place among the others, after them (the sort is stable).
fn in_measured_order(pieces: impl Iterator<Item = &'static str>) -> Vec<&'static str> {
    let mut unique: Vec<&'static str> = Vec::new();
    for piece in pieces {
        if !unique.contains(&piece) {
            unique.push(piece);
        }
    }
    unique.sort_by_cached_key(|piece| {
        FIRST_STAGE_ORDER
            .iter()
            .position(|listed| listed == piece)
            .unwrap_or(usize::MAX)
    });
    unique
}

/// The order of the first stage's strings that measured cheapest. Teddy puts strings into its
/// 8 buckets round-robin by their order, and a bucket whose strings' first four bytes differ
/// lets more text through to its verification: on the one-shot benchmark's log the same 33
/// strings cost from 246M to 554M instructions by their order alone (the registry's order: 375M;
/// the 28 strings before the sixth engine, in theirs: 281M); with SGLang's `-req: ` the 34 cost 244M,
/// and with its `#new_token` and `l_num_tokens=` the 36 cost 242M. Found by swapping pairs while
/// the count went down (BENCHMARKS.md, "First stage"); a new engine's pieces go after these
/// until the order is measured again. The order changes no answer: no two strings can match at one place.
const FIRST_STAGE_ORDER: &[&str] = &[
    "disabling stats",
    "hput: ",
    "_rank = ",
    "unexpectedly",
    "_gpu_blocks is: ",
    "unner",
    "onfig: ",
    "KV cache",
    "d tasks: [",
    "Active Request Count",
    "Running: ",
    "_router",
    "_cumulative_preemption=",
    "dead, terminating",
    "block: ",
    "[GIN] ",
    "FastAPI HTTP",
    "Speculative metrics: ",
    "Prefix cache hit rate: GPU: ",
    "slot",
    "#new_token",
    "l_num_tokens=",
    "e = ",
    "cpuMemUsage",
    "SpecDecoding metrics: ",
    "loading: ",
    "Signal (",
    "LatencyMS",
    "TensorRT-LLM version: ",
    "kv cache: ",
    "RUNNING: ",
    "-req: ",
    "DeadError",
    "blocks: ",
    "Iteration(",
    "Maximum concurrency for ",
];

/// Every first-stage string of every engine ([`EVERY_PIECE`]).
pub fn first_stage_strings() -> impl Iterator<Item = &'static str> {
    EVERY_PIECE.iter().copied()
}

/// [`PREFILTER`] as one SIMD (Teddy) searcher, leftmost-first: an automaton with overlapping
/// search cannot use SIMD and steps a DFA byte by byte (about 250 MB/s here). The packed
/// searcher answers with the match itself, without the automaton's confirming step. Every
/// string costs: past 32 Teddy goes fat (16 bytes a step instead of 32: a one-shot run of 1M
/// lines took 0.32 s instead of 0.21 s with 44 strings), and slim Teddy with 31 strings still
/// verified so many candidates that it was 30% slower than with 27. Keep the list short.
/// It is the first stage of a log whose engine is not known yet ([`LogAnchors`]).
static FIRST_STAGE: LazyLock<packed::Searcher> = LazyLock::new(|| slim_searcher(&PREFILTER));

/// [`EVERY_PIECE`] as one searcher: the stateless readers' first stage.
static EVERY_STAGE: LazyLock<packed::Searcher> = LazyLock::new(|| slim_searcher(&EVERY_PIECE));

/// Each engine's anchors, searched the same way, in [`ENGINES`] order: the second stage,
/// which says whose grammar to ask.
static ENGINE_ANCHORS: LazyLock<Vec<EngineAnchors>> =
    LazyLock::new(|| ENGINES.iter().map(|e| EngineAnchors::new(e)).collect());

/// One engine's anchors as one searcher. An anchor that holds one of the engine's
/// [`EngineGrammar::known_stage`] pieces is searched for by that piece and then confirmed whole:
/// such a piece stands for an anchor whose start is common text. vLLM's `EngineCore encountered
/// a fatal error` begins as every V1 stats line's `Engine 000: ` does, and the SIMD search
/// stopped there to verify it in every stats line (10M instructions of a one-shot run).
struct EngineAnchors {
    searcher: packed::Searcher,
    /// For each of the searcher's strings, by its id: `None` for an anchor itself, else the
    /// anchors it is a piece of, each with where the piece starts in it.
    whole: Vec<Option<Vec<(&'static str, usize)>>>,
}

impl EngineAnchors {
    fn new(engine: &EngineGrammar) -> EngineAnchors {
        let anchors = (engine.anchors)();
        let mut strings: Vec<&'static str> = Vec::new();
        let mut whole: Vec<Option<Vec<(&'static str, usize)>>> = Vec::new();
        for &anchor in &anchors {
            let (string, piece_of) = match known_piece_of(engine, anchor, &anchors) {
                Some((piece, at)) => (piece, Some((anchor, at))),
                None => (anchor, None),
            };
            let id = strings
                .iter()
                .position(|s| *s == string)
                .unwrap_or_else(|| {
                    strings.push(string);
                    whole.push(Some(Vec::new()));
                    strings.len() - 1
                });
            match (piece_of, &mut whole[id]) {
                (Some(piece_of), Some(list)) => list.push(piece_of),
                (_, entry) => *entry = None,
            }
        }
        EngineAnchors {
            searcher: slim_searcher(&strings),
            whole,
        }
    }

    /// True when `line` holds one of the anchors.
    #[inline]
    fn found_in(&self, line: &[u8]) -> bool {
        let mut from = 0;
        while let Some(m) = self
            .searcher
            .find_in(line, aho_corasick::Span::from(from..line.len()))
        {
            let Some(wholes) = &self.whole[m.pattern().as_usize()] else {
                return true;
            };
            let holds = |&(anchor, at): &(&str, usize)| {
                m.start() >= at && line[m.start() - at..].starts_with(anchor.as_bytes())
            };
            if wholes.iter().any(holds) {
                return true;
            }
            from = m.start() + 1;
        }
        false
    }
}

/// The known-stage piece `anchor` holds past its start, and where, if searching for it instead
/// finds the same lines: no other of `anchors` starts where the piece could (a leftmost-first
/// search reports one string per place, and a string that is a prefix of another would hide it).
fn known_piece_of(
    engine: &EngineGrammar,
    anchor: &str,
    anchors: &[&str],
) -> Option<(&'static str, usize)> {
    let (piece, at) = engine
        .known_stage
        .iter()
        .find_map(|&piece| anchor.find(piece).map(|at| (piece, at)))?;
    let clash = anchors
        .iter()
        .chain(engine.known_stage.iter().filter(|&&other| other != piece))
        .any(|other| other.starts_with(piece) || piece.starts_with(other));
    (at > 0 && !clash).then_some((piece, at))
}

fn slim_searcher(strings: &[&str]) -> packed::Searcher {
    packed::Config::new()
        .match_kind(packed::MatchKind::LeftmostFirst)
        .only_teddy_fat(Some(false))
        .builder()
        .extend(strings)
        .build()
        .expect("plain strings make a searcher (Teddy, else Rabin-Karp)")
}

/// What a line is to the grammars: the three outcomes the agent counts apart.
// Not boxed: `Parsed` is returned by value as `Option<Parsed>` was, and a box would cost an
// allocation per stats line on the path that matters.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome<'a> {
    /// No engine's record: no anchor (the common case, one scan), or an anchor quoted by some
    /// other line (a request log echoing a prompt, a traceback).
    Unmatched,
    /// The engine's own record that does not parse (cut off, a changed format) or that carries
    /// a value the engine cannot print (a negative throughput, a usage over 100%): nothing of
    /// it is kept. Names the grammar whose record it is, one of [`GRAMMAR_NAMES`].
    Rejected {
        grammar: &'static str,
    },
    Parsed(Parsed<'a>),
}

impl<'a> Outcome<'a> {
    pub fn parsed(self) -> Option<Parsed<'a>> {
        match self {
            Outcome::Parsed(parsed) => Some(parsed),
            _ => None,
        }
    }
}

/// Reads one log message (envelope already removed, ANSI colour codes stripped) as one record.
/// [`records()`] reads every record of a line that holds several; the agent uses that.
///
/// Nearly every line is [`Outcome::Unmatched`] for the cost of one anchor scan. Telling a
/// rejected line apart costs nothing on the other two paths: it is asked only after the
/// engine's grammar has failed, of a line that holds one of its anchors.
pub fn read(line: &str) -> Outcome<'_> {
    if EVERY_STAGE.find(line).is_none() {
        return Outcome::Unmatched;
    }
    read_anchored(line)
}

/// The first match of `first_stage` in `line` at or after `from`.
fn anchor_in(first_stage: &packed::Searcher, line: &str, from: usize) -> Option<Range<usize>> {
    first_stage
        .find(&line[from..])
        .map(|m| from + m.start()..from + m.end())
}

/// [`read`] after the first stage has matched.
fn read_anchored(line: &str) -> Outcome<'_> {
    read_anchored_message(line).0
}

/// [`read_anchored`], and where the message of the record it read begins in `line` (after the
/// record head; the end of the line when it read none).
#[inline]
fn read_anchored_message(line: &str) -> (Outcome<'_>, usize) {
    // Each engine whose anchors the line holds is asked in [`ENGINES`] order: the first to
    // parse the line has it. A rejection is kept while later engines are asked (a vLLM anchor
    // quoted in a TensorRT-LLM line must not hide it), and the last one is the answer when
    // none parses.
    let mut rejected = None;
    let mut anchored = 0u32;
    for (i, (engine, anchors)) in ENGINES.iter().zip(ENGINE_ANCHORS.iter()).enumerate() {
        if !anchors.found_in(line.as_bytes()) {
            continue;
        }
        anchored |= 1 << i;
        match (engine.read_message)(line) {
            (Outcome::Unmatched, _) => {}
            (Outcome::Rejected { grammar }, _) => rejected = Some(grammar),
            parsed => return parsed,
        }
    }
    match rejected {
        Some(grammar) => (Outcome::Rejected { grammar }, line.len()),
        None => read_behind_foreign_head(line, anchored),
    }
}

/// A line no engine read through the heads it knows, read once more at each place a message may
/// begin behind a head none knows ([`foreign::message_starts`]), by the engines whose anchors
/// the line holds (bit `i` of `anchored` for [`ENGINES`]`[i]`). The first message some engine
/// takes or rejects is the answer; its time is the head's first stamp unless the engine read one.
#[inline(never)]
fn read_behind_foreign_head(line: &str, anchored: u32) -> (Outcome<'_>, usize) {
    let readers = || {
        ENGINES
            .iter()
            .enumerate()
            .filter(move |(i, _)| anchored & (1 << i) != 0)
            .filter_map(|(_, engine)| engine.read_foreign)
    };
    if readers().next().is_none() {
        return (Outcome::Unmatched, line.len());
    }
    for at in foreign::message_starts(line) {
        let (head, message) = line.split_at(at);
        for read in readers() {
            match read(head, message) {
                Outcome::Unmatched => {}
                Outcome::Parsed(mut parsed) => {
                    if parsed.time.is_none() {
                        parsed.time = lex::time::first_stamp(head);
                    }
                    return (Outcome::Parsed(parsed), at);
                }
                rejected => return (rejected, at),
            }
        }
    }
    (Outcome::Unmatched, line.len())
}

/// [`read`], for callers that need only the parsed lines.
pub fn parse(line: &str) -> Option<Parsed<'_>> {
    read(line).parsed()
}

/// Where the first stage first matches in `bytes` (several lines at once, for callers that
/// search a whole batch in one go): a line without a match is one [`parse`] returns `None` for,
/// whatever bytes that are not ASCII in it become once decoded (the anchors are ASCII). The
/// agent asks its log's [`LogAnchors::first_anchor`], the same for one log, before it decodes a
/// plain-text line at all, since nine lines in ten of a busy log are prompts and access lines
/// without an anchor.
/// The first-stage strings hold no `\n`, so a match never spans two lines.
pub fn first_anchor(bytes: &[u8]) -> Option<usize> {
    EVERY_STAGE.find(bytes).map(|m| m.start())
}

/// True when some grammar's anchor occurs in the line: the cheap first stage of [`parse`],
/// exposed for benchmarks and for counting near misses.
/// Takes bytes, so the agent can ask before it decodes a line at all: the anchors are ASCII,
/// and an ASCII run reads the same in the raw bytes as in their lossy UTF-8 decoding.
pub fn has_anchor(line: &[u8]) -> bool {
    EVERY_STAGE.find(line).is_some() && ENGINE_ANCHORS.iter().any(|anchors| anchors.found_in(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grammar_name_belongs_to_one_engine_and_names_it() {
        for engine in ENGINES {
            for name in engine.grammar_names {
                assert!(name.starts_with(&format!("{}_", engine.engine)), "{name}");
                assert_eq!(
                    GRAMMAR_NAMES.iter().filter(|n| *n == name).count(),
                    1,
                    "{name}"
                );
            }
        }
    }

    #[test]
    fn the_measured_order_names_only_pieces_engines_have() {
        for piece in FIRST_STAGE_ORDER {
            assert!(
                PREFILTER.contains(piece),
                "{piece:?} is no engine's first-stage piece"
            );
        }
    }

    #[test]
    fn an_engines_anchors_are_found_exactly_where_one_is_whole() {
        let (i, engine) = ENGINES
            .iter()
            .enumerate()
            .find(|(_, e)| e.engine == "vllm")
            .unwrap();
        let anchors = &ENGINE_ANCHORS[i];
        for anchor in (engine.anchors)() {
            let line = format!("INFO 11-10 12:30:57 [x.py:1] ...{anchor}...");
            assert!(anchors.found_in(line.as_bytes()), "{anchor:?}");
        }
        for piece in engine.known_stage {
            let line = format!("INFO 11-10 12:30:57 [x.py:1] not an anchor: {piece} here");
            assert!(!anchors.found_in(line.as_bytes()), "{piece:?}");
        }
        let stats =
            "INFO 11-22 13:25:01 [loggers.py:118] Engine 000: Avg prompt throughput: 1.0 tokens/s";
        assert!(anchors.found_in(stats.as_bytes()));
        assert!(!anchors.found_in(b"Engine 000: EngineCore encountered a fatal"));
        assert!(anchors.found_in(b"Engine EngineCore encountered a fatal error."));
    }

    #[test]
    fn an_anchor_searched_by_a_piece_is_the_vllm_fatal_error_and_versions() {
        let vllm = ENGINES.iter().find(|e| e.engine == "vllm").unwrap();
        let anchors = (vllm.anchors)();
        let by_piece: Vec<&str> = anchors
            .iter()
            .copied()
            .filter(|a| known_piece_of(vllm, a, &anchors).is_some())
            .collect();
        assert_eq!(
            by_piece,
            [
                "vLLM API server version ",
                "vLLM server version ",
                "EngineCore encountered a fatal error"
            ]
        );
    }

    #[test]
    fn the_anchor_bitmask_holds_every_engine() {
        assert!(ENGINES.len() <= 32);
    }

    #[test]
    fn no_prefilter_string_spans_lines() {
        assert!(first_stage_strings().all(|p| !p.contains('\n')));
    }

    #[test]
    fn banners_and_known_stages_are_their_engines_pieces() {
        for engine in ENGINES {
            for piece in engine.banner.iter().chain(engine.known_stage) {
                assert!(EVERY_PIECE.contains(piece), "{piece:?}");
            }
            for piece in engine.banner {
                let own =
                    (engine.first_stage)().contains(piece) || engine.known_stage.contains(piece);
                assert!(
                    own,
                    "{}'s banner {piece:?} is none of its pieces",
                    engine.engine
                );
            }
        }
    }

    #[test]
    fn every_anchor_holds_a_prefilter_string() {
        for anchor in ENGINES.iter().flat_map(|e| (e.anchors)()) {
            assert!(
                first_stage_strings().any(|p| anchor.contains(p)),
                "no first-stage string in anchor {anchor:?}: the first stage would drop its lines"
            );
        }
    }
}
