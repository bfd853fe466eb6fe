//! The grammars' promises (`llmtail-grammars`): a line is unmatched, rejected under a known
//! grammar, or parsed into a record that carries only values the engine can print, with a
//! valid clock, and nothing borrowed from anywhere but the line.

use std::borrow::Cow;

use llmtail_grammars::lex::loose::{self, Loose};
use llmtail_grammars::trtllm;
use llmtail_grammars::{
    llamacpp, lmdeploy, ollama, vllm, LogTime, Outcome, Parsed, Record, ENGINES, GRAMMAR_NAMES,
};

use crate::borrowed_from;

/// A time a grammar or an envelope read: a real month, day and clock (a second of 60 is a
/// leap second) and less than a second of nanoseconds. The agent turns it into an instant
/// with no second look.
pub fn time(time: &LogTime, input: &str) {
    // A head that printed only the clock has month and day 0 by construction: its date is the
    // day the line arrives, so only its clock is checked.
    let (month, day) = if time.is_time_only() {
        (1, 1)
    } else {
        (time.month.into(), time.day.into())
    };
    assert!(
        LogTime::is_valid_clock(
            month,
            day,
            time.hour.into(),
            time.minute.into(),
            time.second.into()
        ) && time.nanos < 1_000_000_000,
        "impossible time {time:?} read from {input:?}"
    );
}

/// One outcome of [`llmtail_grammars::read`] (or an engine's own `read`) for `line`.
pub fn outcome(line: &str, outcome: &Outcome<'_>) {
    match outcome {
        Outcome::Unmatched => {}
        Outcome::Rejected { grammar } => assert!(
            GRAMMAR_NAMES.contains(grammar),
            "{line:?} rejected under {grammar:?}, which is no grammar's name"
        ),
        Outcome::Parsed(parsed) => self::parsed(line, parsed),
    }
}

fn parsed(line: &str, parsed: &Parsed<'_>) {
    let record = &parsed.record;
    assert!(
        GRAMMAR_NAMES.contains(&record.grammar()),
        "{line:?} parsed under {:?}, which is no grammar's name",
        record.grammar()
    );
    let possible = record.possible();
    assert!(
        possible,
        "impossible value parsed from {line:?}: {record:?}"
    );
    if let Some(t) = &parsed.time {
        time(t, line);
    }
    if let Some(process) = parsed.process {
        assert!(
            borrowed_from(process, line),
            "process {process:?} is not part of {line:?}"
        );
    }
}

/// The whole first stage and dispatch, over raw bytes: what the agent does with a plain line.
pub fn read(data: &[u8]) {
    let line = String::from_utf8_lossy(data);
    let read = llmtail_grammars::read(&line);
    outcome(&line, &read);
    assert_eq!(
        format!("{:?}", llmtail_grammars::parse(&line)),
        format!("{:?}", read.clone().parsed()),
        "parse and read disagree on {line:?}"
    );
    // The agent asks the first stage on raw bytes, before decoding: the anchors are ASCII, so
    // the answer is the same for the bytes and for their lossy decoding, and a line without an
    // anchor is one no grammar reads.
    let anchored = llmtail_grammars::has_anchor(data);
    assert_eq!(
        anchored,
        llmtail_grammars::has_anchor(line.as_bytes()),
        "the raw bytes and the decoded line disagree on an anchor: {data:?}"
    );
    assert_eq!(
        llmtail_grammars::first_anchor(data).is_some(),
        llmtail_grammars::first_anchor(line.as_bytes()).is_some(),
        "the raw bytes and the decoded line disagree on a first-stage match: {data:?}"
    );
    if !anchored {
        assert_eq!(read, Outcome::Unmatched, "{line:?} has no anchor");
    }
    // The engine whose record it is reads the line alike on its own. (Compared as text: a
    // `nan` acceptance rate is not equal to itself.)
    if let Outcome::Parsed(parsed) = &read {
        let engine = ENGINES
            .iter()
            .find(|e| e.engine == parsed.record.engine())
            .expect("every record's engine is registered");
        let (own, _) = (engine.read_message)(&line);
        // A message behind a head no grammar knows is read by the dispatch alone.
        if own != Outcome::Unmatched {
            assert_eq!(
                format!("{own:?}"),
                format!("{read:?}"),
                "the dispatch and the engine's grammar disagree on {line:?}"
            );
        }
    }
}

