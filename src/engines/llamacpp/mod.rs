//! What llama-server's lines in one log have said, per slot, and how each record changes it.
//!
//! llama-server's own `/metrics` (`--metrics`) sums, over the requests a server finished, the
//! same four figures its `print_timings()` prints per request: `n_prompt_tokens_processed` and
//! `t_prompt_processing` (`llamacpp:prompt_tokens_total`, `llamacpp:prompt_seconds_total`),
//! `n_decoded` and `t_token_generation` (`llamacpp:tokens_predicted_total`,
//! `llamacpp:tokens_predicted_seconds_total`). So those counters keep the native names; they
//! are kept per slot (and per router child), and `sum by (port)` is the server's own. The log
//! has per request what the native exporter sums away: the prompt time and the time per
//! output token of each request (histograms), and speculative decoding's accepted and
//! generated draft tokens.
//!
//! A block-era continuation line (`prompt eval time = ...` with no head) names no slot: it
//! belongs to the `slot print_timing: id N | task M |` header just before it (one log message,
//! written at once, so nothing comes between them), kept per router port in `header`.

mod series;

use llmtail_grammars::llamacpp::{Eval, LlamacppRecord, Origin};
use llmtail_grammars::Parsed;
use serde::{Deserialize, Serialize};

use crate::catalog::Row;
use crate::engines::engine::{
    ApplyContext, ChartedSeries, Engine, Landing, LandingCell, LogView, UnitLabels,
};
use crate::engines::parts::caps::{Cap, Refused};
use crate::engines::parts::float;
use crate::engines::parts::histogram::Histogram;
use crate::engines::parts::liveness::Status;
use crate::engines::parts::settings::StateSettings;

/// llama-server slots (`--parallel`, 1 to a few dozen; 256 is far past what one GPU serves), of
/// every router child writing the log: 1,024 in all.
pub const SLOTS_PER_LOG: Cap = Cap {
    what: "a llama-server slot (id N, per router port)",
    cap: 1024,
};

/// Bounds (seconds) of a request's prompt time: tens of milliseconds for a short prompt on a
/// GPU to minutes for a long context on a CPU (llama-server's own progress line starts at 3 s).
pub const PROMPT_EVAL_BUCKETS: [f64; 15] = [
    0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 320.0,
];

/// Bounds (seconds) of a request's time per generated token: under a millisecond (a draft
/// model accepting long runs) to a second (a large model on a CPU).
pub const TIME_PER_OUTPUT_TOKEN_BUCKETS: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// One slot of one llama-server (one router child, in router mode) in one log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LlamacppSlot {
    /// The router child's port, `None` outside router mode.
    pub port: Option<u16>,
    pub slot: u32,
    /// Whether the slot has a task: `processing task` until `stop processing`.
    pub busy: bool,
    #[serde(with = "float")]
    pub prompt_tokens: f64,
    #[serde(with = "float")]
    pub prompt_seconds: f64,
    #[serde(with = "float")]
    pub tokens_predicted: f64,
    #[serde(with = "float")]
    pub tokens_predicted_seconds: f64,
    /// Each request's prompt time.
    pub prompt_eval_seconds: Histogram,
    /// Each request's time per generated token, as the line prints it (`ms per token`).
    pub time_per_output_token_seconds: Histogram,
    #[serde(with = "float::option")]
    pub draft_accepted_tokens: Option<f64>,
    #[serde(with = "float::option")]
    pub draft_generated_tokens: Option<f64>,
    /// Line time of the slot's last record.
    #[serde(with = "float::option")]
    pub last_seen: Option<f64>,
}

impl LlamacppSlot {
    pub fn requests_processing(&self) -> f64 {
        if self.busy {
            1.0
        } else {
            0.0
        }
    }

    fn prompt(&mut self, eval: &Eval) {
        self.prompt_tokens += eval.tokens as f64;
        self.prompt_seconds += eval.time_ms / 1000.0;
        self.prompt_eval_seconds
            .observe(&PROMPT_EVAL_BUCKETS, eval.time_ms / 1000.0);
    }

    fn generation(&mut self, eval: &Eval) {
        self.tokens_predicted += eval.tokens as f64;
        self.tokens_predicted_seconds += eval.time_ms / 1000.0;
        // The engine's own figure: newer builds leave the first token out of it.
        let per_token = eval
            .ms_per_token
            .or((eval.tokens > 0).then(|| eval.time_ms / eval.tokens as f64));
        if let Some(ms) = per_token.filter(|_| eval.tokens > 0) {
            self.time_per_output_token_seconds
                .observe(&TIME_PER_OUTPUT_TOKEN_BUCKETS, ms / 1000.0);
        }
    }
}

