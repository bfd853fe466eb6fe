#!/usr/bin/env python3
"""Writes the Grafana dashboards in this directory: python3 dashboards/make.py

The JSON files are what users import; this script is how they are kept consistent (one
datasource variable, the same filter on every query, one layout). Edit here, run it, commit
both. `cargo test --test integration dashboards` runs every query of every dashboard through a
real Prometheus scraping llmtail, and fails on one that errors or returns nothing.
Metric and label names are those of the engines' series tables (docs/REFERENCE.md).
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DS = {"type": "prometheus", "uid": "${datasource}"}


def datasource_variable():
    return {
        "name": "datasource",
        "label": "Data source",
        "type": "datasource",
        "query": "prometheus",
        "current": {},
        "hide": 0,
        "includeAll": False,
        "multi": False,
        "options": [],
        "refresh": 1,
        "regex": "",
        "skipUrlSync": False,
    }


def query_variable(name, label, query):
    """A multi-select variable with "All" (a regex matching every value, the empty one too)."""
    return {
        "name": name,
        "label": label,
        "type": "query",
        "datasource": DS,
        "definition": query,
        "query": {"query": query, "refId": "PrometheusVariableQueryEditor-VariableQuery"},
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
        "hide": 0,
        "includeAll": True,
        "allValue": ".*",
        "multi": True,
        "options": [],
        "refresh": 2,
        "regex": "",
        "skipUrlSync": False,
        "sort": 1,
    }


class Layout:
    """Places panels left to right on Grafana's 24-column grid, rows full width."""

    def __init__(self):
        self.panels = []
        self.x = 0
        self.y = 0
        self.row_height = 0

    def _next_id(self):
        return len(self.panels) + 1

    def row(self, title):
        if self.x:
            self.y += self.row_height
            self.x = 0
            self.row_height = 0
        self.panels.append({
            "id": self._next_id(),
            "type": "row",
            "title": title,
            "collapsed": False,
            "panels": [],
            "gridPos": {"h": 1, "w": 24, "x": 0, "y": self.y},
        })
        self.y += 1

    def _place(self, panel, w, h):
        if self.x + w > 24:
            self.y += self.row_height
            self.x = 0
            self.row_height = 0
        panel["id"] = self._next_id()
        panel["gridPos"] = {"h": h, "w": w, "x": self.x, "y": self.y}
        self.x += w
        self.row_height = max(self.row_height, h)
        self.panels.append(panel)

    def panel(self, kind, title, description, targets, unit="short", w=12, h=8, extra=None):
        panel = {
            "type": kind,
            "title": title,
            "description": description,
            "datasource": DS,
            "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
            "options": {},
            "targets": [
                {
                    "datasource": DS,
                    "refId": chr(ord("A") + i),
                    "expr": expr,
                    "legendFormat": legend,
                    "range": True,
                    "instant": False,
                }
                for i, (expr, legend) in enumerate(targets)
            ],
        }
        if kind == "timeseries":
            panel["options"] = {
                "legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
                "tooltip": {"mode": "multi", "sort": "desc"},
            }
        if kind == "stat":
            panel["options"] = {
                "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                "textMode": "value_and_name",
                "colorMode": "value",
            }
        if extra:
            panel.update(extra)
        self._place(panel, w, h)

    def table(self, title, description, expr, w=24, h=5):
        """The series' labels as columns: an instant query, formatted as a table."""
        self._place({
            "type": "table",
            "title": title,
            "description": description,
            "datasource": DS,
            "fieldConfig": {"defaults": {}, "overrides": []},
            "options": {"showHeader": True},
            "targets": [{
                "datasource": DS, "refId": "A", "expr": expr,
                "format": "table", "instant": True, "range": False, "legendFormat": "__auto",
            }],
        }, w, h)

    def text(self, title, content, w=24, h=7):
        self._place({
            "type": "text",
            "title": title,
            "options": {"mode": "markdown", "content": content},
        }, w, h)


