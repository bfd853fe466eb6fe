//! Every record in a line. Two writers interleaving, or a lost `\n`, glue a record to the one
//! before it (`...Prefix cache hit rate: 0.0%INFO 07-28 06:41:29 [loggers.py:118] Engine 000:
//! ...`), and a `/metrics` answer saved to a file holds one JSON object per iteration.
//!
//! The rule: a record head in the middle of a line starts a new record, and
//! each record is read as a line of its own is. Every record holds a first-stage anchor after
//! its head, so a head after a record's anchor starts the next record (moved back over the
//! process prefixes, logger time or Triton head in front of it, which are that record's). Of
//! several heads before the anchor, the last is the record's own: the text before it (a tqdm
//! bar, an access line that lost its newline) holds no anchor and so no record. Heads are those
//! of [`crate::vllm::head`] (found by their level word) and [`crate::trtllm::prefix`] (by their
//! logger tag). A piece that does not read whole is searched for JSON iteration records
//! ([`crate::trtllm::objects`]): the records of a `/metrics` dump, a pasted object, Triton
//! records glued together.
//!
//! Cost: a line without an anchor costs the one first-stage scan it cost before, and a stats line
//! of known fields or a JSON record read whole the one parse it cost before. Any other line with
//! an anchor is searched for heads after it by one SIMD searcher (a spec-decoding line: 30 ns);
//! looking for an earlier head, and for JSON, is left to a piece that did not read. Every byte
//! is scanned a bounded number of times, so the whole is linear in the line.

use std::ops::Range;
use std::sync::LazyLock;

use aho_corasick::packed;

use crate::lmdeploy::LmdeployRecord;
use crate::trtllm::objects::{objects, Objects};
use crate::trtllm::{prefix, Format, TrtllmRecord};
use crate::vllm::{head, VllmRecord};
use crate::{Outcome, Record};

/// What a head in the middle of a line is found by: vLLM's level words, then TensorRT-LLM's
/// logger tags. The first three bytes of each are rare in stats text (see [`crate::PREFILTER`]).
static HEADS: LazyLock<packed::Searcher> = LazyLock::new(|| {
    let markers: Vec<&str> = head::LEVEL_WORDS
        .iter()
        .chain(prefix::TAGS.iter())
        .copied()
        .collect();
    crate::slim_searcher(&markers)
});

/// Each record in `line` (envelope removed), in order. A line without any yields one
/// [`Outcome::Unmatched`]; a piece of a line that is no record (what came before a glued head,
/// the text around JSON objects) yields [`Outcome::Unmatched`] too, which callers counting lines
/// read as "nothing here".
pub fn records(line: &str) -> Records<'_> {
    let first_stage = &*crate::EVERY_STAGE;
    Records {
        first_stage,
        line,
        from: 0,
        anchor: crate::anchor_in(first_stage, line, 0),
        first: None,
        objects: None,
    }
}

/// [`records`], each lent to `each` as it is found: the agent's path. A line of one record
/// (nearly every line with an anchor) lends it without going through the iterator: every move
/// of an [`Outcome`] is a copy of its 400 bytes, and through `Option`, a loop variable and a
/// match that was 1% more instructions for a one-shot run (`valgrind --tool=cachegrind`).
pub fn each_record<'a>(line: &'a str, each: impl FnMut(&Outcome<'a>)) {
    each_record_after(&crate::EVERY_STAGE, line, None, each)
}

