//! `docs/REFERENCE.md`, written from the code: every flag (from the clap definition), every
//! config key (from the config file's own serde types), every series (the engines' tables and
//! the agent's catalog) and every format read (the engines' registry and the fixtures that
//! show each one). The page is a golden: the test below fails when the code and the page
//! disagree, and `LLMTAIL_BLESS=1 cargo test -p llmtail --lib reference` rewrites it.
//!
//! What no type knows, a config key's meaning, is kept here by hand, and the test checks that
//! list against the keys the parser accepts, so a key cannot be added or dropped unseen.

use std::fmt::Write;

use clap::CommandFactory;
use serde::de::{self, Deserializer, Visitor};

use crate::engines::{for_each_engine, EngineVisitor, Registered};

/// What each config file key holds, as the file is written: `(key, value, meaning)`. A key
/// under a table is `table.key` (`log.path` is `path` in a `[[log]]` entry).
const CONFIG_KEYS: &[(&str, &str, &str)] = &[
    ("from", "`\"start\"` or `\"end\"`", "as `--from`"),
    ("model_name", "string", "as `--model-name`"),
    (
        "vllm_stats_interval",
        "seconds or `\"auto\"`",
        "as `--vllm-stats-interval`",
    ),
    ("vllm_version", "string", "as `--vllm-version`"),
    (
        "envelope",
        "`\"auto\"`, `\"plain\"`, `\"docker\"`, `\"cri\"`, `\"json\"`, `\"journald\"`",
        "as `--envelope`",
    ),
    (
        "log_timezone",
        "IANA zone, `\"UTC\"` or `\"auto\"`",
        "as `--log-timezone`",
    ),
    ("max_line_bytes", "integer", "as `--max-line-bytes`"),
    ("max_series", "integer", "as `--max-series`"),
    ("log_expiry", "duration (`\"10m\"`)", "as `--log-expiry`"),
    ("state_file", "path", "as `--state-file`"),
    (
        "path_labels",
        "`\"kubernetes\"` or a regex",
        "as `--path-labels`",
    ),
    (
        "labels",
        "table of strings",
        "as `--label`, one key per label: on every engine series",
    ),
    (
        "remote_write_interval",
        "duration (`\"15s\"`)",
        "as `--remote-write.interval`",
    ),
    ("web", "table", "`[web]`: where and how to serve"),
    (
        "web.listen_address",
        "`\"HOST:PORT\"`",
        "as `--web.listen-address`",
    ),
    (
        "web.max_connections",
        "integer",
        "as `--web.max-connections`",
    ),
    ("web.telemetry_path", "string", "as `--web.telemetry-path`"),
    ("web.config_file", "path", "as `--web.config.file`"),
    (
        "log",
        "array of tables",
        "`[[log]]`: one log to follow, with its own settings; followed besides the `--log`s",
    ),
    (
        "log.path",
        "path or glob",
        "the log (required), as a `--log`",
    ),
    (
        "log.envelope",
        "as `envelope`",
        "this log's envelope; wins over the global one",
    ),
    (
        "log.model_name",
        "string",
        "this log's `model_name` label; wins over the global one",
    ),
    (
        "log.vllm_version",
        "string",
        "the vLLM that wrote this log; wins over the global one",
    ),
    (
        "log.timezone",
        "as `log_timezone`",
        "the zone of this log's zoneless times; wins over the global one",
    ),
    (
        "log.log_timezone",
        "as `log_timezone`",
        "another name for the entry's `timezone`",
    ),
    (
        "log.path_labels",
        "as `path_labels`",
        "labels from this log's paths; wins over the global one",
    ),
    (
        "log.labels",
        "table of strings",
        "labels on this log's series only; win over `[labels]`",
    ),
    (
        "log.vllm",
        "table",
        "`[log.vllm]`: this entry's vLLM settings",
    ),
    (
        "log.vllm.version",
        "string",
        "as the entry's `vllm_version`",
    ),
    (
        "remote_write",
        "array of tables",
        "`[[remote_write]]`: one receiver to push to, as Prometheus' `remote_write`",
    ),
    (
        "remote_write.url",
        "`http` or `https` URL",
        "the receiver (required), as a `--remote-write.url`",
    ),
    (
        "remote_write.basic_auth",
        "table",
        "HTTP basic auth (not with a bearer token)",
    ),
    (
        "remote_write.basic_auth.username",
        "string",
        "the user name",
    ),
    (
        "remote_write.basic_auth.password",
        "string",
        "the password, inline",
    ),
    (
        "remote_write.basic_auth.password_file",
        "path",
        "a file holding the password",
    ),
    (
        "remote_write.bearer_token",
        "string",
        "an `Authorization: Bearer` token, inline",
    ),
    (
        "remote_write.bearer_token_file",
        "path",
        "a file holding the token",
    ),
    (
        "remote_write.tls_config",
        "table",
        "how to verify the receiver, and the client certificate",
    ),
    (
        "remote_write.tls_config.ca_file",
        "path",
        "the CA to verify the receiver with (default: the system's CAs)",
    ),
    (
        "remote_write.tls_config.cert_file",
        "path",
        "a client certificate (with `key_file`)",
    ),
    (
        "remote_write.tls_config.key_file",
        "path",
        "the client certificate's key",
    ),
    (
        "remote_write.tls_config.insecure_skip_verify",
        "boolean",
        "do not verify the receiver's certificate",
    ),
    (
        "remote_write.tls_config.server_name",
        "string",
        "the name to verify the receiver's certificate against",
    ),
    (
        "remote_write.headers",
        "table of strings",
        "more headers on every push (Mimir's tenant, `X-Scope-OrgID`)",
    ),
];