def dashboard(uid, title, description, variables, layout):
    return {
        "uid": uid,
        "title": title,
        "description": description,
        "tags": ["llmtail"],
        "editable": True,
        "graphTooltip": 1,
        "schemaVersion": 39,
        "version": 1,
        "time": {"from": "now-1h", "to": "now"},
        "refresh": "30s",
        "timezone": "",
        "links": [],
        "annotations": {"list": []},
        "templating": {"list": [datasource_variable()] + variables},
        "panels": layout.panels,
    }


UP_DOWN = {
    "mappings": [{"type": "value", "options": {
        "0": {"text": "down", "color": "red"},
        "1": {"text": "up", "color": "green"},
    }}],
}


def second_query_on_a_right_axis():
    """A fraction on the left axis, with the panel's second query (a rate) on a right axis."""
    return {"fieldConfig": {
        "defaults": {"unit": "percentunit"},
        "overrides": [{
            "matcher": {"id": "byFrameRefID", "options": "B"},
            "properties": [
                {"id": "unit", "value": "short"},
                {"id": "custom.axisPlacement", "value": "right"},
            ],
        }],
    }}


def vllm():
    s = 'instance=~"$instance",model_name=~"$model_name",engine=~"$engine"'
    by = "instance, model_name, engine"
    legend = "{{model_name}} engine {{engine}} ({{instance}})"
    l = Layout()
    l.row("Tokens")
    l.panel("timeseries", "Token throughput",
            "Tokens per second from the token counters llmtail rebuilds from each stats line "
            "(average throughput x the window it covers). Prompt tokens: vLLM up to 0.15 counts "
            "every prompt token (vllm:prompt_tokens_total); from 0.16 the log counts only tokens "
            "computed locally, exported as vllm:prompt_tokens_by_source_total{source=\"local_compute\"} "
            "(prefix-cache hits and transferred KV left out). A log gives one or the other.",
            [
                (f"sum by ({by}) (rate(vllm:generation_tokens_total{{{s}}}[$__rate_interval]))",
                 "generation " + legend),
                (f"sum by ({by}) (rate(vllm:prompt_tokens_total{{{s}}}[$__rate_interval]))",
                 "prompt (all, vLLM <= 0.15) " + legend),
                (f"sum by ({by}) (rate(vllm:prompt_tokens_by_source_total{{{s},source=\"local_compute\"}}[$__rate_interval]))",
                 "prompt computed locally (vLLM 0.16+) " + legend),
            ], unit="short")
    l.panel("timeseries", "Throughput printed on the stats line",
            "The averages the last stats line printed, over its interval (10 s by default).",
            [
                (f"vllm:avg_generation_throughput_toks_per_s{{{s}}}", "generation " + legend),
                (f"vllm:avg_prompt_throughput_toks_per_s{{{s}}}", "prompt " + legend),
            ], unit="short")
    l.row("Queue")
    l.panel("timeseries", "Requests running, waiting, swapped",
            "Running and waiting from every stats line; swapped only on vLLM V0 lines.",
            [
                (f"vllm:num_requests_running{{{s}}}", "running " + legend),
                (f"vllm:num_requests_waiting{{{s}}}", "waiting " + legend),
                (f"vllm:num_requests_swapped{{{s}}}", "swapped (V0) " + legend),
            ], unit="short")
    l.panel("timeseries", "KV cache pressure",
            "KV cache usage (1 = full) and preemptions per second. Preemptions come from V0 "
            "warnings and from V1 lines that print them; V1 0.11.1 to at least 0.33 never print "
            "them (vLLM resets the count before reading it), so there this line stays empty.",
            [
                (f"vllm:kv_cache_usage_perc{{{s}}}", "KV usage " + legend),
                (f"sum by ({by}) (rate(vllm:num_preemptions_total{{{s}}}[$__rate_interval]))",
                 "preemptions/s " + legend),
            ], unit="percentunit", extra=second_query_on_a_right_axis())
    l.panel("timeseries", "Prefix cache hit rate",
            "V1: the line's hit rate over vLLM's last 1,000 requests' blocks; V0: GPU and CPU.",
            [
                (f"vllm:gpu_prefix_cache_hit_rate{{{s}}}", "GPU " + legend),
                (f"vllm:cpu_prefix_cache_hit_rate{{{s}}}", "CPU (V0) " + legend),
            ], unit="percentunit")
    l.row("Capacity")
    l.panel("stat", "KV cache capacity",
            "Tokens the KV cache holds (V1 start-up line), and KV cache blocks on the "
            "accelerator (V0 `# GPU blocks`).",
            [
                (f"llmtail_vllm_kv_cache_capacity_tokens{{{s}}}", "tokens " + legend),
                (f"llmtail_vllm_gpu_blocks{{{s}}}", "blocks " + legend),
            ], unit="short", w=12, h=6)
    l.panel("stat", "Maximum concurrency",
            "Requests of max_model_len tokens the KV cache holds at once (start-up line).",
            [(f"llmtail_vllm_max_concurrency{{{s}}}", legend)], unit="short", w=12, h=6)
    l.row("Liveness")
    l.panel("stat", "Engine up",
            "1 while the engine is alive; 0 after a shutdown or crash line, or when a stats line "
            "it was due to print is 3 intervals late. While 0, its gauges are not exported.",
            [(f"llmtail_vllm_engine_up{{{s}}}", legend)], w=8, h=6,
            extra={"fieldConfig": {"defaults": UP_DOWN, "overrides": []}})
    l.panel("stat", "Stopped logging with work in hand",
            "1 when the engine's last stats line showed running or waiting requests and the next "
            "is 3 intervals late (killed, hung, out of memory), as opposed to a shutdown, a crash "
            "line or idleness. Alert: VllmStatsSilentWithWork.",
            [(f"llmtail_vllm_engine_overdue{{{s}}}", legend)], w=8, h=6)
    l.panel("timeseries", "Last stats line age",
            "Seconds since the engine's last stats line was written. vLLM prints no line while "
            "idle (0.8.5+), so a growing age with the engine up means idle.",
            [(f"time() - llmtail_vllm_engine_last_line_timestamp_seconds{{{s}}}", legend)],
            unit="s", w=8, h=6)
    l.table("vLLM version",
            "Which vLLM wrote the log (its engine config line, else --vllm-version).",
            f"llmtail_vllm_info{{{s}}}")
    l.text("What a log cannot tell",
           "These come from vLLM's stats lines, not its `/metrics`. **Not in any log, so not "
           "here:** time to first token, time per output token, end-to-end latency, queue time, "
           "prefill and decode time, prompt and generation length histograms, finish reasons "
           "(vLLM logs no per-request timings or counts). Gauges hold the last printed value for "
           "one interval; token counters are rebuilt within 0.1% (docs/FAQ.md, \"What a log can and "
           "cannot tell\").")
    variables = [
        query_variable("instance", "Instance", "label_values(llmtail_vllm_engine_up, instance)"),
        query_variable("model_name", "Model",
                       'label_values(llmtail_vllm_engine_up{instance=~"$instance"}, model_name)'),
        query_variable("engine", "Engine",
                       'label_values(llmtail_vllm_engine_up{instance=~"$instance",model_name=~"$model_name"}, engine)'),
    ]
    return dashboard("llmtail-vllm", "vLLM (llmtail)",
                     "vLLM engines as their logs tell it, served by llmtail under vLLM's own names.",
                     variables, l)


