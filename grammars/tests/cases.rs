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
//! ```
//!
//! `expect` is compared with the entire serialized parse, not a subset, so a field the
//! grammar reads but the case does not name fails the case too.

use std::path::{Path, PathBuf};

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
                + usize::from(case.rejected.is_some());
            assert!(
                expectations == 1,
                "{}: case {:?} needs exactly one of `expect`, `no_match = true` and `rejected`",
                file.display(),
                case.name
            );
            // serde_json turns NaN into null; case files write NaN as the string "nan".
            let outcome = llmtail_grammars::read(&case.line);
            let got_rejected = match &outcome {
                llmtail_grammars::Outcome::Rejected { grammar } => Some(*grammar),
                _ => None,
            };
            if let Some(grammar) = got_rejected {
                assert!(
                    llmtail_grammars::GRAMMAR_NAMES.contains(&grammar),
                    "{grammar} is missing from GRAMMAR_NAMES"
                );
            }
            if got_rejected != case.rejected.as_deref() {
                failures.push(format!(
                    "{} :: {}\n  line:     {}\n  expected: {}\n  got:      {}",
                    file.file_name().unwrap().to_string_lossy(),
                    case.name,
                    case.line,
                    case.rejected
                        .as_deref()
                        .map_or("not rejected".into(), |g| format!("rejected by {g}")),
                    got_rejected
                        .map_or_else(|| format!("{outcome:?}"), |g| format!("rejected by {g}")),
                ));
                continue;
            }
            let parsed = outcome.parsed();
            if let Some(p) = &parsed {
                let grammar = p.record.grammar();
                assert!(
                    llmtail_grammars::GRAMMAR_NAMES.contains(&grammar),
                    "{grammar} is missing from GRAMMAR_NAMES"
                );
            }
            let got = parsed.map(|p| serde_json::to_value(&p).unwrap());
            let expected = case.expect.map(|e| serde_json::to_value(e).unwrap());
            let ok = match (&expected, &got) {
                (None, None) => true,
                (Some(e), Some(g)) => same(e, g),
                _ => false,
            };
            if !ok {
                failures.push(format!(
                    "{} :: {}\n  line:     {}\n  expected: {}\n  got:      {}",
                    file.file_name().unwrap().to_string_lossy(),
                    case.name,
                    case.line,
                    expected.map_or("no match".into(), |v| v.to_string()),
                    got.map_or("no match".into(), |v| v.to_string()),
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