/// [`each_record`] with `first_stage` as the first stage: a log's own ([`crate::LogAnchors`]).
/// `first_anchor`, when the caller knows it, is where `first_stage` first matches in `line`:
/// the reader searched the whole read buffer with it to find the line, and searching the line
/// again was a third of what the dispatch cost a stats line beyond its grammar.
pub(crate) fn each_record_after<'a>(
    first_stage: &'static packed::Searcher,
    line: &'a str,
    first_anchor: Option<usize>,
    mut each: impl FnMut(&Outcome<'a>),
) {
    let found = || crate::anchor_in(first_stage, line, 0).map(|anchor| anchor.start);
    let Some(anchor_at) = first_anchor.or_else(found) else {
        return each(&Outcome::Unmatched);
    };
    let (whole, message_at) = crate::read_anchored_message(line);
    if holds_the_line(&whole, message_at, anchor_at) {
        return each(&whole);
    }
    let records = Records {
        first_stage,
        line,
        from: 0,
        // The same first match, searched from where it starts.
        anchor: crate::anchor_in(first_stage, line, anchor_at),
        first: Some(whole),
        objects: None,
    };
    for outcome in records {
        each(&outcome);
    }
}

/// See [`records`].
pub struct Records<'a> {
    /// What finds the anchors: every engine's pieces, or a log's own.
    first_stage: &'static packed::Searcher,
    line: &'a str,
    /// Where the next piece starts; past the end once the line is done.
    from: usize,
    /// The first first-stage match at or after the start of the current piece.
    anchor: Option<Range<usize>>,
    /// The line read as one record, when [`each_record`] has read it (and it holds more).
    first: Option<Outcome<'a>>,
    /// JSON records still to come from the current piece.
    objects: Option<Objects<'a>>,
}

impl<'a> Iterator for Records<'a> {
    type Item = Outcome<'a>;

    fn next(&mut self) -> Option<Outcome<'a>> {
        if let Some(outcome) = self.objects.as_mut().and_then(Iterator::next) {
            return Some(outcome);
        }
        self.objects = None;
        let (line, from) = (self.line, self.from);
        if from > line.len() {
            return None;
        }
        if self.anchor.as_ref().is_some_and(|a| a.start < from) {
            self.anchor = crate::anchor_in(self.first_stage, line, from);
        }
        let Some(anchor) = self.anchor.clone() else {
            // Nothing of any engine's in the rest of the line.
            self.from = line.len() + 1;
            return Some(Outcome::Unmatched);
        };
        if from > 0 {
            return Some(self.piece(anchor, None));
        }
        // The line is read as one record first: a stats line of known fields, or a JSON record,
        // whose message begins before any anchor accounts for every byte of the line, so there
        // is no other head to look for. That spares the common stats line the search. (Only at
        // the start: reading the rest of a line at every record would be quadratic in a line
        // of many.)
        let whole = match self.first.take() {
            Some(whole) => whole,
            None => {
                let (whole, message_at) = crate::read_anchored_message(line);
                if holds_the_line(&whole, message_at, anchor.start) {
                    self.from = line.len() + 1;
                    return Some(whole);
                }
                whole
            }
        };
        Some(self.piece(anchor, Some(whole)))
    }
}

