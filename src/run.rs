//! Running the agent: one-shot (read, print, exit) or serving (follow, serve, stop on a signal).

use std::io::Write;
use std::sync::Arc;

use anyhow::Context;

use crate::checkpoint::Checkpoint;
use crate::clock::Clock;
use crate::config::{LiveSettings, Settings};
use crate::exposition::serve::{self, ServeOptions};
use crate::exposition::{self, render, Lifecycle, Shared};
use crate::pipeline::{new_state, Checkpointing, Notifying, Pipeline, Reading};
use crate::reload::{reload_on_hangup, ReloadRequest, Reloader};
use crate::remote_write::metrics::QueueSeries;
use crate::samples::{SampleSource, SharedSources};
use crate::service::ServiceManager;
use crate::source::{LogSpec, Reader, Sink, SourceOptions, Stopper};
use crate::state::ConfigReload;
use crate::state_file_lock::StateFileLock;

/// A failure before the agent serves: the same inputs on the same host would fail again, so
/// `main` exits 2 for it, as for a bad flag, and a supervisor does not restart it every 2 s
/// (the unit's `RestartPreventExitStatus=2`). The message names the input and the fix.
#[derive(Debug, thiserror::Error)]
#[error("{0:#}")]
pub struct StartupError(anyhow::Error);

/// Marks a failure as one of start-up ([`StartupError`]).
trait AtStartup<T> {
    fn at_startup(self) -> anyhow::Result<T>;
}

impl<T, E: Into<anyhow::Error>> AtStartup<T> for Result<T, E> {
    fn at_startup(self) -> anyhow::Result<T> {
        self.map_err(|e| StartupError(e.into()).into())
    }
}

/// The reader of the logs `settings` name, going on from `restored` if there is one.
fn reader(settings: &Settings, restored: Option<&Checkpoint>) -> anyhow::Result<Reader> {
    let options = SourceOptions {
        from: settings.from.start_from(),
        max_line_bytes: settings.max_line_bytes,
        resume: restored.map(Checkpoint::resume).unwrap_or_default(),
        known: restored.map(Checkpoint::known_files).unwrap_or_default(),
        log_expiry: settings.log_expiry,
        ..SourceOptions::default()
    };
    let specs = settings.logs.iter().map(|l| l.spec.clone()).collect();
    Reader::new(specs, options)
        .context("cannot follow the logs")
        .at_startup()
}

/// Reads every log to its current end and writes the exposition (text format 0.0.4) to `out`.
/// An input that is missing, unreadable or matches nothing is an error: `--one-shot` is how a
/// user tests a log, and an empty answer would say nothing of why.
pub fn one_shot(settings: &Settings, clock: Clock, out: &mut dyn Write) -> anyhow::Result<()> {
    for log in &settings.logs {
        check_readable(&log.spec, &log.given)?;
    }
    let state = new_state(settings);
    if settings.state_file.is_some() {
        tracing::warn!("--one-shot reads the logs from their start and ignores --state-file");
    }
    if !settings.remote_write.targets.is_empty() {
        tracing::warn!("--one-shot prints the metrics and pushes nothing (--remote-write.url)");
    }
    say_auto_zones_read_locally(settings, "--one-shot");
    let mut pipeline = Pipeline::new(settings, state.clone(), clock.clone());
    reader(settings, None)?.read_to_end(&mut pipeline);
    // The logs as they stood when their last line was written: an engine is judged gone only
    // if the log itself says so, or if it fell silent while other lines went on.
    {
        let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
        let now = state.latest_line_at().unwrap_or_else(|| clock.now());
        state.judge(now);
        say_what_was_not_recognised(&state);
    }
    let text = render::render(&state, &[], render::Format::Text004);
    out.write_all(text.as_bytes())
        .context("cannot write the metrics to stdout")?;
    out.flush().context("cannot write the metrics to stdout")?;
    Ok(())
}

/// Warns of every log read whole with not one line recognised. Serving waits for
/// [`crate::state::UNRECOGNISED_AFTER_LINES`] lines, since an engine may not have printed its
/// first stats line yet; a one-shot read has the whole log, and no line will come after, so any
/// line read is enough to judge it by.
fn say_what_was_not_recognised(state: &crate::state::State) {
    for log in state.iter_logs().filter(|log| log.nothing_recognised_in(1)) {
        tracing::warn!("{}", log.nothing_recognised_warning());
    }
}

/// `--log-timezone auto` learns a log's offset from lines as they arrive; reading a whole log
/// at once (`--one-shot`, `replay`) has no arrivals to learn from, so it reads the times in the
/// agent's own zone, and says so.
pub(crate) fn say_auto_zones_read_locally(settings: &Settings, command: &str) {
    for log in settings.logs.iter().filter(|l| l.timezone.is_auto()) {
        tracing::warn!(
            log = %log.given,
            "{command} reads whole logs, with no live lines to learn the offset from: --log-timezone auto reads this log's times in the agent's own zone ({})\n  fix: pass the engine's zone, e.g. --log-timezone UTC",
            crate::timezone::LogZone::local().name()
        );
    }
}

