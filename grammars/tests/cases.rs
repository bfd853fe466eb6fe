//! Line cases as data: every `fixtures/cases/*.toml` file is a list of
//!
//! ```toml
//! [[case]]
//! name = "what this line is"
//! source = "where the line or its format comes from (engine, version, file:line or issue)"
//! line = '...'                      # the log line, exactly as written (envelope removed)
//! expect = { record = "stats", ... } # the whole parse, as `Parsed` serializes; or:
//! no_match = true                    # this line must yield nothing, and is no engine's record
//! rejected = "vllm_stats"            # or: the engine's own record, cut off or with a value it
//!                                    # cannot print, rejected whole and counted for this grammar
//! records = [{ record = "stats", ... }, { rejected = "vllm_stats" }]
//!                                    # or: a line holding several records (glued, a JSON dump),
//!                                    # each one parsed or rejected, in order
//! ```
//!
//! Lines are read as the agent reads them, with [`llmtail_grammars::records`]; the one record
//! [`llmtail_grammars::read`] finds in a line must be among them. `expect` is compared with the
//! entire serialized parse, not a subset, so a field the grammar reads but the case does not name
//! fails the case too.

use std::path::{Path, PathBuf};

use llmtail_grammars::{Outcome, GRAMMAR_NAMES};
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    case: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    source: String,
    line: String,
    expect: Option<toml::Value>,
    #[serde(default)]
    no_match: bool,
    rejected: Option<String>,
    records: Option<Vec<toml::Value>>,
}

/// One record a line yields, as a case writes it: the serialized parse, or `{ rejected = "g" }`.
fn written(outcome: &Outcome<'_>) -> Option<Value> {
    match outcome {
        Outcome::Unmatched => None,
        Outcome::Rejected { grammar } => {
            assert!(
                GRAMMAR_NAMES.contains(grammar),
                "{grammar} is missing from GRAMMAR_NAMES"
            );
            Some(serde_json::json!({ "rejected": grammar }))
        }
        Outcome::Parsed(parsed) => {
            let grammar = parsed.record.grammar();
            assert!(
                GRAMMAR_NAMES.contains(&grammar),
                "{grammar} is missing from GRAMMAR_NAMES"
            );
            Some(serde_json::to_value(parsed).unwrap())
        }
    }
}

fn case_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/cases");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

/// Numbers compare by value (TOML `12` equals JSON `12.0`), NaN equals NaN.
fn same(expected: &Value, got: &Value) -> bool {
    match (expected, got) {
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            a == b || (a - b).abs() <= 1e-9 * a.abs().max(1.0)
        }
        (Value::String(a), Value::Null) | (Value::Null, Value::String(a)) => a == "nan",
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| same(v, w)))
        }
        _ => expected == got,
    }
}

#[test]
fn every_line_case_parses_to_exactly_its_expectation() {
    let mut failures = Vec::new();
    let mut count = 0;
    for file in case_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let cases: CaseFile =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for case in cases.case {
            count += 1;
            assert!(
                !case.source.trim().is_empty(),
                "{}: case {:?} names no source",
                file.display(),
                case.name
            );
            let expectations = usize::from(case.expect.is_some())
                + usize::from(case.no_match)
                + usize::from(case.rejected.is_some())
                + usize::from(case.records.is_some());
            assert!(
                expectations == 1,
                "{}: case {:?} needs exactly one of `expect`, `no_match = true`, `rejected` and `records`",
                file.display(),
                case.name
            );
            // Every record the line should yield, as `written` writes it.
            let expected: Vec<Value> = match (case.expect, case.rejected, case.records) {
                (Some(e), _, _) => vec![serde_json::to_value(e).unwrap()],
                (_, Some(grammar), _) => vec![serde_json::json!({ "rejected": grammar })],
                (_, _, Some(records)) => records
                    .into_iter()
                    .map(|r| serde_json::to_value(r).unwrap())
                    .collect(),
                _ => Vec::new(),
            };
            let outcomes: Vec<Outcome<'_>> = llmtail_grammars::records(&case.line).collect();
            let whole = llmtail_grammars::read(&case.line);
            if matches!(whole, Outcome::Parsed(_)) {
                assert!(
                    outcomes
                        .iter()
                        .filter_map(written)
                        .any(|r| Some(r) == written(&whole)),
                    "{}: case {:?}: the record `read` finds is not among the line's records",
                    file.display(),
                    case.name
                );
            }
            // serde_json turns NaN into null; case files write NaN as the string "nan".
            let got: Vec<Value> = outcomes.iter().filter_map(written).collect();
            let ok =
                expected.len() == got.len() && expected.iter().zip(&got).all(|(e, g)| same(e, g));
            if !ok {
                let show = |v: &[Value]| match v {
                    [] => "no match".to_string(),
                    _ => v
                        .iter()
                        .map(Value::to_string)
                        .collect::<Vec<_>>()
                        .join("\n            "),
                };
                failures.push(format!(
                    "{} :: {}\n  line:     {}\n  expected: {}\n  got:      {}",
                    file.file_name().unwrap().to_string_lossy(),
                    case.name,
                    case.line,
                    show(&expected),
                    show(&got),
                ));
            }
        }
    }
    assert!(count > 0, "no line cases found");
    assert!(
        failures.is_empty(),
        "{} of {count} line cases failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// LMDeploy copies vLLM's words (`Avg prompt throughput: `, `SpecDecoding metrics: `), and the
/// dispatch asks vLLM first: besides what the dispatch answers, neither engine's grammar on its
/// own may take or reject a case line that the other one takes or rejects: where both did, the
/// dispatch order alone would decide whose the line is.
#[test]
fn lmdeploy_and_the_other_engines_never_both_claim_a_case_line() {
    use llmtail_grammars::{lmdeploy, trtllm, vllm};
    let mut both = Vec::new();
    for file in case_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let cases: CaseFile = toml::from_str(&text).unwrap();
        // A line of several records (`records = [...]`) may hold one of each engine's.
        for case in cases.case.iter().filter(|c| c.records.is_none()) {
            let line = case.line.as_str();
            let lmdeploy_claims = lmdeploy::read(line) != Outcome::Unmatched;
            let other_claims =
                vllm::read(line) != Outcome::Unmatched || trtllm::read(line) != Outcome::Unmatched;
            if lmdeploy_claims && other_claims {
                both.push(format!("{}: {}", file.display(), case.name));
            }
        }
    }
    assert!(
        both.is_empty(),
        "claimed by LMDeploy and another engine:\n{}",
        both.join("\n")
    );
}
