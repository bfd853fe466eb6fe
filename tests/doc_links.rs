//! The Markdown pages link to each other and to files of the tree: every relative link must
//! name a file that exists, and a `#fragment` a heading of that page, so that moving a
//! section or renaming a file cannot leave a reader at a dead end.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// Inline code: what it holds is text, never a link or a heading's words.
static CODE_SPAN: LazyLock<regex::Regex> = LazyLock::new(|| regex::Regex::new("`[^`]*`").unwrap());

/// The pages a reader follows links through.
fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages: Vec<PathBuf> = [
        "README.md",
        "CONTRIBUTING.md",
        "ARCHITECTURE.md",
        "BENCHMARKS.md",
        "CHANGELOG.md",
        "fixtures/README.md",
    ]
    .iter()
    .map(|p| root.join(p))
    .collect();
    for entry in std::fs::read_dir(root.join("docs")).expect("docs/") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "md") {
            pages.push(path);
        }
    }
    pages
}

/// The text of a page outside fenced code blocks and inline code, where a link is a link.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(&CODE_SPAN.replace_all(line, "``"));
            out.push('\n');
        }
    }
    out
}

/// The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as
/// hyphens, a repeated heading numbered.
fn anchors(text: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for line in prose(text).lines() {
        let Some(heading) = line.strip_prefix('#').map(|h| h.trim_start_matches('#')) else {
            continue;
        };
        let heading = heading.trim().to_lowercase().replace("``", "");
        let slug: String = heading
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let repeats = seen.iter().filter(|s| **s == slug).count();
        seen.push(if repeats == 0 {
            slug
        } else {
            format!("{slug}-{repeats}")
        });
    }
    seen
}

/// The anchors of the headings written in inline code too (`## Push: \`remote_write\``).
fn page_anchors(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let unquoted = text.replace('`', "");
    let mut all = anchors(&text);
    all.extend(anchors(&unquoted));
    all
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let link = regex::Regex::new(r"\[[^\]]*\]\(([^)\s]+)\)").unwrap();
    let mut dead = Vec::new();
    let mut headings: HashMap<PathBuf, Vec<String>> = HashMap::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for target in link.captures_iter(&prose(&text)).map(|c| c[1].to_string()) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let resolved = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            if !resolved.exists() {
                dead.push(format!("{}: {target}: no such file", page.display()));
            } else if !fragment.is_empty()
                && resolved.extension().is_some_and(|x| x == "md")
                && !headings
                    .entry(resolved.clone())
                    .or_insert_with(|| page_anchors(&resolved))
                    .iter()
                    .any(|a| a == fragment)
            {
                dead.push(format!("{}: {target}: no such heading", page.display()));
            }
        }
    }
    assert!(dead.is_empty(), "dead links:\n{}", dead.join("\n"));
}

/// The links the check must see, and the ones it must not: a link in a code block is text.
#[test]
fn links_in_code_are_not_links_and_headings_give_githubs_anchors() {
    let text = "## Push: remote_write\n```\n[a](nowhere.md)\n```\n`[b](nowhere.md)` [c](here.md)\n## Push: remote_write\n";
    assert_eq!(prose(text).matches("](").count(), 1);
    assert_eq!(anchors(text), ["push-remote_write", "push-remote_write-1"]);
    assert_eq!(
        anchors("### Mimir, Thanos and other long-term stores"),
        ["mimir-thanos-and-other-long-term-stores"]
    );
    assert_eq!(anchors("## Last week's incident"), ["last-weeks-incident"]);
}

/// The cells of a table row: split at every `|` not escaped, inline code or not, as GitHub
/// splits them.
fn cells(row: &str) -> usize {
    let row = row.trim();
    let bars = row
        .match_indices('|')
        .filter(|(at, _)| !row[..*at].ends_with('\\'));
    bars.count().saturating_sub(1)
}

/// A `|` in a cell, even inside backticks, ends the cell on GitHub unless escaped: a row with
/// more cells than its header shifts everything after it.
#[test]
fn every_table_row_has_as_many_cells_as_its_header() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let (mut header, mut fenced) = (None, false);
        for (number, line) in text.lines().enumerate() {
            fenced ^= line.trim_start().starts_with("```");
            if fenced || !line.starts_with('|') {
                header = None;
                continue;
            }
            let n = cells(line);
            match header {
                None => header = Some(n),
                Some(h) if h != n => broken.push(format!(
                    "{}:{}: {n} cells under a header of {h}",
                    page.display(),
                    number + 1
                )),
                Some(_) => {}
            }
        }
    }
    assert!(
        broken.is_empty(),
        "escape | in cells as \\|:\n{}",
        broken.join("\n")
    );
}

#[test]
fn a_bar_in_backticks_still_ends_a_cell_unless_escaped() {
    assert_eq!(cells("| a | b |"), 2);
    assert_eq!(cells("| `x|y` | b |"), 3);
    assert_eq!(cells("| `x\\|y` | b |"), 2);
}