/// Whether a one-shot input can be read: a file that opens, or a glob with a match.
pub(crate) fn check_readable(spec: &LogSpec, given: &str) -> anyhow::Result<()> {
    match spec {
        LogSpec::Stdin => Ok(()),
        LogSpec::Path(path) => std::fs::File::open(path).map(drop).map_err(|e| {
            let fix = match e.kind() {
                std::io::ErrorKind::NotFound => {
                    "check the path (a log that appears later is only waited for when serving)"
                }
                std::io::ErrorKind::PermissionDenied => {
                    "run as a user that may read it (its group, an ACL: setfacl -m u:$USER:r FILE)"
                }
                _ => "check the file",
            };
            anyhow::anyhow!("cannot read --log {given}: {e}\n  fix: {fix}")
        }),
        LogSpec::Glob(pattern) => {
            let matched = crate::source::glob_paths(pattern)
                .iter()
                .any(|p| p.is_file());
            anyhow::ensure!(
                matched,
                "--log {given} matches no file\n  fix: check the pattern (quoted, so the shell does not expand it) and the directory"
            );
            Ok(())
        }
    }
}

/// Follows the logs and serves the metrics until SIGTERM or SIGINT.
pub fn serve(settings: &Settings) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(2)
        .build()
        .context("cannot start the async runtime")
        .at_startup()?;
    runtime.block_on(async {
        let address = settings.listen_address;
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|e| cannot_listen(address, &e))
            .at_startup()?;
        serve_on(settings, listener, Clock::system(), shutdown_signal()).await
    })
}

/// Why the agent cannot listen on `address`, and what to do.
fn cannot_listen(address: std::net::SocketAddr, error: &std::io::Error) -> anyhow::Error {
    let port = address.port();
    let fix = match error.kind() {
        std::io::ErrorKind::AddrInUse => format!(
            "another process listens on port {port} (`ss -ltnp 'sport = :{port}'` names it): \
             stop it, or give llmtail another port, e.g. --web.listen-address {}:{}",
            address.ip(),
            port.wrapping_add(1).max(1024)
        ),
        std::io::ErrorKind::PermissionDenied => format!(
            "a port below 1024 takes CAP_NET_BIND_SERVICE: use a port above 1023, e.g. \
             --web.listen-address {}:3913",
            address.ip()
        ),
        std::io::ErrorKind::AddrNotAvailable => format!(
            "{} is not an address of this host: e.g. --web.listen-address 127.0.0.1:{port}, or \
             :{port} for every interface",
            address.ip()
        ),
        _ => "check --web.listen-address (or [web] listen_address)".to_string(),
    };
    anyhow::anyhow!("cannot listen on {address} (--web.listen-address): {error}\n  fix: {fix}")
}

/// Follows the logs and serves on `listener` until `shutdown` completes. Tests call this
/// with a `127.0.0.1:0` listener and their own shutdown.
pub async fn serve_on(
    settings: &Settings,
    listener: tokio::net::TcpListener,
    clock: Clock,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    serve::raise_descriptor_limit();
    // Before the state file is read, and held until the reader has saved it for the last time
    // (it is joined below): an agent sharing the file would overwrite this one's counters.
    let _state_file_lock = settings
        .state_file
        .as_deref()
        .map(StateFileLock::acquire)
        .transpose()?;
    let state = new_state(settings);
    state
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .config_reload = Some(ConfigReload::loaded_at(clock.now()));
    let (reconfigure, reconfigurations) = std::sync::mpsc::channel();
    let pipeline = Pipeline::new(settings, state.clone(), clock.clone())
        .reading(Reading::Following)
        .with_reconfigurations(reconfigurations);
    let (stopper, follower) = follow_logs(settings, pipeline)?;

    let live = LiveSettings::new(settings.clone());
    let reload_requests = start_reloads(Reloader {
        live: live.clone(),
        pipeline: reconfigure,
        reader: stopper.clone(),
        state: Arc::clone(&state),
        clock: clock.clone(),
    });
    let quit = Arc::new(tokio::sync::Notify::new());
    let lifecycle = settings.enable_lifecycle.then(|| Lifecycle {
        reload: reload_requests,
        quit: Arc::clone(&quit),
    });
    let (sources, pusher) = start_pushes(settings, &state, &clock, &live);
    let shared = Shared {
        state,
        telemetry_path: Arc::from(settings.telemetry_path.as_str()),
        settings: Arc::new(move || crate::settings_shown::settings_shown(&live.get())),
        clock,
        snapshots: Arc::default(),
        lifecycle,
        sources,
    };
    say_where_metrics_are_served(settings, &listener);
    let options = ServeOptions {
        max_connections: settings.max_connections,
        ..ServeOptions::default()
    };
    let shutdown = async move {
        tokio::select! {
            () = shutdown => {}
            () = quit.notified() => tracing::info!("POST /-/quit: shutting down"),
        }
    };
    let web = Arc::clone(&settings.web_config);
    let served = serve::serve(listener, exposition::app(shared), web, shutdown, options).await;
    stop_following(stopper, follower);
    // After the reader: the last push holds every line read.
    if let Some(pusher) = pusher {
        pusher.stop().await;
    }
    tracing::info!("stopped");
    served.context("the HTTP server failed")
}

