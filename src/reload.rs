//! Reloading the configuration while serving, as Prometheus does: on SIGHUP, or on
//! `POST /-/reload` with `--web.enable-lifecycle`.
//!
//! The flags stay what they were; the config file is read again and merged with them. A file
//! with a mistake is refused whole and the running configuration stays, since an agent that
//! half-applies a broken file is worse than one that keeps the last good one. What a reload
//! cannot change in a running process (the listening socket, the state file, where reading
//! starts) is kept as it was and named in a warning.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use crate::clock::Clock;
use crate::config::{LiveSettings, Settings};
use crate::pipeline::Reconfiguration;
use crate::source::Stopper;
use crate::state::{ConfigReload, State};

/// How long a reload waits for the reader's thread to take the new logs before it answers.
/// The reader asks between rounds of checks, each bounded by its read budget, so this is
/// reached only when the reader is stuck (and then the watchdog has something to say too).
const TAKEN_WITHIN: Duration = Duration::from_secs(10);

/// A request to reload, and where its outcome goes: what changed, or why nothing did.
pub type ReloadRequest = oneshot::Sender<Result<String, String>>;

/// Applies reloaded configurations to a running agent.
pub struct Reloader {
    pub live: LiveSettings,
    /// To the pipeline, on the reader's thread.
    pub pipeline: std::sync::mpsc::Sender<Reconfiguration>,
    /// Wakes the reader, so that it asks the pipeline for the new logs at once.
    pub reader: Stopper,
    /// Where the outcome is kept for scrapes and the landing page.
    pub state: Arc<Mutex<State>>,
    pub clock: Clock,
}

impl Reloader {
    /// Reads the config file again and applies it; `Err` says why the running configuration
    /// stays. Logs what happened either way.
    pub async fn reload(&self) -> Result<String, String> {
        let running = self.live.get();
        let flags = running.flags.clone();
        // Reading the file, checking paths and resolving host names block.
        let read = tokio::task::spawn_blocking(move || Settings::from_cli(flags)).await;
        let mut new = match read {
            Ok(Ok(settings)) => settings,
            Ok(Err(e)) => {
                let why = format!("{e}\n  the running configuration stays");
                tracing::error!("reload refused: {why}");
                return Err(why);
            }
            Err(e) => return Err(format!("reload failed: {e}")),
        };
        for what in keep_what_needs_a_restart(&running, &mut new) {
            tracing::warn!("reload: {what} changed; it takes effect at the next restart");
        }
        if let Err(why) = reload_web_config(&running).await {
            let why = format!("{why}\n  the running configuration stays");
            tracing::error!("reload refused: {why}");
            return Err(why);
        }
        // The server holds the running handle: it takes the file read again from there.
        new.web_config = Arc::clone(&running.web_config);
        let summary = summary(&running, &new);
        let new = Arc::new(new);
        let (taken, is_taken) = oneshot::channel();
        let reconfiguration = Reconfiguration {
            settings: Arc::clone(&new),
            taken: Some(taken),
        };
        if self.pipeline.send(reconfiguration).is_err() {
            return Err("the reader has stopped".into());
        }
        self.reader.wake();
        if tokio::time::timeout(TAKEN_WITHIN, is_taken).await.is_err() {
            tracing::warn!(
                "reload: the reader has not taken the new logs yet; it will when it can"
            );
        }
        self.live.set(new);
        tracing::info!("configuration reloaded: {summary}");
        Ok(summary)
    }

    /// Answers reload requests, one at a time, until every sender is gone.
    pub async fn serve(self, mut requests: mpsc::Receiver<ReloadRequest>) {
        while let Some(reply) = requests.recv().await {
            let result = self.reload().await;
            let at = self.clock.now();
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state
                .config_reload
                .get_or_insert_with(|| ConfigReload::loaded_at(at))
                .note(at, result.clone());
            drop(state);
            let _ = reply.send(result);
        }
    }
}

