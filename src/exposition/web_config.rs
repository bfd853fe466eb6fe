//! The web config file (`--web.config.file`): TLS, basic auth and extra response headers, in
//! exporter-toolkit's YAML format (its `docs/web-configuration.md`), so that the file a
//! Prometheus exporter already has works here unchanged.
//!
//! The file is read at start-up, where any mistake stops the agent (exit code 2) with a
//! message naming the file, the key and the fix, and again on [`WebConfigHandle::reload`],
//! where a mistake is logged and the running configuration kept. Every new connection takes
//! the configuration current at that moment (its certificate), every request its users and
//! headers. Unknown keys are errors, as exporter-toolkit's strict YAML reading makes them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use axum::http::{HeaderName, HeaderValue};
use serde::de::IgnoredAny;
use serde::Deserialize;

use super::auth::{self, BadHash, Checker, Users};
use super::tls::TlsSection;
use crate::bounded_read::{read_regular_text, SMALL_FILE_LIMIT};
use crate::config_error::ConfigError;

/// The file, as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct WebConfigFile {
    tls_server_config: Option<TlsSection>,
    http_server_config: Option<HttpSection>,
    basic_auth_users: Option<BTreeMap<String, String>>,
    rate_limit: Option<IgnoredAny>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpSection {
    /// exporter-toolkit's HTTP/2 switch; llmtail serves HTTP/1.1 either way.
    #[allow(dead_code)]
    http2: Option<bool>,
    headers: Option<BTreeMap<String, String>>,
}

/// The headers `http_server_config.headers` may set, and the values allowed where there is
/// a fixed set (exporter-toolkit's `extraHTTPHeaders`).
const ALLOWED_HEADERS: &[(&str, &[&str])] = &[
    ("Strict-Transport-Security", &[]),
    ("X-Content-Type-Options", &["nosniff"]),
    ("X-Frame-Options", &["deny", "sameorigin"]),
    ("X-XSS-Protection", &[]),
    ("Content-Security-Policy", &[]),
];

const KEYS_FIX: &str = "the keys are exporter-toolkit's: tls_server_config (cert_file, key_file, client_ca_file, client_auth_type, min_version, max_version), http_server_config.headers, basic_auth_users; see docs/GUIDE.md, \"TLS and basic auth\"";

/// Builds the errors of one web config file: each names the file, then the key.
struct FileError {
    file: PathBuf,
}

impl FileError {
    fn key(&self, key: &str, what: String, fix: &str) -> ConfigError {
        ConfigError(format!(
            "web config file {}, {key}: {what}\n  fix: {fix}",
            self.file.display()
        ))
    }

    fn whole(&self, what: String, fix: &str) -> ConfigError {
        ConfigError(format!(
            "web config file {}: {what}\n  fix: {fix}",
            self.file.display()
        ))
    }
}

