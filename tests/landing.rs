//! The landing page as a newcomer reads it: a section for each engine its logs show, with the
//! last hour of that engine drawn as inline SVG; the other engines named in one line; each
//! table's "last" column saying which line it means; a line stamped ahead of the host's clock
//! shown as such.

use crate::support::agent::{eventually, http_get, sample, RunningAgent, TESTS_NOW};
use crate::support::writer::append_lines as append;

const CONFIG_LINE: &str = "(EngineCore_DP0 pid=276) INFO 11-22 13:20:01 [core.py:93] Initializing a V1 LLM engine (v0.14.0) with config: model='/models/qwen3-8b', speculative_config=None, tokenizer='/models/qwen3-8b', max_seq_len=32768, served_model_name=qwen3-8b, enable_prefix_caching=True";

/// A vLLM V1 stats line stamped `11-22 HH:MM:SS` (`time`).
fn stats_line(time: &str, running: u32, waiting: u32, kv_percent: f64) -> String {
    format!(
        "(APIServer pid=812) INFO 11-22 {time} [loggers.py:257] Engine 000: Avg prompt \
         throughput: 1245.3 tokens/s, Avg generation throughput: 312.8 tokens/s, Running: \
         {running} reqs, Waiting: {waiting} reqs, GPU KV cache usage: {kv_percent:.1}%, Prefix \
         cache hit rate: 41.7%"
    )
}

fn html(agent: &RunningAgent) -> String {
    http_get(agent.addr, "/", Some("text/html")).unwrap().body
}

/// The `<h2>` titles of a page, in order.
fn sections(page: &str) -> Vec<&str> {
    page.split("<h2>")
        .skip(1)
        .filter_map(|rest| rest.split_once("</h2>").map(|(title, _)| title))
        .collect()
}

/// The text of the first row's cell under `header` in the table titled `title`.
fn cell<'p>(page: &'p str, title: &str, header: &str) -> &'p str {
    let table = page
        .split_once(&format!("<h2>{title}</h2>"))
        .and_then(|(_, rest)| rest.split_once("</table>"))
        .map(|(table, _)| table)
        .unwrap_or_else(|| panic!("no table {title:?} in {page}"));
    let column = table
        .split("<th>")
        .skip(1)
        .position(|th| th.starts_with(&format!("{header}</th>")))
        .unwrap_or_else(|| panic!("no column {header:?} in {table}"));
    let row = table.split("</tr>").nth(1).expect("a row");
    let cell = row.split("<td").nth(column + 1).expect("the cell");
    let text = &cell[cell.find('>').unwrap() + 1..];
    text.split_once("</td>").unwrap().0
}

/// Every `<svg>` element of a page.
fn svgs(page: &str) -> Vec<&str> {
    page.split("<svg")
        .skip(1)
        .map(|rest| rest.split_once("</svg>").expect("a closed svg").0)
        .collect()
}

/// Checks that `svg` is well-formed XML: every tag closed in order, every attribute quoted,
/// no raw `<` or `&` in text. (A browser forgives what an SVG viewer or a parser does not.)
fn assert_well_formed(svg: &str) {
    let mut open: Vec<&str> = Vec::new();
    let mut rest = svg;
    while let Some(start) = rest.find('<') {
        let text = &rest[..start];
        assert!(
            !text.contains('>') && text.split('&').skip(1).all(|t| t.contains(';')),
            "bad text {text:?} in {svg}"
        );
        let end = rest[start..].find('>').expect("an unclosed tag") + start;
        let tag = &rest[start + 1..end];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(open.pop(), Some(name), "mismatched </{name}> in {svg}");
        } else {
            let self_closing = tag.ends_with('/');
            let tag = tag.trim_end_matches('/');
            let (name, attributes) = tag.split_once(' ').unwrap_or((tag, ""));
            assert!(!name.is_empty() && !name.contains('<'), "bad tag {tag:?}");
            assert_eq!(
                attributes.matches('"').count() % 2,
                0,
                "unquoted attribute in {tag:?}"
            );
            for attribute in attributes.split('"').step_by(2) {
                let attribute = attribute.trim();
                assert!(
                    attribute.is_empty() || attribute.ends_with('='),
                    "bad attribute {attribute:?} in {tag:?}"
                );
            }
            if !self_closing {
                open.push(name);
            }
        }
        rest = &rest[end + 1..];
    }
    assert!(open.is_empty(), "unclosed {open:?} in {svg}");
}