impl<'a> Records<'a> {
    /// The record from `self.from` to the next head after `anchor`, its first anchor. `whole`
    /// is what reading the line as one record gave, when the piece starts the line.
    #[inline(never)]
    fn piece(&mut self, anchor: Range<usize>, whole: Option<Outcome<'a>>) -> Outcome<'a> {
        let (line, from) = (self.line, self.from);
        let end = match cut(line, anchor.end) {
            Some(cut) => {
                self.from = cut;
                cut
            }
            None => {
                self.from = line.len() + 1;
                line.len()
            }
        };
        let piece = &line[from..end];
        let outcome = match whole {
            Some(whole) if end == line.len() => whole,
            _ => crate::read_anchored(piece),
        };
        if matches!(outcome, Outcome::Parsed(_)) {
            return outcome;
        }
        // Not a record read whole. Its head may be a later one, behind a line it was glued to
        // that has no anchor (`...Added request cmpl-7INFO 07-28 ... Engine 000: ...`), or its
        // records JSON objects.
        let retried = last_head(line, from, anchor.start)
            .map(|start| crate::read_anchored(&line[start..end]));
        if let Some(parsed @ Outcome::Parsed(_)) = retried {
            return parsed;
        }
        if let Some(mut objects) = objects(piece) {
            if let Some(first) = objects.next() {
                self.objects = Some(objects);
                return first;
            }
        }
        match retried {
            Some(rejected @ Outcome::Rejected { .. }) => rejected,
            _ => outcome,
        }
    }
}

/// True when `whole`, a line read as one record whose message begins at `message_at`, is the
/// line's only record: its message begins before the line's first anchor (a record before its
/// head would hold one), and its grammar read every byte of it.
fn holds_the_line(whole: &Outcome<'_>, message_at: usize, anchor_at: usize) -> bool {
    message_at <= anchor_at && holds_every_byte(whole)
}

/// True for a record whose grammar read every byte of its message: a stats line whose every
/// field is a known one, a JSON iteration object (read only when nothing follows it). Another
/// record glued after either would have made it fail.
fn holds_every_byte(outcome: &Outcome<'_>) -> bool {
    let Outcome::Parsed(parsed) = outcome else {
        return false;
    };
    match &parsed.record {
        Record::Vllm(VllmRecord::Stats(stats)) => !stats.skipped_fields,
        Record::Trtllm(TrtllmRecord::Iteration(it)) => {
            matches!(it.format, Format::TritonJson | Format::IterationStats)
        }
        Record::Lmdeploy(LmdeployRecord::Stats(stats)) => !stats.skipped_fields,
        // Read from the line's end (`: Success`, the capacity's number) or as one JSON object:
        // a record glued after it would have failed the read.
        Record::Tgi(_) => true,
        // Every Ollama record is a whole line: its grammars read to the end.
        Record::Ollama(_) => true,
        _ => false,
    }
}

/// A marker [`HEADS`] found at `at`, `len` bytes long.
#[derive(Clone, Copy)]
struct Marker {
    at: usize,
    len: usize,
    /// A vLLM level word, else a TensorRT-LLM logger tag.
    vllm: bool,
}

impl Marker {
    fn found(offset: usize, m: aho_corasick::Match) -> Marker {
        Marker {
            at: offset + m.start(),
            len: m.len(),
            vllm: m.pattern().as_usize() < head::LEVEL_WORDS.len(),
        }
    }

    /// Where the message begins when a whole head is there.
    fn message(self, line: &str) -> Option<usize> {
        if self.vllm {
            head::message_at(line, self.at + self.len)
        } else {
            prefix::message_at(line, self.at)
        }
    }