/// The llama-server side of one log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LlamacppLog {
    /// Every slot seen, ordered by port and slot.
    pub slots: Vec<LlamacppSlot>,
    /// Per port, the slot whose timing lines come next: set by a block-era header (and, for
    /// late 2023's lines that name no slot, by the last slot that took a task).
    header: PortMap<u32>,
    /// Per port, the last time since start a line printed: a smaller one is a new process.
    uptime: PortMap<u64>,
}

/// A value per router port (`None` outside router mode), sorted by port so that a log with
/// thousands of ports costs a lookup, not a scan, and held to the slot cap: a port past it has
/// no slot to keep anything for. Saved as the list of pairs it always was; a list saved
/// unsorted is sorted when read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "Vec<(Option<u16>, T)>", into = "Vec<(Option<u16>, T)>")]
struct PortMap<T: Clone>(Vec<(Option<u16>, T)>);

impl<T: Clone> Default for PortMap<T> {
    fn default() -> Self {
        PortMap(Vec::new())
    }
}

impl<T: Clone> From<Vec<(Option<u16>, T)>> for PortMap<T> {
    fn from(mut pairs: Vec<(Option<u16>, T)>) -> Self {
        pairs.sort_by_key(|(port, _)| *port);
        pairs.dedup_by_key(|(port, _)| *port);
        PortMap(pairs)
    }
}

impl<T: Clone> From<PortMap<T>> for Vec<(Option<u16>, T)> {
    fn from(map: PortMap<T>) -> Self {
        map.0
    }
}

impl<T: Clone + Copy> PortMap<T> {
    fn get(&self, port: Option<u16>) -> Option<T> {
        let at = self.0.binary_search_by_key(&port, |(p, _)| *p).ok()?;
        Some(self.0[at].1)
    }

    fn set(&mut self, port: Option<u16>, value: T) {
        match self.0.binary_search_by_key(&port, |(p, _)| *p) {
            Ok(at) => self.0[at].1 = value,
            Err(at) if self.0.len() < SLOTS_PER_LOG.cap => self.0.insert(at, (port, value)),
            Err(_) => {}
        }
    }

    fn remove(&mut self, port: Option<u16>) {
        if let Ok(at) = self.0.binary_search_by_key(&port, |(p, _)| *p) {
            self.0.remove(at);
        }
    }
}

impl LlamacppLog {
    /// Applies one record; `may_grow`: whether `--max-series` has room for another slot.
    pub fn apply(
        &mut self,
        record: &LlamacppRecord,
        at: Option<f64>,
        may_grow: bool,
    ) -> Result<(), Refused> {
        let origin = record.origin();
        self.note_uptime(origin);
        let slot = match (record, origin.slot) {
            // A header names the slot of the lines after it; it changes no series.
            (LlamacppRecord::TimingHeader { .. }, Some(slot)) => {
                self.header.set(origin.port, slot);
                return Ok(());
            }
            (_, Some(slot)) => slot,
            (LlamacppRecord::AllIdle { .. }, None) => {
                self.free_slots_of(origin.port);
                return Ok(());
            }
            // Timing lines before any header or slot line: the server's first slot.
            (_, None) => self.header.get(origin.port).unwrap_or(0),
        };
        if matches!(record, LlamacppRecord::SlotBusy { .. }) {
            self.header.set(origin.port, slot);
        }
        let unit = self.slot(origin.port, slot, may_grow)?;
        unit.last_seen = at.or(unit.last_seen);
        match record {
            LlamacppRecord::PromptEval(eval) => unit.prompt(eval),
            LlamacppRecord::Eval(eval) => unit.generation(eval),
            LlamacppRecord::DraftAcceptance(d) => {
                *unit.draft_accepted_tokens.get_or_insert(0.0) += d.accepted as f64;
                *unit.draft_generated_tokens.get_or_insert(0.0) += d.generated as f64;
            }
            LlamacppRecord::SlotBusy { .. } => unit.busy = true,
            LlamacppRecord::SlotFree { .. } => unit.busy = false,
            LlamacppRecord::GenerationProgress { .. } | LlamacppRecord::PromptProgress { .. } => {
                unit.busy = true
            }
            LlamacppRecord::Total(_)
            | LlamacppRecord::GraphsReused { .. }
            | LlamacppRecord::TimingHeader { .. }
            | LlamacppRecord::AllIdle { .. } => {}
        }
        Ok(())
    }

    /// A time since start smaller than the last one on the port is a restarted server: its
    /// slots start idle (the counters go on: they are this log's).
    fn note_uptime(&mut self, origin: Origin) {
        let Some(now) = origin.uptime_us else {
            return;
        };
        if self.uptime.get(origin.port).is_some_and(|last| now < last) {
            self.free_slots_of(origin.port);
            self.header.remove(origin.port);
        }
        self.uptime.set(origin.port, now);
    }