#[test]
fn a_vllm_log_gets_the_vllm_section_with_its_four_charts_and_no_other_engine_s() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    append(&log, &[CONFIG_LINE, &stats_line("13:25:01", 14, 2, 63.1)]);
    let agent = RunningAgent::start(&["--log", log.to_str().unwrap()]);
    let page = html(&agent);
    assert_eq!(
        sections(&page),
        [
            "Logs",
            "vLLM engines",
            "Other engines",
            "Settings in force",
            "Build"
        ]
    );
    assert!(
        page.contains("Also read: TensorRT-LLM, ") && page.contains(": none seen in these logs."),
        "{page}"
    );
    let charts = svgs(&page);
    assert_eq!(charts.len(), 4, "{page}");
    for (chart, (series, now)) in charts.iter().zip([
        ("vllm:num_requests_running", "now 14 · max 14"),
        ("vllm:num_requests_waiting", "now 2 · max 2"),
        ("vllm:kv_cache_usage_perc", "now 63.1% · max 63.1%"),
        (
            "vllm:avg_generation_throughput_toks_per_s",
            "now 312.8 tok/s · max 312.8 tok/s",
        ),
    ]) {
        let svg = format!("<svg{chart}</svg>");
        assert_well_formed(&svg);
        assert!(
            svg.contains(series) && svg.contains(now),
            "{series}, {now}: {svg}"
        );
        assert!(svg.contains("60 min ago") && svg.contains(">now<"), "{svg}");
    }
    assert!(!page.contains("<script"), "{page}");

    let text = agent.get("/").unwrap().body;
    assert!(
        text.contains("running requests") && text.contains("now 14 · max 14"),
        "{text}"
    );
}

#[test]
fn a_log_with_no_engine_line_names_the_engines_read_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    append(&log, &["INFO starting", "INFO listening on :8000"]);
    let agent = RunningAgent::start(&["--log", log.to_str().unwrap()]);
    let page = html(&agent);
    assert_eq!(
        sections(&page),
        ["Logs", "Other engines", "Settings in force", "Build"]
    );
    assert!(
        page.contains("llmtail reads vLLM, TensorRT-LLM, ")
            && page.contains(": none seen in these logs yet."),
        "{page}"
    );
    assert!(!page.contains("<svg"), "{page}");
}

/// The Logs table's "last stats line" was the newest line any grammar recognised, while the
/// engine table's was the engine's own last stats line: each now says which it is, and on a log
/// of stats lines alone they agree.
#[test]
fn each_table_names_its_last_line_and_on_a_stats_only_log_they_agree() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    append(
        &log,
        &[
            &stats_line("13:24:51", 3, 0, 10.0),
            &stats_line("13:25:01", 4, 0, 11.0),
        ],
    );
    let agent = RunningAgent::start(&["--log", log.to_str().unwrap()]);
    let page = html(&agent);
    let parsed = cell(&page, "Logs", "last line parsed");
    let stats = cell(&page, "vLLM engines", "last stats line");
    assert!(parsed.ends_with(" ago"), "{page}");
    assert_eq!(parsed, stats, "{page}");
}

/// A line stamped ahead of the agent's clock showed as "just now".
#[test]
fn a_line_stamped_ahead_of_the_host_s_clock_reads_in_so_many_minutes_not_just_now() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    append(&log, &[&stats_line("13:25:01", 3, 0, 10.0)]);
    // The host's clock reads five minutes before the line's time (13:25:05 is TESTS_NOW).
    let agent = RunningAgent::start_at(&["--log", log.to_str().unwrap()], TESTS_NOW - 304.0);
    let page = html(&agent);
    let ahead = "in 5 min (stamped ahead of this host's clock)";
    assert_eq!(cell(&page, "Logs", "last line parsed"), ahead, "{page}");
    assert_eq!(cell(&page, "vLLM engines", "last stats line"), ahead);
    // Its values are drawn when the agent served them, at the right edge, not five minutes on.
    let running = svgs(&page)[0];
    assert!(running.contains("<circle cx=\"280.0\""), "{running}");
}