/// One reading of the web config file: what the server does with each connection and request.
#[derive(Default)]
pub struct WebConfig {
    /// `None`: plain HTTP.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    pub users: Users,
    /// Added to every response.
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl WebConfig {
    /// Reads and checks the file at `path`.
    pub fn load(path: &Path) -> Result<WebConfig, ConfigError> {
        let errors = FileError {
            file: path.to_path_buf(),
        };
        let text = read_regular_text(path, SMALL_FILE_LIMIT).map_err(|e| {
            errors.whole(
                format!("cannot read it: {e}"),
                &e.fix("pass an existing, readable file to --web.config.file"),
            )
        })?;
        // An empty file (or one of comments) asks for nothing, as in exporter-toolkit.
        let blank = text
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'));
        let file: WebConfigFile = if blank {
            WebConfigFile::default()
        } else {
            serde_saphyr::from_str(&text).map_err(|e| errors.whole(e.to_string(), KEYS_FIX))?
        };
        if file.rate_limit.is_some() {
            return Err(errors.key(
                "rate_limit",
                "not supported by llmtail (--web.max-connections bounds the requests answered at once)".into(),
                "remove rate_limit",
            ));
        }
        let tls = match &file.tls_server_config {
            Some(section) => section
                .server_config(path)
                .map_err(|e| errors.key(&format!("tls_server_config.{}", e.key), e.what, &e.fix))?,
            None => None,
        };
        let users = Users::new(file.basic_auth_users.unwrap_or_default())
            .map_err(|(user, bad)| bad_hash(&errors, &user, bad))?;
        let headers = headers(
            file.http_server_config
                .and_then(|h| h.headers)
                .unwrap_or_default(),
            &errors,
        )?;
        Ok(WebConfig {
            tls,
            users,
            headers,
        })
    }
}

/// The error for a `basic_auth_users` hash that [`Users::new`] refused.
fn bad_hash(errors: &FileError, user: &str, bad: BadHash) -> ConfigError {
    const MAKE_ONE: &str = "htpasswd -nBC 10 \"\" | tr -d ':\\n' prints one ($2y$10$...)";
    let key = format!("basic_auth_users.{user}");
    let (low, high) = (auth::COSTS.start(), auth::COSTS.end());
    match bad {
        BadHash::Malformed(e) => errors.key(
            &key,
            format!("not a bcrypt hash ({e})"),
            &format!("give the hash, not the password: {MAKE_ONE}"),
        ),
        BadHash::Cost(cost) if !(4..=31).contains(&cost) => errors.key(
            &key,
            format!("bcrypt cost {cost} is no bcrypt cost (4 to 31; exporter-toolkit refuses it too)"),
            &format!("hash the password again at a cost from {low} to {high}: {MAKE_ONE}"),
        ),
        BadHash::Cost(cost) => errors.key(
            &key,
            format!(
                "bcrypt cost {cost} is over {high}: one check would take {} times as long as at cost 10, and a scraper's first scrape waits for it",
                1u64 << (cost - 10)
            ),
            &format!("hash the password again at a cost from {low} to {high} (10 is exporter-toolkit's): {MAKE_ONE}"),
        ),
    }
}

/// Checks `http_server_config.headers` against [`ALLOWED_HEADERS`]; blank values are unset.
fn headers(
    given: BTreeMap<String, String>,
    errors: &FileError,
) -> Result<Vec<(HeaderName, HeaderValue)>, ConfigError> {
    let mut headers = Vec::new();
    for (name, value) in given {
        let key = format!("http_server_config.headers.{name}");
        let Some((_, allowed)) = ALLOWED_HEADERS.iter().find(|(n, _)| *n == name) else {
            let names: Vec<&str> = ALLOWED_HEADERS.iter().map(|(n, _)| *n).collect();
            return Err(errors.key(
                &key,
                format!("HTTP header {name:?} can not be configured"),
                &format!("use one of {}", names.join(", ")),
            ));
        };
        if !allowed.is_empty() && !allowed.contains(&value.as_str()) {
            return Err(errors.key(
                &key,
                format!("{value:?} is not one of {allowed:?}"),
                &format!("use one of {}", allowed.join(", ")),
            ));
        }
        if value.is_empty() {
            continue;
        }
        let value = HeaderValue::from_str(&value).map_err(|e| {
            errors.key(
                &key,
                format!("{value:?} cannot be sent as a header value: {e}"),
                "use visible ASCII",
            )
        })?;
        headers.push((HeaderName::from_static(static_name(&name)), value));
    }
    Ok(headers)
}

/// The lower-case name of an allowed header, for `HeaderName::from_static`.
fn static_name(name: &str) -> &'static str {
    match name {
        "Strict-Transport-Security" => "strict-transport-security",
        "X-Content-Type-Options" => "x-content-type-options",
        "X-Frame-Options" => "x-frame-options",
        "X-XSS-Protection" => "x-xss-protection",
        _ => "content-security-policy",
    }
}

/// The web configuration the server runs with, shared by every connection, and the file it
/// came from. Without `--web.config.file`: plain HTTP, no authentication, and nothing to reload.
#[derive(Default)]
pub struct WebConfigHandle {
    path: Option<PathBuf>,
    current: RwLock<Arc<WebConfig>>,
    /// Kept across reloads: a scraper whose password did not change pays bcrypt once.
    pub checker: Checker,
}

impl std::fmt::Debug for WebConfigHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebConfigHandle")
            .field("path", &self.path)
            .field("tls", &self.current().tls.is_some())
            .field("basic_auth", &!self.current().users.is_empty())
            .finish()
    }
}