    /// Where the head starts, with what is in front of it that belongs to it (process
    /// prefixes; a time and a Triton head), no further back than `floor`.
    fn start(self, line: &str, floor: usize) -> usize {
        if self.vllm {
            head::start(line, self.at, floor)
        } else {
            prefix::start(line, self.at, floor)
        }
    }
}

/// Where the next record starts: at the first head after `after` (the end of this record's
/// anchor; a head before it is this record's own, or text glued in front of it).
fn cut(line: &str, after: usize) -> Option<usize> {
    HEADS
        .find_iter(&line[after..])
        .map(|m| Marker::found(after, m))
        .find(|marker| marker.message(line).is_some())
        .map(|marker| marker.start(line, after))
}

/// Where the last of two or more heads in `line[from..before]` starts: a record glued after
/// another one without an anchor (and so no record of its own) has that head.
fn last_head(line: &str, from: usize, before: usize) -> Option<usize> {
    let mut heads = HEADS
        .find_iter(&line[from..before])
        .map(|m| Marker::found(from, m))
        .filter_map(|marker| Some((marker, marker.message(line)?)));
    let (_, mut floor) = heads.next()?;
    let mut last = None;
    for (marker, message) in heads {
        if marker.at >= floor {
            last = Some(marker.start(line, floor));
            floor = message;
        }
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(line: &str) -> Vec<&str> {
        let mut from = 0;
        let mut out = Vec::new();
        while let Some(anchor) = crate::anchor_in(&crate::EVERY_STAGE, line, from) {
            match cut(line, anchor.end) {
                Some(at) => {
                    out.push(&line[from..at]);
                    from = at;
                }
                None => break,
            }
        }
        out.push(&line[from..]);
        out
    }

    #[test]
    fn a_head_after_a_record_starts_the_next_one_with_its_process() {
        assert_eq!(
            pieces("(APIServer pid=1) INFO 07-28 06:41:19 [loggers.py:118] Running: 1 reqs(APIServer pid=1) INFO 07-28 06:41:29 [loggers.py:118] Running: 2 reqs"),
            [
                "(APIServer pid=1) INFO 07-28 06:41:19 [loggers.py:118] Running: 1 reqs",
                "(APIServer pid=1) INFO 07-28 06:41:29 [loggers.py:118] Running: 2 reqs"
            ]
        );
    }

    #[test]
    fn a_record_glued_after_a_line_without_anchor_is_read_from_its_own_head() {
        let line = "INFO 07-28 06:41:19 [logger.py:41] Added request 7(APIServer pid=1) INFO 07-28 06:41:19 [loggers.py:118] Running: 2 reqs";
        assert_eq!(pieces(line), [line]);
        assert_eq!(
            &line[last_head(line, 0, line.len()).unwrap()..],
            "(APIServer pid=1) INFO 07-28 06:41:19 [loggers.py:118] Running: 2 reqs"
        );
        let one = "(APIServer pid=1) [node-3] INFO 07-28 06:41:19 [loggers.py:118] Running: 2 reqs";
        assert_eq!(last_head(one, 0, one.len()), None);
    }

    #[test]
    fn text_in_front_of_the_only_head_stays_with_it() {
        let line =
            "(APIServer pid=1) [node-3] INFO 07-28 06:41:19 [loggers.py:118] Running: 1 reqs";
        assert_eq!(pieces(line), [line]);
        let line = "Processed prompts: 100%|##| 4/4 [00:01<00:00]INFO 11-19 08:04:38 [loggers.py:236] Running: 4 reqs";
        assert_eq!(pieces(line), [line]);
    }

    #[test]
    fn trtllm_heads_take_their_time_and_triton_head_along() {
        assert_eq!(
            pieces("[10/21/2025-23:24:47] [TRT-LLM] [RANK 0] [I] iter = 1, global_rank = 0[10/21/2025-23:24:47] [TRT-LLM] [RANK 1] [I] iter = 1, global_rank = 1"),
            [
                "[10/21/2025-23:24:47] [TRT-LLM] [RANK 0] [I] iter = 1, global_rank = 0",
                "[10/21/2025-23:24:47] [TRT-LLM] [RANK 1] [I] iter = 1, global_rank = 1"
            ]
        );
        assert_eq!(
            pieces("I0510 07:57:30.770724 21661 backend.cc:98] [TensorRT-LLM][INFO] Number of tokens per block: 64.I0510 07:57:30.770801 21661 backend.cc:98] [TensorRT-LLM][INFO] Number of blocks in KV cache primary pool: 1932"),
            [
                "I0510 07:57:30.770724 21661 backend.cc:98] [TensorRT-LLM][INFO] Number of tokens per block: 64.",
                "I0510 07:57:30.770801 21661 backend.cc:98] [TensorRT-LLM][INFO] Number of blocks in KV cache primary pool: 1932"
            ]
        );
        assert_eq!(
            pieces("05-10-2025 07:57:30.123456 [TRT-LLM] [I] iter = 1, global_rank = 0 05-10-2025 07:57:31 [TRT-LLM] [I] iter = 2, global_rank = 0"),
            [
                "05-10-2025 07:57:30.123456 [TRT-LLM] [I] iter = 1, global_rank = 0 ",
                "05-10-2025 07:57:31 [TRT-LLM] [I] iter = 2, global_rank = 0"
            ]
        );
    }
}