def trtllm():
    s = 'instance=~"$instance",model=~"$model",rank=~"$rank"'
    by = "instance, model, rank"
    legend = "{{model}} rank {{rank}} ({{instance}})"
    l = Layout()
    l.row("Requests")
    l.panel("timeseries", "Requests by type",
            "Triton's request metrics from the last iteration record: active, max, scheduled, "
            "context, waiting; queued from IterationStats records.",
            [
                (f"nv_trt_llm_request_metrics{{{s}}}", "{{request_type}} " + legend),
                (f"llmtail_trtllm_queued_requests{{{s}}}", "queued " + legend),
            ])
    l.panel("timeseries", "Requests completed",
            "Requests completed per second (IterationStats numCompletedRequests).",
            [(f"sum by ({by}) (rate(llmtail_trtllm_completed_requests_total{{{s}}}[$__rate_interval]))",
              legend)], unit="reqps")
    l.row("KV cache")
    l.panel("timeseries", "KV cache blocks used (fraction)",
            "Used / max KV cache blocks, as the record printed it (else computed).",
            [(f'nv_trt_llm_kv_cache_block_metrics{{{s},kv_cache_block_type="fraction"}}', legend)],
            unit="percentunit")
    l.panel("timeseries", "KV cache blocks",
            "Used, free and max KV cache blocks.",
            [(f'nv_trt_llm_kv_cache_block_metrics{{{s},kv_cache_block_type=~"used|free|max"}}',
              "{{kv_cache_block_type}} " + legend)])
    l.panel("timeseries", "KV cache reuse",
            "Block hit rate (reused / (reused + missed), IterationStats) and reused blocks per "
            "second.",
            [
                (f"llmtail_trtllm_kv_cache_hit_rate{{{s}}}", "hit rate " + legend),
                (f"sum by ({by}) (rate(llmtail_trtllm_kv_cache_reused_blocks_total{{{s}}}[$__rate_interval]))",
                 "reused blocks/s " + legend),
            ], unit="percentunit", extra=second_query_on_a_right_axis())
    l.panel("timeseries", "Runtime memory",
            "Runtime CPU, GPU and pinned memory the executor reports.",
            [(f"nv_trt_llm_runtime_memory_metrics{{{s}}}", "{{memory_type}} " + legend)],
            unit="bytes")
    l.row("Iterations")
    quantile = ("histogram_quantile({q}, sum by (le, {by}) "
                "(rate(llmtail_trtllm_iteration_seconds_bucket{{{s}}}[$__rate_interval])))")
    l.panel("timeseries", "Iteration latency",
            "Quantiles of iteration latency (IterationStats iterLatencyMS; iteration log "
            "host_step_time), from llmtail's histogram, and the mean.",
            [(quantile.format(q=q, by=by, s=s), f"p{int(q * 100)} " + legend)
             for q in (0.5, 0.9, 0.99)] + [
                (f"sum by ({by}) (rate(llmtail_trtllm_iteration_seconds_sum{{{s}}}[$__rate_interval])) / "
                 f"sum by ({by}) (rate(llmtail_trtllm_iteration_seconds_count{{{s}}}[$__rate_interval]))",
                 "mean " + legend),
            ], unit="s")
    l.panel("timeseries", "Iterations and context tokens",
            "Executor iterations per second, and context (prefill) tokens scheduled per second.",
            [
                (f"sum by ({by}) (rate(llmtail_trtllm_iterations_total{{{s}}}[$__rate_interval]))",
                 "iterations/s " + legend),
                (f"sum by ({by}) (rate(llmtail_trtllm_context_tokens_total{{{s}}}[$__rate_interval]))",
                 "context tokens/s " + legend),
            ])
    l.row("Liveness")
    l.panel("stat", "Executor up",
            "1 while the executor is alive; 0 after Triton's signal line, or when requests were "
            "active and no iteration came for 60 s. While 0, its gauges are not exported.",
            [(f"llmtail_trtllm_engine_up{{{s}}}", legend)], w=8, h=6,
            extra={"fieldConfig": {"defaults": UP_DOWN, "overrides": []}})
    l.panel("stat", "Stopped with work in hand",
            "1 when the last iteration record had active requests and none came for 60 s "
            "(killed, hung), as opposed to Triton's signal line or idleness. Alert: "
            "TrtllmStatsSilentWithWork.",
            [(f"llmtail_trtllm_engine_overdue{{{s}}}", legend)], w=8, h=6)
    l.panel("timeseries", "Last iteration age",
            "Seconds since the timestamp of the last iteration record.",
            [(f'time() - nv_trt_llm_general_metrics{{{s},general_type="timestamp"}} / 1e6', legend)],
            unit="s", w=8, h=6)
    l.text("What a log cannot tell",
           "These come from TensorRT-LLM's and Triton's iteration records in the log. Per-request "
           "latencies (time to first token, inter-token latency) are in no log. Triton's own "
           "`nv_inference_*` request counters come from its server, not from these records.",
           h=4)
    variables = [
        query_variable("instance", "Instance", "label_values(llmtail_trtllm_engine_up, instance)"),
        query_variable("model", "Model",
                       'label_values(llmtail_trtllm_engine_up{instance=~"$instance"}, model)'),
        query_variable("rank", "Rank",
                       'label_values(llmtail_trtllm_engine_up{instance=~"$instance",model=~"$model"}, rank)'),
    ]
    return dashboard("llmtail-trtllm", "TensorRT-LLM and Triton (llmtail)",
                     "TensorRT-LLM executors as their logs tell it, served by llmtail under Triton's names.",
                     variables, l)