/// Every registered engine's reader on any line: it answers only records of its own engine and
/// grammar names it owns, and behind a foreign head the same.
pub fn each_engine(data: &[u8]) {
    let line = String::from_utf8_lossy(data);
    for engine in ENGINES {
        let (read, message_at) = (engine.read_message)(&line);
        assert!(message_at <= line.len(), "{}: {message_at}", engine.engine);
        own_outcome(engine.engine, &line, &read);
        if let Some(read_foreign) = engine.read_foreign {
            let at = line.len() / 2;
            if let (Some(head), Some(message)) = (line.get(..at), line.get(at..)) {
                own_outcome(engine.engine, &line, &read_foreign(head, message));
            }
        }
    }
}

/// One engine's outcome for `line`: valid as any outcome is, and the engine's own.
fn own_outcome(engine: &str, line: &str, read: &Outcome<'_>) {
    outcome(line, read);
    match read {
        Outcome::Rejected { grammar } => {
            assert!(
                grammar.starts_with(&format!("{engine}_")),
                "{engine}: {grammar}"
            );
        }
        Outcome::Parsed(p) => assert_eq!(p.record.engine(), engine, "{p:?}"),
        Outcome::Unmatched => {}
    }
}

/// vLLM's grammar, its head and its message productions, on any line.
pub fn vllm(data: &[u8]) {
    let line = String::from_utf8_lossy(data);
    let read = vllm::read(&line);
    outcome(&line, &read);
    match &read {
        Outcome::Rejected { grammar } => assert!(grammar.starts_with("vllm_"), "{grammar}"),
        Outcome::Parsed(p) => assert!(matches!(p.record, Record::Vllm(_)), "{p:?}"),
        Outcome::Unmatched => {}
    }
    // The head is the line's front: the message is what follows it, the process a part of it.
    let head = vllm::head::split(&line);
    assert!(
        line.ends_with(head.message),
        "message {:?} is not the tail of {line:?}",
        head.message
    );
    if let Some(t) = &head.time {
        time(t, &line);
    }
    if let Some(process) = head.process {
        assert!(borrowed_from(process, &line), "{process:?} in {line:?}");
    }
    // The productions on their own, as if the whole input were a message without its head
    // (so the fuzzer need not make up a head to reach them).
    let records = [
        vllm::stats::parse(&line),
        vllm::spec::parse(&line),
        vllm::startup::parse(&line),
        vllm::lifecycle::parse(&line),
    ];
    for record in records.iter().flatten() {
        assert!(GRAMMAR_NAMES.contains(&record.grammar()), "{record:?}");
    }
}

/// LMDeploy's grammar, its head and its stats production, on any line.
pub fn lmdeploy(data: &[u8]) {
    let line = String::from_utf8_lossy(data);
    let read = lmdeploy::read(&line);
    outcome(&line, &read);
    match &read {
        Outcome::Rejected { grammar } => assert!(grammar.starts_with("lmdeploy_"), "{grammar}"),
        Outcome::Parsed(p) => assert!(matches!(p.record, Record::Lmdeploy(_)), "{p:?}"),
        Outcome::Unmatched => {}
    }
    if let Some(head) = lmdeploy::head::split(&line) {
        assert!(
            line.ends_with(head.message),
            "message {:?} is not the tail of {line:?}",
            head.message
        );
        time(&head.time, &line);
    }
    // The stats production on the whole input, as if it were a message without its head (so
    // the fuzzer need not make up a head to reach it).
    let _ = lmdeploy::stats::parse(0, &line);
}

