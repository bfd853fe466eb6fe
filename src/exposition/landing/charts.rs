//! The landing page's charts of an engine's last hour ([`crate::state::history`]): a small
//! inline SVG per quantity for a browser (no script, no external asset), a one-line sparkline
//! for curl. Each says what it draws (the quantity and the engine's own series), the value now,
//! the highest in the hour, and the span.

use std::fmt::Write as _;

use crate::engines::Charted;
use crate::state::history::{Ring, SLOTS, SLOT_SECONDS};

/// One quantity's last hour, as data.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub quantity: Charted,
    /// The engine's series it draws.
    pub series: &'static str,
    /// One point per slot, oldest first; `None` where nothing was sampled.
    pub points: Vec<Option<f64>>,
    /// The last sample, if recent.
    pub now: Option<f64>,
}

/// Width and height of a chart, and its plot area inside.
const WIDTH: f64 = 288.0;
const HEIGHT: f64 = 128.0;
const PLOT_LEFT: f64 = 36.0;
const PLOT_RIGHT: f64 = 280.0;
const PLOT_TOP: f64 = 52.0;
const PLOT_BOTTOM: f64 = 106.0;

/// The span a chart covers, as its axis says it.
fn span() -> String {
    format!("{} min ago", (SLOTS as f64 * SLOT_SECONDS / 60.0).round())
}