    /// Marks the slots of `port` idle: they are the run of `slots` with that port.
    fn free_slots_of(&mut self, port: Option<u16>) {
        let start = self.slots.partition_point(|s| s.port < port);
        for s in self.slots[start..]
            .iter_mut()
            .take_while(|s| s.port == port)
        {
            s.busy = false;
        }
    }

    /// The slot, created on first sight unless past the cap or `--max-series`.
    fn slot(
        &mut self,
        port: Option<u16>,
        slot: u32,
        may_grow: bool,
    ) -> Result<&mut LlamacppSlot, Refused> {
        let at = match self
            .slots
            .binary_search_by(|s| (s.port, s.slot).cmp(&(port, slot)))
        {
            Ok(at) => at,
            Err(at) => {
                if self.slots.len() >= SLOTS_PER_LOG.cap {
                    return Err(Refused::Cap(SLOTS_PER_LOG));
                }
                if !may_grow {
                    return Err(Refused::MaxSeries);
                }
                let new = LlamacppSlot {
                    port,
                    slot,
                    ..LlamacppSlot::default()
                };
                self.slots.insert(at, new);
                at
            }
        };
        Ok(&mut self.slots[at])
    }
}

/// This engine's state in one log, as the registry names it.
pub type State = LlamacppLog;