/// llama-server's grammar, its heads and its timing bodies, on any line: only `llamacpp_*`
/// names, no wall-clock time (llama.cpp prints the time since start), the heads leave the
/// line's tail, and the timing bodies on the raw line (as a head-less continuation line).
pub fn llamacpp(data: &[u8]) {
    let line = String::from_utf8_lossy(data);
    let read = llamacpp::read(&line);
    outcome(&line, &read);
    match &read {
        Outcome::Rejected { grammar } => assert!(grammar.starts_with("llamacpp_"), "{grammar}"),
        Outcome::Parsed(p) => {
            assert!(matches!(p.record, Record::Llamacpp(_)), "{p:?}");
            assert!(p.time.is_none() && p.process.is_none(), "{p:?}");
        }
        Outcome::Unmatched => {}
    }
    let head = llamacpp::head::split(&line);
    assert!(
        line.ends_with(head.message),
        "message {:?} is not the tail of {line:?}",
        head.message
    );
    if let Some(slot) = llamacpp::head::slot_head(head.message) {
        assert!(head.message.ends_with(slot.body), "{slot:?} in {line:?}");
    }
    if let Some(record) = llamacpp::timing::parse(&line, llamacpp::Origin::default()) {
        let _ = record.possible();
    }
}

/// TensorRT-LLM's grammar, its heads and its text productions, on any line.
pub fn trtllm(data: &[u8]) {
    let line = String::from_utf8_lossy(data);
    let read = trtllm::read(&line);
    outcome(&line, &read);
    match &read {
        Outcome::Rejected { grammar } => assert!(grammar.starts_with("trtllm_"), "{grammar}"),
        Outcome::Parsed(p) => assert!(matches!(p.record, Record::Trtllm(_)), "{p:?}"),
        Outcome::Unmatched => {}
    }
    let head = trtllm::prefix::split(&line);
    assert!(
        line.ends_with(head.message),
        "message {:?} is not the tail of {line:?}",
        head.message
    );
    if let Some(t) = &head.time {
        time(t, &line);
    }
    // The message productions on the whole input.
    let _ = trtllm::iter_log::parse(&line);
    let _ = trtllm::startup::parse(&line, None);
    let _ = trtllm::startup::parse(&line, Some(3));
}

/// Ollama's grammar and its productions (gin's line, the Go duration, the server records), on
/// any line: a request's latency and a load time are never negative nor absurd, a status is
/// one gin can send.
pub fn ollama(data: &[u8]) {
    let line = String::from_utf8_lossy(data);
    let read = ollama::read(&line);
    outcome(&line, &read);
    match &read {
        Outcome::Rejected { grammar } => assert!(grammar.starts_with("ollama_"), "{grammar}"),
        Outcome::Parsed(p) => {
            assert!(matches!(p.record, Record::Ollama(_)), "{p:?}");
            assert!(p.time.is_some(), "an Ollama record without its time: {p:?}");
        }
        Outcome::Unmatched => {}
    }
    if let Some((t, request)) = ollama::gin::parse(&line) {
        time(&t, &line);
        for part in [request.client, request.method, request.path] {
            assert!(borrowed_from(part, &line), "{part:?} in {line:?}");
        }
    }
    if let Some((t, _)) = ollama::server::parse(&line) {
        time(&t, &line);
    }
    // A duration consumes a prefix and is never NaN.
    if let Ok((rest, seconds)) = ollama::gin::duration(&line) {
        assert!(line.ends_with(rest), "{rest:?} is not the rest of {line:?}");
        assert!(!seconds.is_nan(), "duration of {line:?} is NaN");
    }
}

/// The JSON readers of formats A and B: the full (loose) parser, the fast flat scanner, the
/// unescape of Triton's escaped messages, and the two record readers over what they give.
pub fn trtllm_json(data: &[u8]) {
    use trtllm::{flat, iteration_stats, triton_json};
    let text = String::from_utf8_lossy(data);
    // Every escape is longer than the character it stands for, and the quotes go.
    if let Some(unescaped) = loose::unescape(&text) {
        assert!(
            unescaped.len() + 2 <= text.len(),
            "unescaping {text:?} gave the longer {unescaped:?}"
        );
    }
    let full = loose::object(&text);
    if let Some(entries) = &full {
        let _ = iteration_stats::read(entries);
        if triton_json::is_triton(entries) {
            let _ = triton_json::read(entries);
        }
    }
    // The fast path reads a flat object as the full parser does, or declines it: it never
    // decides on its own what a line says.
    if let (Some(fast), Some(full)) = (flat::object(&text, "\""), &full) {
        agree(&text, &fast, full);
    }
    if let Some(fast) = flat::object(&text, "\\\"") {
        if triton_json::is_triton(&fast) {
            let _ = triton_json::read(&fast);
        }
    }
}