/// Reads `--web.config.file` again into the handle the server consults (TLS certificate,
/// users, headers); a file that does not load leaves the running one in force.
async fn reload_web_config(running: &Settings) -> Result<(), String> {
    let handle = Arc::clone(&running.web_config);
    match tokio::task::spawn_blocking(move || handle.reload()).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(e) => Err(format!("reading the web config file failed: {e}")),
    }
}

/// Copies into `new` what a running process keeps until it restarts, and names each one that
/// the new configuration would have changed.
fn keep_what_needs_a_restart(running: &Settings, new: &mut Settings) -> Vec<&'static str> {
    let mut kept = Vec::new();
    macro_rules! keep {
        ($field:ident, $name:literal) => {
            if new.$field != running.$field {
                kept.push($name);
                new.$field = running.$field.clone();
            }
        };
    }
    keep!(listen_address, "the listen address (--web.listen-address)");
    keep!(telemetry_path, "the telemetry path (--web.telemetry-path)");
    keep!(max_connections, "--web.max-connections");
    keep!(state_file, "the state file (--state-file)");
    keep!(from, "--from");
    keep!(max_line_bytes, "--max-line-bytes");
    keep!(
        remote_write,
        "remote write (--remote-write.url, --remote-write.interval, [[remote_write]])"
    );
    if new.web_config.path() != running.web_config.path() {
        kept.push("the web config file's path (--web.config.file; its content reloads)");
    }
    kept
}

/// What a reload changes in the logs followed, in a few words.
fn summary(running: &Settings, new: &Settings) -> String {
    let added = new
        .logs
        .iter()
        .filter(|l| !running.logs.iter().any(|r| r.spec == l.spec))
        .count();
    let removed = running
        .logs
        .iter()
        .filter(|r| !new.logs.iter().any(|l| l.spec == r.spec))
        .count();
    let changed = new
        .logs
        .iter()
        .filter(|l| running.logs.iter().any(|r| r.spec == l.spec && r != *l))
        .count();
    format!(
        "{} logs followed ({added} added, {removed} removed, {changed} changed)",
        new.logs.len()
    )
}

/// Forwards SIGHUP to `requests` as reloads, logging each outcome.
pub fn reload_on_hangup(requests: mpsc::Sender<ReloadRequest>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut hangups = match signal(SignalKind::hangup()) {
            Ok(hangups) => hangups,
            Err(e) => {
                tracing::warn!("cannot listen for SIGHUP (reload): {e}");
                return;
            }
        };
        tokio::spawn(async move {
            while hangups.recv().await.is_some() {
                tracing::info!("SIGHUP: reloading the configuration");
                let (reply, outcome) = oneshot::channel();
                if requests.send(reply).await.is_err() {
                    return;
                }
                // The reloader logs the outcome.
                let _ = outcome.await;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn settings(args: &[&str]) -> Settings {
        let mut argv = vec!["llmtail"];
        argv.extend_from_slice(args);
        Settings::from_cli(crate::cli::Cli::try_parse_from(argv).unwrap()).unwrap()
    }

    #[test]
    fn what_needs_a_restart_is_kept_and_named() {
        let running = settings(&["--log", "/a.log", "--web.listen-address", "127.0.0.1:1"]);
        let mut new = settings(&["--log", "/b.log", "--web.listen-address", "127.0.0.1:2"]);
        let kept = keep_what_needs_a_restart(&running, &mut new);
        assert_eq!(kept, ["the listen address (--web.listen-address)"]);
        assert_eq!(new.listen_address.to_string(), "127.0.0.1:1");
        assert_eq!(new.logs[0].given, "/b.log");
    }

    #[test]
    fn the_summary_counts_logs_added_removed_and_changed() {
        let running = settings(&["--log", "/a.log", "--log", "/b.log"]);
        let new = settings(&["--log", "/b.log", "--log", "/c.log", "--log", "/d.log"]);
        assert_eq!(
            summary(&running, &new),
            "3 logs followed (2 added, 1 removed, 0 changed)"
        );
    }
}