impl Engine for LlamacppLog {
    const NAME: &'static str = "llamacpp";
    const DISPLAY_NAME: &'static str = "llama.cpp llama-server";
    const LABELS_NOTE: &'static str = "`llamacpp:`/`llmtail_llamacpp_` series has `log`, `slot`, `port` (router mode only) and the `--label`s";
    const LANDING: Landing = Landing {
        title: "llama.cpp llama-server slots",
        headers: &[
            "port",
            "slot",
            "status",
            "last record",
            "prompt tokens",
            "tokens predicted",
        ],
    };
    const UNIT_LABELS: &'static [&'static str] = &["log", "port", "slot"];
    const TABLE: &'static [Row<LlamacppSlot>] = series::LLAMACPP;
    const CHARTED: ChartedSeries = [Some("llamacpp:requests_processing"), None, None, None];
    const CAPS: &'static [Cap] = &[SLOTS_PER_LOG];
    type Unit = LlamacppSlot;
    type Key = ();
    type Record<'r> = LlamacppRecord;

    fn apply(
        &mut self,
        record: &LlamacppRecord,
        _parsed: &Parsed<'_>,
        line_time: Option<f64>,
        context: &ApplyContext<'_>,
    ) -> Result<(), Refused> {
        self.apply(record, line_time, context.may_grow)
    }

    // llama-server prints nothing while idle and no line says it stopped: a slot is up while
    // it has a task, idle otherwise, so there is nothing to judge.

    fn units(&self) -> impl ExactSizeIterator<Item = (&(), &LlamacppSlot)> {
        self.slots.iter().map(|slot| (&(), slot))
    }

    fn unit_labels(
        &self,
        _key: &(),
        slot: &LlamacppSlot,
        log: &LogView<'_>,
        _settings: &StateSettings,
    ) -> UnitLabels {
        let mut labels = vec![("log", log.label.to_string())];
        if let Some(port) = slot.port {
            labels.push(("port", port.to_string()));
        }
        labels.push(("slot", slot.slot.to_string()));
        labels
    }

    fn status(slot: &LlamacppSlot) -> Status {
        if slot.busy {
            Status::Up
        } else {
            Status::Idle
        }
    }

    fn landing_row(
        &self,
        _key: &(),
        slot: &LlamacppSlot,
        _log: &LogView<'_>,
        _settings: &StateSettings,
    ) -> Vec<LandingCell> {
        vec![
            LandingCell::Text(slot.port.map_or_else(|| "-".to_string(), |p| p.to_string())),
            LandingCell::Text(slot.slot.to_string()),
            LandingCell::Status(Self::status(slot)),
            LandingCell::Age {
                at: slot.last_seen,
                none: "none yet",
            },
            LandingCell::Text(format!("{}", slot.prompt_tokens)),
            LandingCell::Text(format!("{}", slot.tokens_predicted)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(line: &str) -> LlamacppRecord {
        match llmtail_grammars::parse(line).expect(line).record {
            llmtail_grammars::Record::Llamacpp(r) => r,
            other => panic!("{other:?}"),
        }
    }

    fn apply(log: &mut LlamacppLog, line: &str) {
        log.apply(&read(line), Some(1000.0), true).unwrap();
    }

    #[test]
    fn continuation_lines_count_for_the_slot_of_the_header_before_them() {
        let mut log = LlamacppLog::default();
        apply(
            &mut log,
            "slot launch_slot_: id  3 | task 135 | processing task, is_child = 0",
        );
        apply(&mut log, "slot print_timing: id  2 | task 124 | ");
        apply(&mut log, "prompt eval time =    5093.47 ms /  1360 tokens (    3.75 ms per token,   267.01 tokens per second)");
        apply(&mut log, "       eval time =     319.58 ms /    10 tokens (   31.96 ms per token,    31.29 tokens per second)");
        let two = &log.slots[0];
        assert_eq!(
            (two.slot, two.prompt_tokens, two.tokens_predicted),
            (2, 1360.0, 10.0)
        );
        assert!((two.prompt_seconds - 5.09347).abs() < 1e-12);
        assert_eq!(two.time_per_output_token_seconds.count, 1);
        assert!(log.slots[1].busy && log.slots[1].prompt_tokens == 0.0);
        apply(&mut log, "srv  update_slots: all slots are idle");
        assert!(!log.slots[1].busy);
    }

    /// 50,000 router ports made every record scan two lists as long (88.5 us a record against
    /// 2.8 us): the per-port state is sorted and held to the slot cap.
    #[test]
    fn per_port_state_of_many_router_ports_is_held_to_the_slot_cap() {
        let mut log = LlamacppLog::default();
        for port in 1..=5_000u16 {
            apply(
                &mut log,
                &format!("[{port}] 1.37.495.377 I slot print_timing: id  0 | task 1 | "),
            );
        }
        assert_eq!(log.header.0.len(), SLOTS_PER_LOG.cap);
        assert_eq!(log.uptime.0.len(), SLOTS_PER_LOG.cap);
        assert!(log.header.0.windows(2).all(|w| w[0].0 < w[1].0));
        // A port under the cap keeps its own header.
        assert_eq!(log.header.get(Some(7)), Some(0));
    }

    #[test]
    fn a_saved_port_list_reads_back_sorted() {
        let saved = serde_json::json!({"header": [[42028, 1], [42027, 0]], "uptime": []});
        let log: LlamacppLog = serde_json::from_value(saved).unwrap();
        assert_eq!(log.header.get(Some(42027)), Some(0));
        assert_eq!(log.header.get(Some(42028)), Some(1));
        assert_eq!(
            serde_json::to_value(&log).unwrap()["header"],
            serde_json::json!([[42027, 0], [42028, 1]])
        );
    }

    #[test]
    fn router_ports_keep_their_own_slots_and_headers() {
        let mut log = LlamacppLog::default();
        apply(
            &mut log,
            "[42027] 1.37.495.377 I slot print_timing: id  0 | task 388 | ",
        );
        apply(
            &mut log,
            "[42028] 1.37.495.377 I slot print_timing: id  1 | task 12 | ",
        );
        apply(&mut log, "[42027] prompt eval time =     789.03 ms /    27 tokens (   29.22 ms per token,    34.22 tokens per second)");
        assert_eq!((log.slots[0].port, log.slots[0].slot), (Some(42027), 0));
        assert_eq!(log.slots[0].prompt_tokens, 27.0);
    }

    #[test]
    fn a_smaller_time_since_start_is_a_restart_and_frees_the_slots() {
        let mut log = LlamacppLog::default();
        apply(
            &mut log,
            "5.28.382.925 I slot launch_slot_: id  0 | task 202 | processing task, is_child = 0",
        );
        assert!(log.slots[0].busy);
        apply(
            &mut log,
            "0.00.100.000 I srv  update_slots: all slots are idle",
        );
        assert!(!log.slots[0].busy);
        apply(
            &mut log,
            "0.01.100.000 I slot launch_slot_: id  0 | task 0 | processing task, is_child = 0",
        );
        apply(&mut log, "0.00.100.000 I slot print_timing: id  1 | task 0 | n_gen =    100, tg =  19.04 t/s, tg_3s =  19.23 t/s");
        assert!(!log.slots[0].busy, "the restart frees slot 0");
        assert!(log.slots[1].busy, "a progress line says slot 1 is busy");
    }

    #[test]
    fn past_the_cap_a_new_slot_is_refused() {
        let mut log = LlamacppLog::default();
        for slot in 0..SLOTS_PER_LOG.cap as u32 {
            let line = format!("slot launch_slot_: id {slot} | task 1 | processing task");
            apply(&mut log, &line);
        }
        let record = read("slot launch_slot_: id 99999 | task 1 | processing task");
        assert_eq!(
            log.apply(&record, None, true),
            Err(Refused::Cap(SLOTS_PER_LOG))
        );
    }
}