/// The keys the config file's parser takes, table by table, as its serde types name them.
fn parsed_config_keys() -> Vec<String> {
    use crate::remote_write::settings::{BasicAuth, Entry, TlsConfig};
    let tables = [
        ("", fields_of::<crate::config::ConfigFile>()),
        (
            "web.",
            fields_of::<crate::exposition::web_settings::WebSection>(),
        ),
        ("log.", fields_of::<crate::log_settings::LogEntry>()),
        ("log.vllm.", fields_of::<crate::log_settings::VllmTable>()),
        ("remote_write.", fields_of::<Entry>()),
        ("remote_write.basic_auth.", fields_of::<BasicAuth>()),
        ("remote_write.tls_config.", fields_of::<TlsConfig>()),
    ];
    let keys = tables
        .iter()
        .flat_map(|(table, fields)| fields.iter().map(move |f| format!("{table}{f}")));
    keys.collect()
}

/// The field names a derived `Deserialize` asks for: the struct's keys, as its parser takes them.
fn fields_of<T: de::DeserializeOwned>() -> &'static [&'static str] {
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(FieldsOf(&mut fields));
    fields
}

/// A deserializer that only notes the fields a struct asks for, then gives up.
struct FieldsOf<'a>(&'a mut &'static [&'static str]);

