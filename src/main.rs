//! The `llmtail` binary: flags in, exit code out. Everything else is the library.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use llmtail::cli::{Cli, Command, ReplayArgs};
use llmtail::clock::Clock;
use llmtail::config::Settings;
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
        Err(e) => {
            say(&format!("llmtail: {e:#}"));
            ExitCode::from(1)
        }
    }
}