impl Chart {
    /// The charts of an engine whose gauges `series` name (one per [`Charted`] quantity, `None`
    /// where it has none), from its ring at agent time `now`.
    pub fn gather(ring: Option<&Ring>, series: [Option<&'static str>; 4], now: f64) -> Vec<Chart> {
        Charted::ALL
            .into_iter()
            .zip(series)
            .filter_map(|(quantity, series)| {
                let series = series?;
                Some(Chart {
                    quantity,
                    series,
                    points: ring.map_or(vec![None; SLOTS], |r| r.hour(now, quantity).to_vec()),
                    now: ring.and_then(|r| r.latest(now, quantity)),
                })
            })
            .collect()
    }

    fn max(&self) -> Option<f64> {
        self.points.iter().flatten().copied().reduce(f64::max)
    }

    /// The top of the value axis: 100% for a usage, else a round number at or above the max.
    fn top(&self) -> f64 {
        if self.quantity == Charted::KvUsage {
            return 1.0;
        }
        let max = self.max().unwrap_or(0.0).max(1.0);
        let magnitude = 10f64.powf(max.log10().floor());
        [1.0, 2.0, 5.0, 10.0]
            .into_iter()
            .map(|step| step * magnitude)
            .find(|top| *top >= max)
            .unwrap_or(10.0 * magnitude)
    }

    /// A value as the chart's labels write it.
    pub fn format(&self, value: Option<f64>) -> String {
        let Some(v) = value else {
            return "–".to_string();
        };
        match self.quantity {
            Charted::KvUsage => format!("{:.1}%", v * 100.0),
            Charted::Throughput => format!("{v:.1} tok/s"),
            _ if v.fract() == 0.0 => format!("{v:.0}"),
            _ => format!("{v:.1}"),
        }
    }

    /// The top of the value axis, without the unit the head already gives (the axis is narrow).
    fn axis_label(&self, top: f64) -> String {
        match self.quantity {
            Charted::KvUsage => format!("{:.0}%", top * 100.0),
            _ => format!("{top}"),
        }
    }

    /// "now 3 · max 7", as the chart's head says it.
    fn readings(&self) -> String {
        format!(
            "now {} · max {}",
            self.format(self.now),
            self.format(self.max())
        )
    }

    /// The chart as an inline SVG element.
    pub fn svg(&self) -> String {
        let mut out = format!(
            "<svg class=\"chart\" width=\"{WIDTH}\" \
             height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\">\
             <title>{title}, last hour: {readings}</title>\
             <text x=\"6\" y=\"16\" class=\"name\">{title}</text>\
             <text x=\"6\" y=\"31\" class=\"value\">{readings}</text>\
             <text x=\"6\" y=\"44\" class=\"series\">{series}</text>",
            title = self.quantity.title(),
            readings = xml_escape(&self.readings()),
            series = xml_escape(self.series),
        );
        self.axes(&mut out);
        for run in self.runs() {
            self.draw_run(&mut out, &run);
        }
        out.push_str("</svg>");
        out
    }

    /// The frame, the value axis (0 and its top) and the time axis (an hour ago, now).
    fn axes(&self, out: &mut String) {
        let _ = write!(
            out,
            "<rect x=\"{PLOT_LEFT}\" y=\"{PLOT_TOP}\" width=\"{w}\" height=\"{h}\" class=\"frame\"/>\
             <line x1=\"{PLOT_LEFT}\" x2=\"{PLOT_RIGHT}\" y1=\"{middle}\" y2=\"{middle}\" class=\"grid\"/>\
             <text x=\"{label}\" y=\"{top}\" text-anchor=\"end\" class=\"axis\">{max}</text>\
             <text x=\"{label}\" y=\"{PLOT_BOTTOM}\" text-anchor=\"end\" class=\"axis\">0</text>\
             <text x=\"{PLOT_LEFT}\" y=\"{time}\" class=\"axis\">{span}</text>\
             <text x=\"{PLOT_RIGHT}\" y=\"{time}\" text-anchor=\"end\" class=\"axis\">now</text>",
            w = PLOT_RIGHT - PLOT_LEFT,
            h = PLOT_BOTTOM - PLOT_TOP,
            middle = (PLOT_TOP + PLOT_BOTTOM) / 2.0,
            label = PLOT_LEFT - 4.0,
            top = PLOT_TOP + 8.0,
            max = self.axis_label(self.top()),
            time = PLOT_BOTTOM + 14.0,
            span = span(),
        );
    }

    /// The stretches of consecutive points, as (x, y) in the plot area.
    fn runs(&self) -> Vec<Vec<(f64, f64)>> {
        let top = self.top();
        let step = (PLOT_RIGHT - PLOT_LEFT) / (SLOTS - 1) as f64;
        let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
        let mut open = false;
        for (i, point) in self.points.iter().enumerate() {
            let Some(v) = point else {
                open = false;
                continue;
            };
            let x = PLOT_LEFT + step * i as f64;
            let y = PLOT_BOTTOM - (v / top).clamp(0.0, 1.0) * (PLOT_BOTTOM - PLOT_TOP);
            if !open {
                runs.push(Vec::new());
                open = true;
            }
            if let Some(run) = runs.last_mut() {
                run.push((x, y));
            }
        }
        runs
    }

    /// One stretch: the area under it and its line, or a dot for a lone point.
    fn draw_run(&self, out: &mut String, run: &[(f64, f64)]) {
        let points: Vec<String> = run.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        match run {
            [(x, y)] => {
                let _ = write!(
                    out,
                    "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"2\" class=\"line\"/>"
                );
            }
            [(first, _), .., (last, _)] => {
                let _ = write!(
                    out,
                    "<polygon points=\"{first:.1},{PLOT_BOTTOM} {} {last:.1},{PLOT_BOTTOM}\" \
                     class=\"area\"/><polyline points=\"{}\" class=\"line\"/>",
                    points.join(" "),
                    points.join(" ")
                );
            }
            [] => {}
        }
    }

    /// The chart as one line of text: a sparkline (one mark per 2 minutes, the highest of its
    /// slots; a space where nothing was sampled), the value now and the max.
    pub fn text(&self) -> String {
        format!(
            "{:<22} [{}]  {}  ({})",
            self.quantity.title(),
            self.sparkline(),
            self.readings(),
            self.series
        )
    }

    fn sparkline(&self) -> String {
        const MARKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
        let top = self.top();
        self.points
            .chunks(SPARK_SLOTS)
            .map(
                |chunk| match chunk.iter().flatten().copied().reduce(f64::max) {
                    None => ' ',
                    Some(v) => {
                        let level = ((v / top).clamp(0.0, 1.0) * 7.0).round() as usize;
                        MARKS[level]
                    }
                },
            )
            .collect()
    }
}

/// How many slots one mark of the sparkline stands for.
pub const SPARK_SLOTS: usize = 4;

/// `text` inside SVG markup.
fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The CSS the charts need, for the page's `<style>`.
pub const CSS: &str = ".charts{display:flex;flex-wrap:wrap;gap:10px;margin:.6em 0}\
svg.chart{border:1px solid #ddd;border-radius:4px;background:#fff}\
svg.chart text{font:11px system-ui,sans-serif;fill:#555}svg.chart .name{font-weight:600;fill:#222;font-size:12px}\
svg.chart .value{fill:#222;font-size:12px;font-variant-numeric:tabular-nums}svg.chart .series{font-family:monospace;fill:#777}\
svg.chart .frame{fill:#fafafa;stroke:#ddd}svg.chart .grid{stroke:#e4e4e4;stroke-dasharray:3 3}svg.chart .line{fill:none;stroke:#1f6feb;stroke-width:1.5}\
svg.chart circle.line{fill:#1f6feb}svg.chart .area{fill:#1f6feb;fill-opacity:.12;stroke:none}";

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(quantity: Charted, points: Vec<Option<f64>>) -> Chart {
        Chart {
            quantity,
            series: "vllm:num_requests_running",
            now: points.last().copied().flatten(),
            points,
        }
    }

