//! Where to push, and how: `--remote-write.url` and the config file's `[[remote_write]]`
//! entries, checked at start-up. The keys are Prometheus' own `remote_write` names (`url`,
//! `basic_auth`, `bearer_token`, `tls_config`, ...), so a block written for Prometheus or
//! Grafana Alloy reads the same here.
//!
//! Every file named (password, token, CA, certificate, key) is read at start-up, so a path
//! that cannot be read stops start-up with a message naming the key and the fix, rather than
//! failing each push later.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use hyper::header::{HeaderName, HeaderValue};
use hyper::Uri;
use rustls_pki_types::ServerName;
use serde::Deserialize;

use crate::bounded_read::{read_regular_text, SMALL_FILE_LIMIT};
use crate::config_error::ConfigError;
use crate::tls::client::{self, ClientTls};
use crate::tls::TlsError;

/// `--remote-write.interval`'s default, the issue's: the scrape interval of Prometheus' example
/// configuration (its built-in default is 1m), so a push holds what a typical scrape would.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(15);

/// One `[[remote_write]]` entry, as written.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub url: String,
    pub basic_auth: Option<BasicAuth>,
    pub bearer_token: Option<String>,
    pub bearer_token_file: Option<PathBuf>,
    pub tls_config: Option<TlsConfig>,
    /// More headers on every push, as Prometheus' `headers`: e.g. Mimir's or Cortex's tenant,
    /// `X-Scope-OrgID`.
    #[serde(default)]
    pub headers: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BasicAuth {
    pub username: String,
    pub password: Option<String>,
    pub password_file: Option<PathBuf>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TlsConfig {
    pub ca_file: Option<PathBuf>,
    pub cert_file: Option<PathBuf>,
    pub key_file: Option<PathBuf>,
    #[serde(default)]
    pub insecure_skip_verify: bool,
    pub server_name: Option<String>,
}

/// A receiver, checked and ready to connect to.
#[derive(Clone)]
pub struct Target {
    /// As written (for reload comparisons).
    pub entry: Entry,
    pub uri: Uri,
    /// The `url` label of its counters, and how logs name it.
    pub url: String,
    /// The `Authorization` header, if any.
    pub authorization: Option<String>,
    /// Set for https.
    pub tls: Option<Tls>,
    /// The entry's `headers`, checked.
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

/// How to speak TLS to one receiver.
#[derive(Clone, Debug)]
pub struct Tls {
    pub config: Arc<rustls::ClientConfig>,
    pub server_name: ServerName<'static>,
}

impl PartialEq for Target {
    fn eq(&self, other: &Target) -> bool {
        self.entry == other.entry && self.authorization == other.authorization
    }
}

/// Without secrets: settings are logged at debug level.
impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("url", &self.url)
            .field(
                "authorization",
                &self.authorization.as_ref().map(|_| "<secret>"),
            )
            .field("tls", &self.tls.is_some())
            .finish()
    }
}

/// Where and how often to push.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteWrite {
    pub targets: Vec<Target>,
    pub interval: Duration,
}

impl RemoteWrite {
    /// The receivers' URLs, in the order they were given.
    pub fn urls(&self) -> Vec<&str> {
        self.targets.iter().map(|t| t.url.as_str()).collect()
    }

    /// From the flags (`--remote-write.url`s, `--remote-write.interval`) and the config file
    /// (`[[remote_write]]` entries, `remote_write_interval`); the flag's interval wins.
    pub fn read(
        (urls, interval_flag): (&[String], Option<&str>),
        (entries, interval_key): (&[Entry], Option<&str>),
        config_origin: &str,
    ) -> Result<RemoteWrite, ConfigError> {
        let interval = match (interval_flag, interval_key) {
            (Some(text), _) => interval(Some(text), "--remote-write.interval")?,
            (None, key) => interval(key, &format!("{config_origin}, remote_write_interval"))?,
        };
        Ok(RemoteWrite {
            targets: targets(urls, entries, config_origin)?,
            interval,
        })
    }
}

/// The receivers: the config file's entries, then each `--remote-write.url` not among them.
pub fn targets(
    flags: &[String],
    entries: &[Entry],
    config_origin: &str,
) -> Result<Vec<Target>, ConfigError> {
    let mut targets: Vec<Target> = Vec::new();
    for entry in entries {
        let origin = format!("{config_origin}, [[remote_write]] url {:?}", entry.url);
        // The url names its queue's series: two queues under one name would be one series
        // written twice, which Prometheus rejects with the whole scrape.
        if targets.iter().any(|t| t.url == entry.url) {
            return Err(ConfigError(format!(
                "{origin}: the same url twice\n  fix: one [[remote_write]] entry per receiver"
            )));
        }
        targets.push(target(entry, &origin)?);
    }
    for url in flags {
        if targets.iter().any(|t| t.entry.url == *url) {
            continue;
        }
        let entry = Entry {
            url: url.clone(),
            ..Entry::default()
        };
        targets.push(target(&entry, "--remote-write.url")?);
    }
    Ok(targets)
}

