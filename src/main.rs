//! The `llmtail` binary: flags in, exit code out. Everything else is the library.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;
use llmtail::cli::{Cli, Command, ReplayArgs};
use llmtail::clock::Clock;
use llmtail::config::Settings;
use llmtail::run::StartupError;
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
        // A log line that cannot be written (stderr piped to a `head` that has exited) is
        // dropped: reporting it would write to stderr again, and panic.
        .log_internal_errors(false)
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
        // The reader of the output (`| head`) has what it wanted: stop quietly, as `cat` does.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        // Another agent's state file, a port taken: start-up errors, as a bad flag is: the fix
        // is in the command line or on the host, and a supervisor should not try again.
        Err(e) if e.is::<StateFileLockError>() || e.is::<StartupError>() => {
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
/// (a log named with `\x1b[2J` would clear the terminal). A stderr that is closed (piped to a
/// `head` that has exited) takes nothing, and that is no reason to panic as `eprintln!` does.
fn say(text: &str) {
    let text = llmtail::printable::escape_controls_but_newlines(text);
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// The error is a write to a pipe whose reader has gone.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
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
            Some(path) => llmtail::backfill::out::replay_to_file(
                &settings,
                window,
                Clock::system(),
                path,
                progress,
            ),
        });
    match result {
        Ok(summary) => {
            say(&summary.to_string());
            ExitCode::SUCCESS
        }
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            say(&format!("llmtail: {e:#}"));
            ExitCode::from(1)
        }
    }
}
