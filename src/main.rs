//! The `llmtail` binary: flags in, exit code out. Everything else is the library.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use llmtail::backfill::args::ReplayArgs;
use llmtail::cli::{Cli, Command};
use llmtail::config::Settings;
use llmtail::pipeline::Clock;
use llmtail::state_file_lock::StateFileLockError;

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("LLMTAIL_LOG")
                // A replay's summary is its report; the reader's info lines would bury it.
                .unwrap_or_else(|_| match cli.command {
                    Some(Command::Replay(_)) => "warn".into(),
                    None => "info".into(),
                }),
        )
        .with_target(false)
        .fmt_fields(llmtail::printable::log_fields())
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    if let Some(Command::Replay(args)) = &cli.command {
        return replay(args);
    }
    let settings = match Settings::from_cli(cli) {
        Ok(settings) => settings,
        Err(e) => {
            say(&format!("llmtail: {e}"));
            return ExitCode::from(2);
        }
    };
    let result = if settings.one_shot {
        llmtail::run::one_shot(&settings, Clock::system(), &mut std::io::stdout().lock())
    } else {
        llmtail::run::serve(&settings)
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // Another agent's state file is a start-up error, as a bad flag is: the fix is in the
        // command line, and a supervisor that restarts on failure should not try again.
        Err(e) if e.is::<StateFileLockError>() => {
            say(&format!("llmtail: {e}"));
            ExitCode::from(2)
        }
        Err(e) => {
            say(&format!("llmtail: {e:#}"));
            ExitCode::from(1)
        }
    }
}

/// Writes `text` on stderr, with the control characters of the file names it quotes escaped
/// (a log named with `\x1b[2J` would clear the terminal).
fn say(text: &str) {
    eprintln!("{}", llmtail::printable::escape_controls_but_newlines(text));
}

/// `llmtail replay`: the logs' history as OpenMetrics text, a summary on stderr.
fn replay(args: &ReplayArgs) -> ExitCode {
    let (settings, window) = match args.settings().and_then(|s| {
        let window = args.window(&s.log_timezone)?;
        Ok((s, window))
    }) {
        Ok(checked) => checked,
        Err(e) => {
            say(&format!("llmtail: {e}"));
            return ExitCode::from(2);
        }
    };
    let progress = std::io::stderr().is_terminal();
    // Before --out is created: an unreadable log leaves no empty history behind.
    let result =
        llmtail::backfill::check_inputs(&settings).and_then(|()| match args.out.as_deref() {
            None | Some("-") => {
                let mut out = std::io::BufWriter::new(std::io::stdout().lock());
                llmtail::backfill::replay(&settings, window, Clock::system(), &mut out, progress)
            }
            Some(path) => replay_to_file(&settings, window, path, progress),
        });
    match result {
        Ok(summary) => {
            say(&summary.to_string());
            ExitCode::SUCCESS
        }
        Err(e) => {
            say(&format!("llmtail: {e:#}"));
            ExitCode::from(1)
        }
    }
}

/// Replays into `path` through a file beside it, renamed over `path` once complete: an
/// interrupted or failed replay leaves no half history (promtool would refuse it, or worse,
/// an older complete one would be lost). A `path` that is there and is not a regular file (a
/// device such as `/dev/null`, a FIFO, a symlink) is written as it is: renamed over, it would
/// be replaced by a file.
fn replay_to_file(
    settings: &Settings,
    window: llmtail::backfill::args::Window,
    path: &str,
    progress: bool,
) -> anyhow::Result<llmtail::backfill::Summary> {
    let cannot = |e: std::io::Error| {
        anyhow::anyhow!(
            "cannot write --out {path}: {e}\n  fix: check the directory exists and may be written"
        )
    };
    let special = std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_file());
    if special {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(cannot)?;
        let mut out = std::io::BufWriter::new(file);
        return llmtail::backfill::replay(settings, window, Clock::system(), &mut out, progress);
    }
    let partial = format!("{path}.partial");
    let file = std::fs::File::create(&partial).map_err(cannot)?;
    let mut out = std::io::BufWriter::new(file);
    let replayed = llmtail::backfill::replay(settings, window, Clock::system(), &mut out, progress)
        .and_then(|summary| {
            let file = out.into_inner().map_err(|e| cannot(e.into_error()))?;
            file.sync_all().map_err(cannot)?;
            std::fs::rename(&partial, path).map_err(cannot)?;
            Ok(summary)
        });
    if replayed.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    replayed
}