/// `--remote-write.interval`: a duration of at least a second.
pub fn interval(text: Option<&str>, origin: &str) -> Result<Duration, ConfigError> {
    let Some(text) = text else {
        return Ok(DEFAULT_INTERVAL);
    };
    let parsed = match text.trim().parse::<u64>() {
        Ok(seconds) => Ok(Duration::from_secs(seconds)),
        Err(_) => text
            .parse::<jiff::SignedDuration>()
            .map_err(|e| e.to_string())
            .and_then(|d| Duration::try_from(d).map_err(|e| e.to_string())),
    }
    .map_err(|e| {
        ConfigError(format!(
            "{origin}: {text:?} is not a duration ({e})\n  fix: e.g. 15s (the default) or 1m"
        ))
    })?;
    if parsed < Duration::from_secs(1) {
        return Err(ConfigError(format!(
            "{origin}: {text:?} is shorter than a second\n  fix: e.g. 15s (the default) or 1m"
        )));
    }
    Ok(parsed)
}

fn target(entry: &Entry, origin: &str) -> Result<Target, ConfigError> {
    let uri = uri(&entry.url, origin)?;
    let authorization = authorization(entry, origin)?;
    let tls = match uri.scheme_str() {
        Some("https") => Some(tls(
            entry.tls_config.as_ref(),
            uri.host().unwrap_or_default(),
            origin,
        )?),
        _ => {
            if entry.tls_config.is_some() {
                return Err(ConfigError(format!(
                    "{origin}: tls_config is set for a plain http URL\n  fix: write the URL with https://, or remove tls_config"
                )));
            }
            None
        }
    };
    Ok(Target {
        entry: entry.clone(),
        url: entry.url.clone(),
        uri,
        authorization,
        tls,
        headers: headers(&entry.headers, origin)?,
    })
}

/// The headers llmtail sets itself on a push; as Prometheus, an entry's `headers` may not
/// replace them (the receiver would misread the body, or the credentials would be bypassed).
const OWN_HEADERS: &[&str] = &[
    "authorization",
    "content-encoding",
    "content-length",
    "content-type",
    "host",
    "user-agent",
    "x-prometheus-remote-write-version",
];

/// An entry's `headers`, each a valid HTTP header and none llmtail sets itself.
fn headers(
    headers: &std::collections::BTreeMap<String, String>,
    origin: &str,
) -> Result<Vec<(HeaderName, HeaderValue)>, ConfigError> {
    let mut checked = Vec::with_capacity(headers.len());
    for (name, value) in headers {
        let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            ConfigError(format!(
                "{origin}: headers: {name:?} is not an HTTP header name\n  fix: letters, digits and '-', e.g. X-Scope-OrgID"
            ))
        })?;
        if OWN_HEADERS.contains(&header.as_str()) {
            return Err(ConfigError(format!(
                "{origin}: headers: {name} is set by llmtail itself\n  fix: remove it (credentials go in basic_auth or bearer_token)"
            )));
        }
        let value = HeaderValue::from_str(value).map_err(|_| {
            ConfigError(format!(
                "{origin}: headers: the value of {name} is not a valid header value\n  fix: visible ASCII, no line breaks"
            ))
        })?;
        checked.push((header, value));
    }
    Ok(checked)
}

/// An absolute http or https URL with a host, and no credentials in it.
fn uri(url: &str, origin: &str) -> Result<Uri, ConfigError> {
    let fix = "give the receiver's write endpoint, e.g. http://prometheus:9090/api/v1/write (Prometheus with --web.enable-remote-write-receiver)";
    let uri: Uri = url.parse().map_err(|e| {
        ConfigError(format!(
            "{origin}: {url:?} is not a URL ({e})\n  fix: {fix}"
        ))
    })?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) {
        return Err(ConfigError(format!(
            "{origin}: {url:?} is not an http or https URL\n  fix: {fix}"
        )));
    }
    let Some(authority) = uri.authority() else {
        return Err(ConfigError(format!(
            "{origin}: {url:?} names no host\n  fix: {fix}"
        )));
    };
    if authority.as_str().contains('@') {
        return Err(ConfigError(format!(
            "{origin}: {url:?} holds credentials, which would show in logs, labels and `ps`\n  fix: put them in the config file's [[remote_write]] basic_auth (username, password_file)"
        )));
    }
    Ok(uri)
}