impl WebConfigHandle {
    /// Reads `path` (`None`: no web config file).
    pub fn load(path: Option<&Path>) -> Result<WebConfigHandle, ConfigError> {
        let Some(path) = path else {
            return Ok(WebConfigHandle::default());
        };
        let config = WebConfig::load(path)?;
        Ok(WebConfigHandle {
            path: Some(path.to_path_buf()),
            current: RwLock::new(Arc::new(config)),
            checker: Checker::default(),
        })
    }

    /// The configuration in force now.
    pub fn current(&self) -> Arc<WebConfig> {
        Arc::clone(&self.current.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// The file it reads (`--web.config.file`), if any.
    pub fn path(&self) -> Option<&std::path::Path> {
        self.path.as_deref()
    }

    /// Whether connections are served over TLS.
    pub fn is_tls(&self) -> bool {
        self.current().tls.is_some()
    }

    /// Reads the file again; new connections get its certificate, new requests its users and
    /// headers. A file that does not load, or that would turn TLS on or off (a port that
    /// Prometheus scrapes over HTTPS must not start answering in plain text because a section
    /// went missing), leaves the running configuration in force: the error is logged and
    /// returned.
    pub fn reload(&self) -> Result<(), ConfigError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let loaded = WebConfig::load(path).and_then(|new| {
            if new.tls.is_some() != self.is_tls() {
                let now = if self.is_tls() { "on" } else { "off" };
                return Err(ConfigError(format!(
                    "web config file {}: TLS is {now} and a reload cannot turn it {}\n  fix: restart llmtail to change whether it serves HTTPS",
                    path.display(),
                    if self.is_tls() { "off" } else { "on" }
                )));
            }
            Ok(new)
        });
        match loaded {
            Ok(new) => {
                *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(new);
                tracing::info!(path = %path.display(), "web config file reloaded");
                Ok(())
            }
            Err(e) => {
                tracing::warn!("{e}\n  the running web configuration stays in force");
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory with a certificate and key (made by rcgen) and a web config file.
    struct Dir(tempfile::TempDir);

    impl Dir {
        fn new() -> Dir {
            let dir = tempfile::tempdir().unwrap();
            let key = rcgen::KeyPair::generate().unwrap();
            let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()])
                .unwrap()
                .self_signed(&key)
                .unwrap();
            std::fs::write(dir.path().join("server.crt"), cert.pem()).unwrap();
            std::fs::write(dir.path().join("server.key"), key.serialize_pem()).unwrap();
            Dir(dir)
        }

        fn load(&self, yaml: &str) -> Result<WebConfig, ConfigError> {
            let path = self.0.path().join("web.yml");
            std::fs::write(&path, yaml).unwrap();
            WebConfig::load(&path)
        }
    }

    const TLS: &str = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n";

    #[test]
    fn paths_are_read_from_the_files_directory_and_tls_defaults_apply() {
        let dir = Dir::new();
        let config = dir.load(TLS).unwrap();
        assert!(config.tls.is_some());
        assert!(config.users.is_empty());
        let config = dir.load("").unwrap();
        assert!(config.tls.is_none());
    }

    #[test]
    fn headers_are_exporter_toolkits() {
        let dir = Dir::new();
        let config = dir
            .load("http_server_config:\n  headers:\n    X-Frame-Options: deny\n    Strict-Transport-Security: max-age=31536000\n    X-XSS-Protection: \"\"\n")
            .unwrap();
        let names: Vec<&str> = config.headers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["strict-transport-security", "x-frame-options"]);
    }

    #[test]
    fn mistakes_name_the_file_the_key_and_the_fix() {
        let dir = Dir::new();
        let hash = bcrypt::hash("pw", 4).unwrap();
        let cases: &[(String, &str)] = &[
            (
                "tls_server_config:\n  cert_file: missing.crt\n  key_file: server.key\n".into(),
                "tls_server_config.cert_file: cannot read",
            ),
            (
                "tls_server_config:\n  key_file: server.key\n".into(),
                "tls_server_config.cert_file: missing",
            ),
            (
                "tls_server_config:\n  cert_file: server.crt\n".into(),
                "tls_server_config.key_file: missing",
            ),
            (
                "tls_server_config:\n  cert_file: server.key\n  key_file: server.key\n".into(),
                "holds no PEM certificate",
            ),
            (
                "basic_auth_users:\n  prometheus: secret\n".into(),
                "basic_auth_users.prometheus: not a bcrypt hash",
            ),
            (
                format!("basic_auth_user:\n  prometheus: {hash}\n"),
                "basic_auth_user",
            ),
            (
                format!("{TLS}  client_auth_type: RequireAndVerify\n"),
                "tls_server_config.client_auth_type: \"RequireAndVerify\" is not a client auth type",
            ),
            (
                format!("{TLS}  client_auth_type: RequireAnyClientCert\n"),
                "authenticates nobody",
            ),
            (
                format!("{TLS}  client_auth_type: RequireAndVerifyClientCert\n"),
                "tls_server_config.client_ca_file: missing",
            ),
            (
                format!("{TLS}  client_ca_file: server.crt\n"),
                "client_auth_type is NoClientCert",
            ),
            (
                format!("{TLS}  min_version: TLS14\n"),
                "tls_server_config.min_version: \"TLS14\" is not a TLS version",
            ),
            (
                format!("{TLS}  max_version: TLS11\n"),
                "tls_server_config.max_version: no TLS version",
            ),
            (
                format!("{TLS}  cipher_suites: [TLS_AES_128_GCM_SHA256]\n"),
                "tls_server_config.cipher_suites: not supported",
            ),
            (
                "http_server_config:\n  headers:\n    X-Powered-By: llmtail\n".into(),
                "http_server_config.headers.X-Powered-By: HTTP header \"X-Powered-By\" can not be configured",
            ),
            (
                "http_server_config:\n  headers:\n    X-Frame-Options: allow\n".into(),
                "is not one of [\"deny\", \"sameorigin\"]",
            ),
            ("rate_limit:\n  burst: 1\n".into(), "rate_limit: not supported"),
            (
                format!("basic_auth_users:\n  p: {}\n", hash.replacen("$04$", "$31$", 1)),
                "basic_auth_users.p: bcrypt cost 31 is over 14",
            ),
            (
                format!("basic_auth_users:\n  p: {}\n", hash.replacen("$04$", "$03$", 1)),
                "basic_auth_users.p: bcrypt cost 3 is no bcrypt cost",
            ),
            (
                format!("basic_auth_users:\n  p: {}\n", hash.replacen("$04$", "$99$", 1)),
                "basic_auth_users.p: bcrypt cost 99 is no bcrypt cost",
            ),
            ("tls_server_config: [\n".into(), "web.yml"),
        ];
        for (yaml, expected) in cases {
            let err = dir
                .load(yaml)
                .err()
                .unwrap_or_else(|| panic!("{yaml}: loaded"))
                .to_string();
            assert!(err.contains(expected), "{yaml}\n=> {err}");
            assert!(
                err.contains("web config file ") && err.contains("web.yml"),
                "{err}"
            );
            assert!(err.contains("fix:"), "{err}");
        }
    }

    #[test]
    fn a_reload_that_fails_or_flips_tls_keeps_the_running_configuration() {
        let dir = Dir::new();
        let path = dir.0.path().join("web.yml");
        std::fs::write(&path, TLS).unwrap();
        let handle = WebConfigHandle::load(Some(&path)).unwrap();
        let running = handle.current();
        std::fs::write(
            &path,
            "tls_server_config: {cert_file: nothere.crt, key_file: server.key}\n",
        )
        .unwrap();
        assert!(handle.reload().is_err());
        assert!(Arc::ptr_eq(&running, &handle.current()));
        std::fs::write(&path, "").unwrap();
        let err = handle.reload().unwrap_err().to_string();
        assert!(err.contains("cannot turn it off"), "{err}");
        assert!(Arc::ptr_eq(&running, &handle.current()));
        std::fs::write(&path, format!("{TLS}  min_version: TLS13\n")).unwrap();
        handle.reload().unwrap();
        assert!(!Arc::ptr_eq(&running, &handle.current()));
    }
}