type Entries<'a> = [(Cow<'a, str>, Loose<'a>)];

fn agree(text: &str, fast: &Entries<'_>, full: &Entries<'_>) {
    assert_eq!(
        fast.len(),
        full.len(),
        "fast and full JSON readers disagree on {text:?}:\n{fast:?}\n{full:?}"
    );
    for ((fast_key, fast_value), (full_key, full_value)) in fast.iter().zip(full) {
        assert_eq!(fast_key, full_key, "keys of {text:?}");
        let same = match (fast_value.as_f64(), full_value.as_f64()) {
            // serde_json's float parser (without `float_roundtrip`) may be one unit in the
            // last place off the correctly rounded value that `str::parse` gives.
            (Some(a), Some(b)) => {
                a == b || (a - b).abs() <= 4.0 * f64::EPSILON * a.abs().max(b.abs())
            }
            _ => fast_value == full_value,
        };
        assert!(
            same,
            "fast and full JSON readers disagree on {fast_key:?} of {text:?}: {fast_value:?} vs {full_value:?}"
        );
    }
}

/// The number productions read exactly what `str::parse` reads from the text they consume
/// (the fast decimal path claims the same double), and consume a prefix.
pub fn numbers(data: &[u8]) {
    use llmtail_grammars::number::{float, grouped_uint, int, uint};
    let text = String::from_utf8_lossy(data);
    let text = text.as_ref();
    let consumed = |rest: &str| {
        assert!(text.ends_with(rest), "{rest:?} is not the rest of {text:?}");
        &text[..text.len() - rest.len()]
    };
    if let Ok((rest, value)) = uint(text) {
        assert_eq!(consumed(rest).parse::<u64>(), Ok(value), "uint of {text:?}");
    }
    if let Ok((rest, value)) = int(text) {
        assert_eq!(consumed(rest).parse::<i64>(), Ok(value), "int of {text:?}");
    }
    if let Ok((rest, value)) = grouped_uint(text) {
        let digits = consumed(rest).replace(',', "");
        assert_eq!(digits.parse::<u64>(), Ok(value), "grouped_uint of {text:?}");
    }
    if let Ok((rest, value)) = float(text) {
        let taken = consumed(rest);
        if value.is_nan() {
            assert!(taken == "nan" || taken == "NaN", "float of {text:?}");
        } else {
            let parsed: f64 = taken
                .parse()
                .unwrap_or_else(|e| panic!("float took {taken:?} from {text:?}: {e}"));
            assert_eq!(
                parsed.to_bits(),
                value.to_bits(),
                "float of {text:?}: {value:?}, str::parse gives {parsed:?}"
            );
        }
    }
}

/// The record-head clocks of TensorRT-LLM and Triton, and vLLM's head: a time they return is a
/// valid clock, and what they leave is the input's tail.
pub fn clocks(data: &[u8]) {
    use trtllm::clock;
    let text = String::from_utf8_lossy(data);
    let text = text.as_ref();
    for read in [
        clock::glog,
        clock::iso,
        clock::slashed,
        clock::month_first,
        clock::year_first,
    ] {
        if let Some((t, rest)) = read(text) {
            time(&t, text);
            assert!(text.ends_with(rest), "{rest:?} is not the rest of {text:?}");
        }
    }
    if let Some(t) = clock::stats_timestamp(text) {
        time(&t, text);
    }
    if let Some(t) = vllm::head::split(text).time {
        time(&t, text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SGLang's `[03:51:54]` head gives a time with no date (month and day 0), which the check
    /// once called impossible.
    #[test]
    fn a_head_that_printed_only_the_clock_is_a_possible_time() {
        time(&LogTime::time_only(3, 51, 54, 0), "[03:51:54] Decode batch");
    }

    #[test]
    #[should_panic(expected = "impossible time")]
    fn a_clock_past_midnight_is_an_impossible_time() {
        time(&LogTime::time_only(24, 0, 0, 0), "[24:00:00]");
    }
}