/// The start-up line that says where metrics are served (tests read the bound address from it).
fn say_where_metrics_are_served(settings: &Settings, listener: &tokio::net::TcpListener) {
    let address = listener.local_addr().unwrap_or(settings.listen_address);
    let (tls, basic_auth) = (
        settings.web_config.is_tls(),
        !settings.web_config.current().users.is_empty(),
    );
    tracing::info!(%address, path = %settings.telemetry_path, tls, basic_auth, "serving metrics");
}

/// Stops the reader and waits for its thread, which saves the state file (if any) a last time.
fn stop_following(stopper: Stopper, follower: std::thread::JoinHandle<()>) {
    stopper.stop();
    if follower.join().is_err() {
        tracing::error!("the reader thread panicked");
    }
}

/// Serves reloads (SIGHUP, and `POST /-/reload` through the returned sender) on a task of
/// their own, one at a time.
fn start_reloads(reloader: Reloader) -> tokio::sync::mpsc::Sender<ReloadRequest> {
    let (reload_requests, reloads) = tokio::sync::mpsc::channel(4);
    tokio::spawn(reloader.serve(reloads));
    reload_on_hangup(reload_requests.clone());
    reload_requests
}

/// Starts pushing to the remote_write receivers, if any: the sources beside the state that
/// scrapes, pushes and the landing page read alike (the queues' own series), and the pusher
/// to stop after the reader.
fn start_pushes(
    settings: &Settings,
    state: &Arc<std::sync::Mutex<crate::state::State>>,
    clock: &Clock,
    live: &LiveSettings,
) -> (SharedSources, Option<crate::remote_write::Pusher>) {
    let queues = crate::remote_write::queues(&settings.remote_write);
    let sources: SharedSources = Arc::from([
        Arc::new(QueueSeries(Arc::clone(&queues))) as Arc<dyn SampleSource + Send + Sync>
    ]);
    let labels_in_force = live.clone();
    let pusher = crate::remote_write::Pusher::start(
        &settings.remote_write,
        crate::remote_write::Sources {
            state: Arc::clone(state),
            clock: clock.clone(),
            external_labels: Arc::new(move || labels_in_force.get().labels.clone()),
            queues,
            sources: Arc::clone(&sources),
        },
    );
    (sources, pusher)
}

/// Follows the logs on a thread of their own, going on from the state file if there is one
/// and saving to it: the reader's stopper and the thread, to join once stopped.
fn follow_logs(
    settings: &Settings,
    pipeline: Pipeline,
) -> anyhow::Result<(Stopper, std::thread::JoinHandle<()>)> {
    // A state file we cannot use is no reason not to start: the logs rebuild the state.
    let restored = settings
        .state_file
        .as_deref()
        .and_then(|path| match Checkpoint::load(path) {
            Ok(restored) => restored,
            Err(e) => {
                tracing::warn!("{e}");
                None
            }
        });
    let reader = reader(settings, restored.as_ref())?;
    let stopper = reader.stopper();
    let service = ServiceManager::from_environment();
    let follower = match &settings.state_file {
        Some(path) => {
            if let Some(checkpoint) = &restored {
                tracing::info!(path = %path.display(), logs = checkpoint.logs.len(), files = checkpoint.files.len(), "resuming from the state file");
            }
            let known = reader.known_files();
            let pipeline = pipeline.restoring(restored);
            let sink = Checkpointing::new(pipeline, path.clone(), known);
            spawn_reader(reader, Notifying::new(sink, service))
        }
        None => spawn_reader(reader, Notifying::new(pipeline, service)),
    }?;
    Ok((stopper, follower))
}

/// Runs `reader` into `sink` on the reader's thread.
fn spawn_reader(
    reader: Reader,
    mut sink: impl Sink + 'static,
) -> anyhow::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("llmtail-reader".into())
        .spawn(move || reader.follow(&mut sink))
        .context("cannot start the reader thread")
        .at_startup()
}

/// Completes on SIGTERM (systemd stop) or SIGINT (Ctrl-C).
pub async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(signal) => signal,
                Err(e) => {
                    tracing::warn!("cannot listen for SIGTERM: {e}");
                    let _ = interrupt.await;
                    return;
                }
            };
        tokio::select! {
            _ = interrupt => tracing::info!("SIGINT: shutting down"),
            _ = terminate.recv() => tracing::info!("SIGTERM: shutting down"),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}
