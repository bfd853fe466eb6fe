//! What the Debian package ships (`[package.metadata.deb]` in Cargo.toml) stays true to the
//! program: the man page is the clap definition's, the config file loads, and the unit, the
//! config and the package name the same paths. `packaging/deb-check.sh` builds and installs
//! the package itself.

use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser};
use llmtail::cli::Cli;
use llmtail::config::Settings;

fn packaging(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("packaging")
        .join(file)
}

/// The packaged man pages are generated from the clap definition, so they say what
/// `--help` says: `llmtail.1` and one page per subcommand (`llmtail-replay.1`, which
/// `llmtail.1` names). A flag or help text changed without regenerating them fails here.
#[test]
fn the_man_page_is_generated_from_the_clap_definition() {
    let dir = tempfile::tempdir().unwrap();
    clap_mangen::generate_to(Cli::command(), dir.path()).unwrap();
    let generated = std::fs::read_to_string(dir.path().join("llmtail.1")).unwrap();
    // `--help`'s text after the flags, which an operator looks for in the page too.
    for expected in [
        "/\\-/ready",
        "Exit codes",
        "LLMTAIL_LOG",
        "\\-\\-web.listen\\-address",
        "llmtail\\-replay(1)",
    ] {
        assert!(
            generated.contains(expected),
            "the man page lacks {expected:?}:\n{generated}"
        );
    }
    let mut pages: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    pages.sort();
    assert_eq!(pages, ["llmtail-replay.1", "llmtail.1"]);
    for page in pages {
        let generated = std::fs::read_to_string(dir.path().join(&page)).unwrap();
        let path = packaging(&page);
        if std::env::var_os("LLMTAIL_BLESS").is_some_and(|v| v == "1") {
            std::fs::write(&path, &generated).unwrap();
            continue;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "{} is not what the clap definition generates: refresh it with\n  \
             LLMTAIL_BLESS=1 cargo test --test integration man_page\nand commit it. {}",
            path.display(),
            first_difference(&committed, &generated)
        );
    }
}

/// Where two texts first differ, as a line of each.
fn first_difference(committed: &str, generated: &str) -> String {
    let mut committed_lines = committed.lines();
    let mut generated_lines = generated.lines();
    for line in 1.. {
        match (committed_lines.next(), generated_lines.next()) {
            (None, None) => break,
            (a, b) if a == b => continue,
            (a, b) => {
                return format!(
                    "First difference, line {line}:\n  committed: {}\n  generated: {}",
                    a.unwrap_or("(end of file)"),
                    b.unwrap_or("(end of file)")
                )
            }
        }
    }
    String::new()
}

/// The config file the package installs in /etc loads through the real parser as
/// shipped, binds only this host, and keeps its state in the unit's StateDirectory.
#[test]
fn the_packaged_config_file_loads_as_shipped() {
    let config = packaging("llmtail.toml");
    let argv = ["llmtail", "--config", config.to_str().unwrap()];
    let settings = Settings::from_cli(Cli::try_parse_from(argv).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", config.display()));
    let logs: Vec<&str> = settings.logs.iter().map(|l| l.given.as_str()).collect();
    assert_eq!(logs, ["/var/log/vllm.log"]);
    assert_eq!(settings.listen_address.to_string(), "127.0.0.1:3913");

    let unit = std::fs::read_to_string(packaging("llmtail.service")).unwrap();
    let state_directory = unit_setting(&unit, "StateDirectory");
    assert_eq!(
        settings.state_file.as_deref(),
        Some(Path::new(&format!("/var/lib/{state_directory}/state.json"))),
        "the state file must be in the unit's StateDirectory, the one place it may write"
    );
}

/// The unit starts the binary where the package installs it, with the config file
/// where the package installs that.
#[test]
fn the_unit_runs_the_packaged_binary_with_the_packaged_config() {
    let manifest: toml::Table =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
            .unwrap()
            .parse()
            .unwrap();
    let assets = manifest["package"]["metadata"]["deb"]["assets"]
        .as_array()
        .unwrap();
    let destination = |source: &str| -> String {
        let asset = assets
            .iter()
            .find(|a| a[0].as_str() == Some(source))
            .unwrap_or_else(|| panic!("no asset {source} in [package.metadata.deb]"));
        let dest = asset[1].as_str().unwrap();
        let file = Path::new(source).file_name().unwrap().to_str().unwrap();
        match dest.strip_suffix('/') {
            Some(dir) => format!("/{dir}/{file}"),
            None => format!("/{dest}"),
        }
    };
    let unit = std::fs::read_to_string(packaging("llmtail.service")).unwrap();
    assert_eq!(
        unit_setting(&unit, "ExecStart"),
        format!(
            "{} --config {}",
            destination("target/release/llmtail"),
            destination("packaging/llmtail.toml")
        )
    );
}

/// The packaged service could not read a `0640 root:adm` log, Debian's usual mode under
/// /var/log, without a hand edit: its group set must include `adm`.
#[test]
fn the_unit_reads_logs_of_the_adm_group() {
    let unit = std::fs::read_to_string(packaging("llmtail.service")).unwrap();
    let groups = unit_setting(&unit, "SupplementaryGroups");
    assert!(
        groups.split_whitespace().any(|g| g == "adm"),
        "SupplementaryGroups={groups}"
    );
}

/// The value of a `Key=` line in a unit file (the first one).
fn unit_setting<'a>(unit: &'a str, key: &str) -> &'a str {
    unit.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("no {key}= in the unit"))
}