/// The charts sample what the agent serves on its own clock: each 30 s it served a point, the
/// minutes it did not (here the engine stopped logging) a gap.
#[test]
fn the_charts_draw_the_half_minutes_the_agent_served_and_leave_a_gap_for_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    append(&log, &[&stats_line("13:25:01", 14, 0, 60.0)]);
    let agent = RunningAgent::start(&["--log", log.to_str().unwrap()]);
    // At agent time `at`, the engine logs `running`; the agent's next tick samples it.
    let logs_at = |at: f64, time: &str, running: u32| -> String {
        agent.clock.set(at);
        append(&log, &[&stats_line(time, running, 0, 60.0)]);
        agent.wait_for("the line", |m| {
            sample(m, "vllm:num_requests_running", &[]) == Some(f64::from(running))
        });
        agent.clock.set(at + 1.0);
        let mut chart = String::new();
        let now = format!("now {running} · max 14");
        assert!(
            eventually(|| {
                chart = format!("<svg{}</svg>", svgs(&html(&agent))[0]);
                chart.contains(&now)
            }),
            "{chart}"
        );
        chart
    };
    let chart = logs_at(TESTS_NOW + 30.0, "13:25:35", 3);
    assert_eq!(chart.matches("<polyline").count(), 1, "{chart}");
    assert_eq!(chart.matches("<circle").count(), 0, "{chart}");

    // Ten minutes later, the engine logs again: the silence between is no line at all.
    let chart = logs_at(TESTS_NOW + 630.0, "13:35:35", 5);
    assert_eq!(chart.matches("<polyline").count(), 1, "{chart}");
    assert_eq!(chart.matches("<circle").count(), 1, "{chart}");
}

/// A backlog stamped days ago does not draw into the last hour: its busy engine fell silent
/// long since, so it is down, and nothing is served for it now.
#[test]
fn a_backlog_stamped_days_ago_draws_nothing_into_the_last_hour() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    append(&log, &[CONFIG_LINE, &stats_line("13:25:01", 14, 2, 63.1)]);
    let three_days = std::time::Duration::from_secs(3 * 86_400);
    std::fs::File::options()
        .write(true)
        .open(&log)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - three_days)
        .unwrap();
    let agent = RunningAgent::start_at(
        &["--log", log.to_str().unwrap()],
        TESTS_NOW + 3.0 * 86_400.0,
    );
    let page = html(&agent);
    let charts = svgs(&page);
    assert_eq!(charts.len(), 4, "{page}");
    for chart in charts {
        assert!(chart.contains("now – · max –"), "{chart}");
        assert!(!chart.contains("<polyline") && !chart.contains("<circle"));
    }
}

/// Several engines of one log (data parallel) and several logs of one engine make one chart:
/// requests and tokens add up, the KV cache shown is the fullest.
#[test]
fn the_charts_sum_requests_and_tokens_over_engines_and_logs_and_show_the_fullest_cache() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("a.log"), dir.path().join("b.log"));
    let engine_1 = stats_line("13:25:01", 3, 1, 7.8).replace("Engine 000", "Engine 001");
    append(&first, &[&stats_line("13:25:01", 14, 2, 63.1), &engine_1]);
    append(&second, &[&stats_line("13:25:02", 5, 0, 20.0)]);
    let agent = RunningAgent::start(&[
        "--log",
        first.to_str().unwrap(),
        "--log",
        second.to_str().unwrap(),
    ]);
    let page = html(&agent);
    let charts = svgs(&page);
    for (chart, now) in charts.iter().zip([
        "now 22 · max 22",
        "now 3 · max 3",
        "now 63.1% · max 63.1%",
        "now 938.4 tok/s · max 938.4 tok/s",
    ]) {
        assert!(chart.contains(now), "{now}: {chart}");
    }
}