def lmdeploy():
    # No model filter: LMDeploy's stats line does not name the model, so `model_name` is what
    # the config gives (`--model-name`, `[[log]]`), often nothing.
    s = 'instance=~"$instance",engine=~"$engine"'
    by = "instance, model_name, engine"
    legend = "{{model_name}} rank {{engine}} ({{instance}})"
    l = Layout()
    l.row("Tokens")
    l.panel("timeseries", "Token throughput",
            "Prompt and generation tokens per second from the rebuilt counters "
            "(lmdeploy:prompt_tokens_total, lmdeploy:generation_tokens_total: each stats line's "
            "throughputs x its 10 s window).",
            [
                (f"sum by ({by}) (rate(lmdeploy:prompt_tokens_total{{{s}}}[$__rate_interval]))",
                 "prompt " + legend),
                (f"sum by ({by}) (rate(lmdeploy:generation_tokens_total{{{s}}}[$__rate_interval]))",
                 "generation " + legend),
            ])
    l.panel("timeseries", "Throughput the line printed",
            "The last stats line's `Avg thr (in/out)` (or `Avg prompt/generation throughput`), "
            "tokens/s over its 10 s window.",
            [
                (f"llmtail_lmdeploy_prompt_throughput_tokens_per_second{{{s}}}", "in " + legend),
                (f"llmtail_lmdeploy_generation_throughput_tokens_per_second{{{s}}}", "out " + legend),
            ])
    l.row("Requests")
    l.panel("timeseries", "Engine requests",
            "Requests running in the engine's batch and queued in the engine "
            "(`Engine (running/waiting)`).",
            [
                (f"lmdeploy:num_requests_running{{{s}}}", "running " + legend),
                (f"lmdeploy:num_requests_waiting{{{s}}}", "waiting " + legend),
            ], w=8)
    l.panel("timeseries", "API server requests",
            "Requests the API server routed to request handles and requests waiting for a free "
            "one (`Server (.../routed/waiting)`, 0.13+).",
            [
                (f"lmdeploy:num_api_requests_routed{{{s}}}", "routed " + legend),
                (f"lmdeploy:num_api_requests_waiting{{{s}}}", "waiting " + legend),
            ], w=8)
    l.panel("timeseries", "Requests finished",
            "Requests that succeeded and failed per second (the slope of the server's lifetime "
            "counts, `Server (succeeded/failed/...)`, 0.13+).",
            [
                (f"deriv(lmdeploy:num_requests_succeeded{{{s}}}[$__rate_interval])",
                 "succeeded " + legend),
                (f"deriv(lmdeploy:num_requests_failed{{{s}}}[$__rate_interval])",
                 "failed " + legend),
            ], unit="reqps", w=8)
    l.row("KV cache")
    l.panel("timeseries", "KV cache usage",
            "GPU KV cache blocks in use (`KV cache: X%`).",
            [(f"lmdeploy:gpu_cache_usage_perc{{{s}}}", legend)], unit="percentunit")
    l.panel("timeseries", "Prefix cache hit rate",
            "Prefix cache hit rate (0.12+; 0.13+ prints it only when not 0).",
            [(f"lmdeploy:prefix_cache_hit_rate{{{s}}}", legend)], unit="percentunit")
    l.row("Speculative decoding")
    l.panel("timeseries", "Draft acceptance",
            "Accepted over drafted tokens since counting began (lmdeploy:spec_decode_mean_accept_rate), "
            "and accepted tokens per second.",
            [
                (f"lmdeploy:spec_decode_mean_accept_rate{{{s}}}", "acceptance " + legend),
                (f"sum by ({by}) (rate(lmdeploy:spec_decode_num_accepted_tokens_total{{{s}}}[$__rate_interval]))",
                 "accepted tokens/s " + legend),
            ], unit="percentunit", extra=second_query_on_a_right_axis())
    l.panel("timeseries", "Mean acceptance length",
            "Tokens per speculative step in the last interval that drafted (1 + accepted per "
            "draft).",
            [(f"llmtail_lmdeploy_spec_decode_mean_acceptance_length{{{s}}}", legend)])
    l.row("Liveness")
    l.panel("stat", "Rank up",
            "1 while the rank is alive; 0 when its last stats line showed running or waiting "
            "requests and none came for 30 s. While 0, its gauges are not exported.",
            [(f"llmtail_lmdeploy_engine_up{{{s}}}", legend)], w=8, h=6,
            extra={"fieldConfig": {"defaults": UP_DOWN, "overrides": []}})
    l.panel("stat", "Stopped with work in hand",
            "1 when the last stats line showed running or waiting requests and no line came for "
            "3 intervals (killed, hung), as opposed to idleness. Alert: "
            "LmdeployStatsSilentWithWork.",
            [(f"llmtail_lmdeploy_engine_overdue{{{s}}}", legend)], w=8, h=6)
    l.panel("timeseries", "Last stats line age",
            "Seconds since the rank's last stats line (LMDeploy prints one every 10 s while it "
            "processes tokens, nothing while idle).",
            [(f"time() - llmtail_lmdeploy_engine_last_line_timestamp_seconds{{{s}}}", legend)],
            unit="s", w=8, h=6)
    l.text("What a log cannot tell",
           "These come from LMDeploy's stats line, printed every 10 s per data-parallel rank when "
           "tokens were processed. Token counters are rebuilt from its throughputs. Per-request "
           "latencies (time to first token, time per output token, end-to-end and queue "
           "histograms) and per-request token histograms are in LMDeploy's own `/metrics` "
           "only.",
           h=4)
    variables = [
        query_variable("instance", "Instance", "label_values(llmtail_lmdeploy_engine_up, instance)"),
        query_variable("engine", "Rank",
                       'label_values(llmtail_lmdeploy_engine_up{instance=~"$instance"}, engine)'),
    ]
    return dashboard("llmtail-lmdeploy", "LMDeploy (llmtail)",
                     "LMDeploy's data-parallel ranks as their stats lines tell it, served by llmtail under LMDeploy's names.",
                     variables, l)