impl<'de> Deserializer<'de> for FieldsOf<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = fields;
        Err(de::Error::custom("fields noted"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// The whole page.
pub fn reference_page() -> String {
    let mut page = String::from(HEAD);
    page.push_str("\n## Flags\n\n`llmtail [FLAGS]` follows the logs and serves them:\n\n");
    page.push_str(&flags_table(&crate::cli::Cli::command()));
    let cli = crate::cli::Cli::command();
    let replay = cli
        .find_subcommand("replay")
        .expect("the replay subcommand");
    page.push_str(
        "\n`llmtail replay [FLAGS]` writes a log's history for Prometheus instead \
         ([the guide](GUIDE.md#last-weeks-incident)):\n\n",
    );
    page.push_str(&flags_table(replay));
    page.push_str(CONFIG_HEAD);
    page.push_str(&config_table());
    page.push_str("\n## Series\n\n");
    page.push_str(SERIES_HEAD);
    page.push_str(&crate::engines::families::markdown_table());
    page.push_str(FORMATS_HEAD);
    page.push_str(&formats_table());
    page
}

const HEAD: &str = "# Reference

Every flag, config key, series and format of llmtail, written from the code by
`src/reference.rs`: `cargo test -p llmtail --lib reference` fails when this page and the code
disagree, and `LLMTAIL_BLESS=1 cargo test -p llmtail --lib reference` rewrites it. How to use
them is in the [guide](GUIDE.md); what the series can and cannot tell, in the [FAQ](FAQ.md).

- [Flags](#flags)
- [Config file keys](#config-file-keys)
- [Series](#series)
- [Formats and versions](#formats-and-versions)
";

const CONFIG_HEAD: &str = "
## Config file keys

`llmtail --config FILE` reads a TOML file; a flag wins over the key that says the same. An
unknown key is an error (exit code 2), never ignored. An example with every key:
[the guide's Config file section](GUIDE.md#config-file).

";

const SERIES_HEAD: &str = "Names are the engines' own wherever their exporters mean the same; \
the rest start with `llmtail_`. What the labels mean: [the guide's Metrics \
section](GUIDE.md#metrics).\n\n";

const FORMATS_HEAD: &str = "
## Formats and versions

Each engine llmtail reads, the records its grammar names (the `grammar` label of
`llmtail_lines_parsed_total`), the line cases that pin its formats (`fixtures/cases/`, each
line with its source and the versions that print it) and the whole logs replayed against a
golden (`fixtures/replay/<engine>-<version>-<case>.log`). Which versions print which lines:
[the FAQ's table](FAQ.md#formats-covered).

";

/// One row per flag: its name and value, its default and its help, as `--help` has them.
fn flags_table(command: &clap::Command) -> String {
    let mut out = String::from("| flag | default | meaning |\n|---|---|---|\n");
    for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
        let Some(long) = arg.get_long() else { continue };
        let help = arg
            .get_long_help()
            .or(arg.get_help())
            .map(|h| h.to_string())
            .unwrap_or_default();
        let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
        let (help, default) = match help.rsplit_once(" [default: ") {
            Some((help, default)) => (help.to_string(), default.trim_end_matches(']').to_string()),
            None => (help, String::new()),
        };
        let value = arg
            .get_value_names()
            .filter(|_| arg.get_action().takes_values())
            .map(|names| format!(" {}", names.join(" ")))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            cell(&format!("`--{long}{value}`")),
            cell(&default),
            cell(&help)
        );
    }
    out
}

/// Every config key with its value and meaning.
fn config_table() -> String {
    let mut out = String::from("| key | value | meaning |\n|---|---|---|\n");
    for (key, value, meaning) in CONFIG_KEYS {
        let _ = writeln!(out, "| `{key}` | {value} | {meaning} |");
    }
    out
}

/// One row per engine of the registry: its records, line cases and replayed logs.
fn formats_table() -> String {
    struct Rows(String);
    impl EngineVisitor for Rows {
        fn visit<E: Registered>(&mut self) {
            let grammar = llmtail_grammars::ENGINES
                .iter()
                .find(|g| g.engine == E::NAME);
            let names = grammar.expect("every engine has a grammar").grammar_names;
            let grammars = names.iter().map(|g| format!("`{g}`"));
            let cases = fixture_names("fixtures/cases", E::NAME, ".toml");
            let logs = fixture_names("fixtures/replay", E::NAME, ".log");
            let _ = writeln!(
                self.0,
                "| {} (`{}`) | {} | {} | {} |",
                E::DISPLAY_NAME,
                E::NAME,
                grammars.collect::<Vec<_>>().join(", "),
                cases.join(", "),
                logs.join(", ")
            );
        }
    }
    let mut rows = Rows(String::from(
        "| engine | records | line cases | replayed logs |\n|---|---|---|---|\n",
    ));
    for_each_engine(&mut rows);
    rows.0
}

/// The fixtures of an engine in `dir`, by name without `suffix`: `<engine>-....`.
fn fixture_names(dir: &str, engine: &str, suffix: &str) -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut names: Vec<String> = entries
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!("{engine}-")) && n.ends_with(suffix))
        .map(|n| format!("`{}`", n.trim_end_matches(suffix)))
        .collect();
    names.sort();
    names
}

/// Text fit for a table cell: no line break, no column break.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key the parser takes has a meaning here, and every meaning here is of a key the
    /// parser takes.
    #[test]
    fn every_config_key_the_parser_takes_is_described_and_no_other() {
        let parsed = parsed_config_keys();
        assert!(
            parsed.len() > 20,
            "the parser's keys were not read: {parsed:?}"
        );
        let described: Vec<&str> = CONFIG_KEYS.iter().map(|(key, ..)| *key).collect();
        for key in &parsed {
            assert!(
                described.contains(&key.as_str()),
                "config key {key} has no row in CONFIG_KEYS"
            );
        }
        for key in described {
            assert!(
                parsed.iter().any(|k| k == key),
                "CONFIG_KEYS describes {key}, which the parser refuses"
            );
        }
    }

    /// `docs/REFERENCE.md` is this module's page. `LLMTAIL_BLESS=1` rewrites it.
    #[test]
    fn the_reference_page_is_written_from_the_code() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/REFERENCE.md");
        let page = reference_page();
        if std::env::var_os("LLMTAIL_BLESS").is_some_and(|v| v == "1") {
            std::fs::write(path, &page).unwrap();
            return;
        }
        let written = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            written == page,
            "docs/REFERENCE.md is stale: run LLMTAIL_BLESS=1 cargo test -p llmtail --lib reference"
        );
    }
}
