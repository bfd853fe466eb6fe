//! The landing page's tables: cells with a tone, and each table written as HTML (an engine's
//! charts after its rows) or as padded plain text.

use std::fmt::Write as _;

use super::charts::{self, Chart};
use crate::printable::escape_controls;

/// How a cell reads at a glance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tone {
    Plain,
    Good,
    Bad,
    Quiet,
}

#[derive(Debug, Clone)]
pub(super) struct Cell {
    pub(super) text: String,
    pub(super) tone: Tone,
    code: bool,
}

impl Cell {
    pub(super) fn plain(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            tone: Tone::Plain,
            code: false,
        }
    }

    pub(super) fn code(text: impl Into<String>) -> Cell {
        Cell {
            code: true,
            ..Cell::plain(text)
        }
    }

    pub(super) fn toned(text: impl Into<String>, tone: Tone) -> Cell {
        Cell {
            tone,
            ..Cell::plain(text)
        }
    }
}

pub(super) struct Table {
    title: &'static str,
    headers: Vec<&'static str>,
    rows: Vec<Vec<Cell>>,
    /// Said instead of an empty table.
    empty: String,
    /// An engine's last hour, drawn after its table.
    charts: Vec<Chart>,
}

impl Table {
    pub(super) fn new(
        title: &'static str,
        headers: Vec<&'static str>,
        rows: Vec<Vec<Cell>>,
    ) -> Table {
        Table {
            title,
            headers,
            rows,
            empty: String::new(),
            charts: Vec::new(),
        }
    }

    /// An engine's last hour, drawn after its rows.
    pub(super) fn with_charts(self, charts: Vec<Chart>) -> Table {
        Table { charts, ..self }
    }

    /// Says `empty` when it has no row.
    pub(super) fn or_else(self, empty: impl Into<String>) -> Table {
        Table {
            empty: empty.into(),
            ..self
        }
    }
}

pub(super) fn tone_class(tone: Tone) -> &'static str {
    match tone {
        Tone::Plain => "plain",
        Tone::Good => "good",
        Tone::Bad => "bad",
        Tone::Quiet => "quiet",
    }
}

/// `text` for HTML: its markup characters as entities and its control characters (which HTML
/// would show as nothing, or as a line break) as escapes.
pub(super) fn escape(text: &str) -> String {
    escape_controls(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub(super) fn html_table(out: &mut String, table: &Table) {
    let _ = writeln!(out, "<h2>{}</h2>", table.title);
    if table.rows.is_empty() {
        let _ = writeln!(out, "<p class=\"quiet\">{}</p>", escape(&table.empty));
        return;
    }
    html_rows(out, table);
    html_charts(out, &table.charts);
}

/// An engine's last hour, a chart per quantity side by side.
fn html_charts(out: &mut String, charts: &[Chart]) {
    if charts.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<p class=\"quiet\">{CHARTS_NOTE}</p>\n<div class=\"charts\">"
    );
    for chart in charts {
        let _ = writeln!(out, "{}", chart.svg());
    }
    out.push_str("</div>\n");
}

/// What the charts draw, said once above them.
const CHARTS_NOTE: &str = "The last hour as this agent served it, engines and logs combined \
    (requests and tokens summed, the fullest KV cache). Each point is the highest value of its \
    30 s; a gap is a time nothing was served (the agent stopped, the engine down).";

fn html_rows(out: &mut String, table: &Table) {
    out.push_str("<table><tr>");
    for header in &table.headers {
        let _ = write!(out, "<th>{header}</th>");
    }
    out.push_str("</tr>\n");
    for row in &table.rows {
        out.push_str("<tr>");
        for cell in row {
            let text = escape(&cell.text);
            let text = if cell.code && !text.is_empty() {
                format!("<code>{text}</code>")
            } else {
                text
            };
            match cell.tone {
                Tone::Plain => {
                    let _ = write!(out, "<td>{text}</td>");
                }
                tone => {
                    let _ = write!(out, "<td class=\"{}\">{text}</td>", tone_class(tone));
                }
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}

/// A table as columns padded to their widest cell; a setting table as `name: value` lines.
pub(super) fn text_table(out: &mut String, table: &Table) {
    let _ = writeln!(out, "\n{}", table.title);
    if table.rows.is_empty() {
        let _ = writeln!(out, "  {}", table.empty);
        return;
    }
    let rows: Vec<Vec<_>> = table
        .rows
        .iter()
        .map(|row| row.iter().map(|cell| escape_controls(&cell.text)).collect())
        .collect();
    let mut widths: Vec<usize> = table.headers.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (width, text) in widths.iter_mut().zip(row) {
            *width = (*width).max(text.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| -> String {
        let padded: Vec<String> = cells
            .zip(&widths)
            .map(|(text, width)| format!("{text:<width$}"))
            .collect();
        format!("  {}", padded.join("  ").trim_end())
    };
    let _ = writeln!(out, "{}", line(&mut table.headers.iter().copied()));
    for row in &rows {
        let _ = writeln!(out, "{}", line(&mut row.iter().map(|text| text.as_ref())));
    }
    text_charts(out, &table.charts);
}

/// An engine's last hour, a sparkline per quantity.
fn text_charts(out: &mut String, charts: &[Chart]) {
    if charts.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "  Last hour, a mark per {} min (oldest left):",
        charts::SPARK_SLOTS * 30 / 60
    );
    for chart in charts {
        let _ = writeln!(out, "    {}", chart.text());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_table_pads_columns_to_their_widest_cell() {
        let mut out = String::new();
        text_table(
            &mut out,
            &Table::new(
                "T",
                vec!["a", "bb"],
                vec![vec![Cell::plain("long"), Cell::plain("x")]],
            ),
        );
        assert_eq!(out, "\nT\n  a     bb\n  long  x\n");
    }
}
