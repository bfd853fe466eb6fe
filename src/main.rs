//! The `llmtail` binary: flags in, exit code out. Everything else is the library.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use llmtail::cli::Cli;
use llmtail::config::Settings;
use llmtail::pipeline::Clock;

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("LLMTAIL_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let settings = match Settings::from_cli(cli) {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!("llmtail: {e}");
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
        Err(e) => {
            eprintln!("llmtail: {e:#}");
            ExitCode::from(1)
        }
    }
}