    fn hour_ending_with(values: &[Option<f64>]) -> Vec<Option<f64>> {
        let mut points = vec![None; SLOTS - values.len()];
        points.extend_from_slice(values);
        points
    }

    #[test]
    fn a_chart_says_what_it_draws_the_value_now_its_max_and_its_span() {
        let c = chart(
            Charted::Running,
            hour_ending_with(&[Some(3.0), Some(7.0), Some(4.0)]),
        );
        let svg = c.svg();
        for expected in [
            "running requests",
            "vllm:num_requests_running",
            "now 4 · max 7",
            "60 min ago",
            ">now<",
            ">10<",
            ">0<",
        ] {
            assert!(svg.contains(expected), "{expected:?} not in {svg}");
        }
    }

    #[test]
    fn a_gap_breaks_the_line_and_a_lone_point_is_a_dot() {
        let c = chart(
            Charted::Running,
            hour_ending_with(&[Some(1.0), Some(2.0), None, Some(3.0)]),
        );
        let svg = c.svg();
        assert_eq!(svg.matches("<polyline").count(), 1, "{svg}");
        assert_eq!(svg.matches("<circle").count(), 1, "{svg}");
    }

    #[test]
    fn usage_is_drawn_in_percent_on_a_full_scale() {
        let c = chart(Charted::KvUsage, hour_ending_with(&[Some(0.423)]));
        assert_eq!(c.top(), 1.0);
        assert!(c.svg().contains("now 42.3% · max 42.3%"));
        assert!(c.svg().contains(">100%<"));
    }

    #[test]
    fn the_value_axis_ends_on_a_round_number_at_or_above_the_max() {
        let top = |max| chart(Charted::Throughput, hour_ending_with(&[Some(max)])).top();
        assert_eq!(top(0.0), 1.0);
        assert_eq!(top(3.0), 5.0);
        assert_eq!(top(140.0), 200.0);
        assert_eq!(top(1000.0), 1000.0);
    }

    #[test]
    fn an_empty_hour_says_so_in_text() {
        let c = chart(Charted::Waiting, vec![None; SLOTS]);
        let line = c.text();
        assert!(line.contains("now – · max –"), "{line}");
        assert_eq!(c.sparkline(), " ".repeat(SLOTS / SPARK_SLOTS));
    }

    #[test]
    fn the_sparkline_has_one_mark_per_two_minutes_rising_with_the_value() {
        let c = chart(Charted::Running, hour_ending_with(&[Some(0.0); 4]));
        assert!(c.sparkline().ends_with('▁'));
        let c = chart(Charted::Running, hour_ending_with(&[Some(1.0); 4]));
        assert!(c.sparkline().ends_with('█'));
        assert_eq!(c.sparkline().chars().count(), SLOTS / SPARK_SLOTS);
    }
}