/// The `Authorization` header value from `basic_auth` or a bearer token (not both).
fn authorization(entry: &Entry, origin: &str) -> Result<Option<String>, ConfigError> {
    let bearer = secret(
        entry.bearer_token.as_deref(),
        entry.bearer_token_file.as_deref(),
        ("bearer_token", "bearer_token_file"),
        origin,
    )?;
    let basic = match &entry.basic_auth {
        None => None,
        Some(auth) => {
            let password = secret(
                auth.password.as_deref(),
                auth.password_file.as_deref(),
                ("basic_auth.password", "basic_auth.password_file"),
                origin,
            )?
            .unwrap_or_default();
            let pair = format!("{}:{password}", auth.username);
            Some(format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(pair)
            ))
        }
    };
    match (basic, bearer) {
        (Some(_), Some(_)) => Err(ConfigError(format!(
            "{origin}: both basic_auth and a bearer token are set\n  fix: keep the one the receiver expects"
        ))),
        (basic, bearer) => Ok(basic.or(bearer.map(|token| format!("Bearer {token}")))),
    }
}

/// A secret given inline or in a file (its content, trailing newline removed, as Prometheus
/// reads `password_file`).
fn secret(
    inline: Option<&str>,
    file: Option<&Path>,
    keys: (&str, &str),
    origin: &str,
) -> Result<Option<String>, ConfigError> {
    match (inline, file) {
        (Some(_), Some(_)) => Err(ConfigError(format!(
            "{origin}: both {} and {} are set\n  fix: keep one of them",
            keys.0, keys.1
        ))),
        (Some(text), None) => Ok(Some(text.to_string())),
        (None, Some(path)) => {
            let text = read_regular_text(path, SMALL_FILE_LIMIT).map_err(|e| {
                ConfigError(format!(
                    "{origin}: {} {}: {e}\n  fix: {}",
                    keys.1,
                    path.display(),
                    e.fix("give a file llmtail's user can read (chmod 640, group llmtail)")
                ))
            })?;
            Ok(Some(text.trim_end_matches(['\n', '\r']).to_string()))
        }
        (None, None) => Ok(None),
    }
}