def agent():
    s = 'instance=~"$instance",log=~"$log"'
    l = Layout()
    l.row("Lines")
    l.panel("timeseries", "Lines read",
            "Lines read per second, per log.",
            [(f"rate(llmtail_lines_read_total{{{s}}}[$__rate_interval])", "{{log}} ({{instance}})")])
    l.panel("timeseries", "Records parsed by grammar",
            "Records a grammar recognised per second (a line may hold several).",
            [(f"rate(llmtail_lines_parsed_total{{{s}}}[$__rate_interval])",
              "{{grammar}} {{log}} ({{instance}})")])
    l.panel("timeseries", "Lines unmatched",
            "Lines no grammar recognised, per second: most lines of a log, never an error.",
            [(f"rate(llmtail_lines_unmatched_total{{{s}}}[$__rate_interval])", "{{log}} ({{instance}})")])
    l.panel("timeseries", "Records rejected by grammar",
            "Records that started as an engine's own and did not parse: a changed format shows "
            "here first (alert LlmtailLinesRejected). llmtail's own log quotes them.",
            [(f"increase(llmtail_lines_rejected_total{{{s}}}[$__rate_interval])",
              "{{grammar}} {{log}} ({{instance}})")])
    l.panel("timeseries", "Lines skipped by reason",
            "too_long and truncated_partial are dropped; invalid_envelope lines are read as plain "
            "text.",
            [(f"increase(llmtail_lines_skipped_total{{{s}}}[$__rate_interval])",
              "{{reason}} {{log}} ({{instance}})")])
    l.panel("timeseries", "Last record age by grammar",
            "Seconds since the last record each grammar recognised was written.",
            [(f"time() - llmtail_last_parsed_timestamp_seconds{{{s}}}",
              "{{grammar}} {{log}} ({{instance}})")], unit="s")
    l.row("Files")
    l.panel("stat", "Log open",
            "1 while the log is open; 0 while waiting for it, gone, or unreadable.",
            [(f"llmtail_log_open{{{s}}}", "{{log}} ({{instance}})")], w=8, h=6)
    l.panel("timeseries", "Open errors",
            "Failed attempts to open the log (alert LlmtailLogUnreadable); the agent's log names "
            "the user and the fix.",
            [(f"increase(llmtail_log_open_errors_total{{{s}}}[$__rate_interval])",
              "{{log}} ({{instance}})")], w=8, h=6)
    l.panel("timeseries", "Read offset growth",
            "Bytes per second read into the file the path names now (negative at a rotation or "
            "truncation).",
            [(f"deriv(llmtail_log_offset_bytes{{{s}}}[$__rate_interval])", "{{log}} ({{instance}})")],
            unit="Bps", w=8, h=6)
    l.panel("timeseries", "Rotations and truncations",
            "Times the path came to name another file, and times the file was truncated.",
            [
                (f"increase(llmtail_log_rotations_total{{{s}}}[$__rate_interval])",
                 "rotations {{log}} ({{instance}})"),
                (f"increase(llmtail_log_truncations_total{{{s}}}[$__rate_interval])",
                 "truncations {{log}} ({{instance}})"),
            ], w=8, h=6)
    l.panel("timeseries", "Series refused",
            "Records dropped because their engine, rank or draft position would pass a cap "
            "(--max-series and the per-log caps).",
            [(f"increase(llmtail_series_refused_total{{{s}}}[$__rate_interval])",
              "{{log}} ({{instance}})")], w=8, h=6)
    l.panel("stat", "vLLM stats logging disabled",
            "1 when vLLM said it prints no stats lines (several API servers; fix: vllm serve "
            "--api-server-count 1).",
            [(f"llmtail_vllm_stats_logging_disabled{{{s}}}", "{{log}} ({{instance}})")], w=8, h=6)
    l.row("Configuration and build")
    l.panel("stat", "Last config reload successful",
            "0 when the last SIGHUP or /-/reload found a mistake in the config file: the "
            "previous configuration is in force (alert LlmtailConfigReloadFailed). The landing "
            "page and the agent's log say why.",
            [('llmtail_config_last_reload_successful{instance=~"$instance"}', "{{instance}}")],
            w=8, h=6)
    l.panel("stat", "Configuration age",
            "Time since the configuration in force was loaded (start-up or last good reload).",
            [('time() - llmtail_config_last_reload_success_timestamp_seconds{instance=~"$instance"}',
              "{{instance}}")], unit="s", w=8, h=6)
    l.table("Build", "Which llmtail each instance runs.",
            'llmtail_build_info{instance=~"$instance"}')
    variables = [
        query_variable("instance", "Instance", "label_values(llmtail_build_info, instance)"),
        query_variable("log", "Log",
                       'label_values(llmtail_lines_read_total{instance=~"$instance"}, log)'),
    ]
    return dashboard("llmtail-agent", "llmtail",
                     "The agent itself: what it reads, recognises, rejects and skips, per log.",
                     variables, l)


def main():
    for name, board in (("vllm", vllm()), ("trtllm", trtllm()), ("lmdeploy", lmdeploy()),
                        ("llmtail", agent())):
        with open(os.path.join(HERE, f"{name}.json"), "w") as out:
            json.dump(board, out, indent=2)
            out.write("\n")


if __name__ == "__main__":
    main()