/// The client TLS configuration: the system's roots or `ca_file`, a client certificate if
/// given, and the name to verify (`server_name`, else the URL's host).
fn tls(config: Option<&TlsConfig>, host: &str, origin: &str) -> Result<Tls, ConfigError> {
    let default = TlsConfig::default();
    let config = config.unwrap_or(&default);
    let client_cert = match (&config.cert_file, &config.key_file) {
        (None, None) => None,
        (Some(cert), Some(key)) => Some((cert.as_path(), key.as_path())),
        _ => {
            return Err(ConfigError(format!(
                "{origin}: tls_config needs both cert_file and key_file for a client certificate\n  fix: set both, or neither"
            )))
        }
    };
    let in_section = |e: TlsError| ConfigError(format!("{origin}: {}", e.in_section("tls_config")));
    let server_name =
        client::server_name(config.server_name.as_deref().unwrap_or(host)).map_err(in_section)?;
    let client = ClientTls {
        ca_file: config.ca_file.as_deref(),
        client_cert,
        insecure_skip_verify: config.insecure_skip_verify,
    };
    Ok(Tls {
        config: client.config().map_err(in_section)?,
        server_name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(url: &str) -> Entry {
        Entry {
            url: url.into(),
            ..Entry::default()
        }
    }

    #[test]
    fn a_flag_url_is_a_plain_receiver_and_one_in_the_file_is_taken_once() {
        let flags = vec![
            "http://127.0.0.1:9090/api/v1/write".to_string(),
            "http://a:9090/api/v1/write".to_string(),
        ];
        let mut in_file = entry("http://a:9090/api/v1/write");
        in_file.bearer_token = Some("t0k3n".into());
        let targets = targets(&flags, &[in_file], "config file x").unwrap();
        assert_eq!(targets.len(), 2);
        assert_eq!(targets[0].authorization.as_deref(), Some("Bearer t0k3n"));
        assert_eq!(targets[1].url, "http://127.0.0.1:9090/api/v1/write");
        assert_eq!(targets[1].authorization, None);
        assert!(targets[1].tls.is_none());
    }

    #[test]
    fn headers_such_as_a_tenant_go_with_every_push() {
        let mut tenant = entry("http://mimir:8080/api/v1/push");
        tenant
            .headers
            .insert("X-Scope-OrgID".into(), "team-a".into());
        let targets = targets(&[], &[tenant], "config file x").unwrap();
        let headers = &targets[0].headers;
        assert_eq!(headers.len(), 1);
        assert_eq!(headers[0].0.as_str(), "x-scope-orgid");
        assert_eq!(headers[0].1, "team-a");
    }

    #[test]
    fn basic_auth_reads_its_password_file_without_the_newline() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("password");
        std::fs::write(&file, "s3cret\n").unwrap();
        let mut with_auth = entry("https://prometheus.example:9090/api/v1/write");
        with_auth.basic_auth = Some(BasicAuth {
            username: "llmtail".into(),
            password: None,
            password_file: Some(file),
        });
        let target = &targets(&[], &[with_auth], "f").unwrap()[0];
        // base64("llmtail:s3cret")
        assert_eq!(
            target.authorization.as_deref(),
            Some("Basic bGxtdGFpbDpzM2NyZXQ=")
        );
        assert!(target.tls.is_some());
        assert!(
            !format!("{target:?}").contains("bGxt"),
            "secrets stay out of logs"
        );
    }

    #[test]
    fn mistakes_name_the_input_and_the_fix() {
        let unreadable = {
            let mut e = entry("http://p:9090/api/v1/write");
            e.basic_auth = Some(BasicAuth {
                username: "u".into(),
                password: None,
                password_file: Some("/nonexistent/password".into()),
            });
            e
        };
        let both = {
            let mut e = entry("http://p:9090/api/v1/write");
            e.bearer_token = Some("a".into());
            e.bearer_token_file = Some("/x".into());
            e
        };
        let tls_on_http = {
            let mut e = entry("http://p:9090/api/v1/write");
            e.tls_config = Some(TlsConfig::default());
            e
        };
        let half_client_cert = {
            let mut e = entry("https://p:9090/api/v1/write");
            e.tls_config = Some(TlsConfig {
                cert_file: Some("/c.pem".into()),
                ..TlsConfig::default()
            });
            e
        };
        let with_header = |name: &str, value: &str| {
            let mut e = entry("http://p:9090/api/v1/write");
            e.headers.insert(name.into(), value.into());
            e
        };
        let cases = [
            (entry("ftp://p/api/v1/write"), "is not an http or https URL"),
            (
                with_header("Authorization", "Bearer x"),
                "headers: Authorization is set by llmtail itself",
            ),
            (
                with_header("Content-Type", "text/plain"),
                "headers: Content-Type is set by llmtail itself",
            ),
            (with_header("X Scope", "a"), "is not an HTTP header name"),
            (
                with_header("X-Scope-OrgID", "a\nb"),
                "is not a valid header value",
            ),
            (entry("prometheus:9090"), "is not an http or https URL"),
            (entry("/api/v1/write"), "is not an http or https URL"),
            (entry("http://u:p@p:9090/api/v1/write"), "holds credentials"),
            (unreadable, "basic_auth.password_file /nonexistent/password"),
            (both, "both bearer_token and bearer_token_file"),
            (tls_on_http, "tls_config is set for a plain http URL"),
            (half_client_cert, "needs both cert_file and key_file"),
        ];
        let twice = [
            entry("http://p/api/v1/write"),
            entry("http://p/api/v1/write"),
        ];
        let err = targets(&[], &twice, "config file f")
            .unwrap_err()
            .to_string();
        assert!(err.contains("the same url twice"), "{err}");
        for (entry, expected) in cases {
            let err = targets(&[], std::slice::from_ref(&entry), "config file f")
                .unwrap_err()
                .to_string();
            assert!(err.contains(expected), "{entry:?}: {err}");
            assert!(err.contains("[[remote_write]] url"), "{err}");
            assert!(err.contains("fix:"), "{err}");
        }
        let err = targets(&["localhost:9090".into()], &[], "").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("--remote-write.url: \"localhost:9090\""),
            "{err}"
        );
    }

    #[test]
    fn the_interval_is_a_duration_of_a_second_or_more() {
        assert_eq!(interval(None, "x").unwrap(), DEFAULT_INTERVAL);
        assert_eq!(interval(Some("1m"), "x").unwrap(), Duration::from_secs(60));
        assert_eq!(interval(Some("2"), "x").unwrap(), Duration::from_secs(2));
        let err = interval(Some("500ms"), "--remote-write.interval").unwrap_err();
        assert!(err.to_string().contains("shorter than a second"), "{err}");
    }
}
