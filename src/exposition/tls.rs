//! TLS for the HTTP server: the web config file's `tls_server_config`, read into a rustls
//! `ServerConfig`, and the handshake that the serve loop runs before HTTP.
//!
//! The keys, their values and defaults are exporter-toolkit's (`web/tls_config.go`), so a file
//! written for node_exporter works here: TLS is on once any of `cert`, `cert_file`, `key`,
//! `key_file`, `client_ca`, `client_ca_file` or `client_auth_type` is set; `min_version` is TLS12
//! unless told; CAs without a client auth policy are an error. rustls speaks TLS 1.2 and 1.3
//! only, so `TLS10` and `TLS11` as `min_version` mean 1.2 (said in a warning). Settings rustls
//! cannot honour, or that would authenticate nobody, are refused with a message saying so,
//! rather than accepted and ignored.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde::de::IgnoredAny;
use serde::Deserialize;
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;

use super::web_config::FileError;
use crate::bounded_read::{read_regular, SMALL_FILE_LIMIT};

/// `tls_server_config`, as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsSection {
    cert: Option<String>,
    key: Option<String>,
    client_ca: Option<String>,
    cert_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
    client_ca_file: Option<PathBuf>,
    client_auth_type: Option<String>,
    min_version: Option<String>,
    max_version: Option<String>,
    prefer_server_cipher_suites: Option<bool>,
    // exporter-toolkit's, and refused here with a reason (see `refuse_unsupported`).
    cipher_suites: Option<IgnoredAny>,
    curve_preferences: Option<IgnoredAny>,
    client_allowed_sans: Option<IgnoredAny>,
}

/// exporter-toolkit's `client_auth_type` values that rustls can honour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClientAuth {
    NoClientCert,
    VerifyClientCertIfGiven,
    RequireAndVerifyClientCert,
}

const CLIENT_AUTH_FIX: &str = "use NoClientCert (the default), VerifyClientCertIfGiven or RequireAndVerifyClientCert (with client_ca_file)";

/// PEM text given inline (`cert`) or a file (`cert_file`), relative to the config's directory.
fn pem_source(
    inline: Option<&str>,
    file: Option<&Path>,
    dir: &Path,
    keys: (&str, &str),
    errors: &FileError,
) -> Result<Option<(Vec<u8>, String)>, crate::config_error::ConfigError> {
    let inline = inline.filter(|t| !t.is_empty());
    let file = file.filter(|p| !p.as_os_str().is_empty());
    match (inline, file) {
        (Some(_), Some(_)) => Err(errors.key(
            keys.0,
            format!("both {} and {} are set", keys.0, keys.1),
            &format!(
                "keep one of them: {} (PEM text) or {} (a path)",
                keys.0, keys.1
            ),
        )),
        (Some(text), None) => Ok(Some((text.as_bytes().to_vec(), keys.0.to_string()))),
        (None, Some(path)) => {
            let path = dir.join(path);
            let bytes = read_regular(&path, SMALL_FILE_LIMIT).map_err(|e| {
                errors.key(
                    keys.1,
                    format!("cannot read {}: {e}", path.display()),
                    &e.fix("give a readable PEM file; a relative path is read from the web config file's directory"),
                )
            })?;
            Ok(Some((bytes, format!("{} {}", keys.1, path.display()))))
        }
        (None, None) => Ok(None),
    }
}

fn certificates(
    pem: &[u8],
    origin: &str,
    key: &str,
    errors: &FileError,
) -> Result<Vec<CertificateDer<'static>>, crate::config_error::ConfigError> {
    let certs: Result<Vec<_>, _> = CertificateDer::pem_slice_iter(pem).collect();
    match certs {
        Ok(certs) if !certs.is_empty() => Ok(certs),
        Ok(_) => Err(errors.key(
            key,
            format!("{origin} holds no PEM certificate"),
            "give a file with -----BEGIN CERTIFICATE----- blocks",
        )),
        Err(e) => Err(errors.key(
            key,
            format!("{origin} is not PEM: {e}"),
            "give a file with -----BEGIN CERTIFICATE----- blocks",
        )),
    }
}

/// The TLS version a `min_version` or `max_version` names: 10, 11, 12 or 13.
fn version(
    text: &str,
    key: &str,
    errors: &FileError,
) -> Result<u8, crate::config_error::ConfigError> {
    match text {
        "TLS10" => Ok(10),
        "TLS11" => Ok(11),
        "TLS12" => Ok(12),
        "TLS13" => Ok(13),
        _ => Err(errors.key(
            key,
            format!("{text:?} is not a TLS version"),
            "use TLS12 or TLS13 (TLS10 and TLS11 are read as TLS12: rustls speaks 1.2 and 1.3)",
        )),
    }
}

impl TlsSection {
    /// Whether the file asks for TLS at all (exporter-toolkit's `IsEnabled`).
    fn is_enabled(&self) -> bool {
        let set = |s: &Option<String>| s.as_deref().is_some_and(|s| !s.is_empty());
        let set_path =
            |p: &Option<PathBuf>| p.as_deref().is_some_and(|p| !p.as_os_str().is_empty());
        set(&self.cert)
            || set(&self.key)
            || set(&self.client_ca)
            || set(&self.client_auth_type)
            || set_path(&self.cert_file)
            || set_path(&self.key_file)
            || set_path(&self.client_ca_file)
    }

    fn refuse_unsupported(
        &self,
        errors: &FileError,
    ) -> Result<(), crate::config_error::ConfigError> {
        let refusals = [
            (
                self.cipher_suites.is_some(),
                "cipher_suites",
                "Go's cipher names do not map onto rustls' suites, which are all modern AEADs",
            ),
            (
                self.curve_preferences.is_some(),
                "curve_preferences",
                "rustls' key exchange groups are X25519, P-256 and P-384, preferred in that order",
            ),
            (
                self.client_allowed_sans.is_some(),
                "client_allowed_sans",
                "client certificates are checked against client_ca_file only",
            ),
        ];
        for (set, key, why) in refusals {
            if set {
                return Err(errors.key(
                    &format!("tls_server_config.{key}"),
                    format!("not supported by llmtail ({why})"),
                    &format!("remove {key}"),
                ));
            }
        }
        Ok(())
    }

    /// The rustls configuration, or `None` if the section asks for no TLS. `dir` is the web
    /// config file's directory, which relative paths are read from.
    pub fn server_config(
        &self,
        dir: &Path,
        errors: &FileError,
    ) -> Result<Option<Arc<ServerConfig>>, crate::config_error::ConfigError> {
        self.refuse_unsupported(errors)?;
        if !self.is_enabled() {
            return Ok(None);
        }
        let cert = pem_source(
            self.cert.as_deref(),
            self.cert_file.as_deref(),
            dir,
            ("tls_server_config.cert", "tls_server_config.cert_file"),
            errors,
        )?
        .ok_or_else(|| {
            errors.key(
                "tls_server_config.cert_file",
                "missing: TLS is on (another tls_server_config key is set) but has no certificate"
                    .into(),
                "set cert_file (and key_file) to the server's PEM certificate (and key)",
            )
        })?;
        let key = pem_source(
            self.key.as_deref(),
            self.key_file.as_deref(),
            dir,
            ("tls_server_config.key", "tls_server_config.key_file"),
            errors,
        )?
        .ok_or_else(|| {
            errors.key(
                "tls_server_config.key_file",
                "missing: a certificate needs its private key".into(),
                "set key_file to the certificate's PEM private key",
            )
        })?;
        let chain = certificates(&cert.0, &cert.1, "tls_server_config.cert_file", errors)?;
        let private_key = PrivateKeyDer::from_pem_slice(&key.0).map_err(|e| {
            errors.key(
                "tls_server_config.key_file",
                format!("{} holds no usable private key: {e}", key.1),
                "give the PEM private key (-----BEGIN PRIVATE KEY----- or EC/RSA PRIVATE KEY) that goes with cert_file",
            )
        })?;

        let client_auth = match self.client_auth_type.as_deref().unwrap_or("") {
            "" | "NoClientCert" => ClientAuth::NoClientCert,
            "VerifyClientCertIfGiven" => ClientAuth::VerifyClientCertIfGiven,
            "RequireAndVerifyClientCert" => ClientAuth::RequireAndVerifyClientCert,
            unverified @ ("RequestClientCert" | "RequireAnyClientCert" | "RequireClientCert") => {
                return Err(errors.key(
                    "tls_server_config.client_auth_type",
                    format!("{unverified} asks for a client certificate without verifying it, which authenticates nobody; llmtail does not offer it"),
                    CLIENT_AUTH_FIX,
                ))
            }
            other => {
                return Err(errors.key(
                    "tls_server_config.client_auth_type",
                    format!("{other:?} is not a client auth type"),
                    CLIENT_AUTH_FIX,
                ))
            }
        };
        let client_ca = pem_source(
            self.client_ca.as_deref(),
            self.client_ca_file.as_deref(),
            dir,
            (
                "tls_server_config.client_ca",
                "tls_server_config.client_ca_file",
            ),
            errors,
        )?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = match (client_auth, client_ca) {
            (ClientAuth::NoClientCert, None) => WebPkiClientVerifier::no_client_auth(),
            (ClientAuth::NoClientCert, Some(_)) => {
                return Err(errors.key(
                    "tls_server_config.client_ca_file",
                    "a client CA is set but client_auth_type is NoClientCert, so it would never be asked for".into(),
                    "set client_auth_type: RequireAndVerifyClientCert, or remove client_ca_file",
                ))
            }
            (_, None) => {
                return Err(errors.key(
                    "tls_server_config.client_ca_file",
                    format!("missing: client_auth_type {:?} verifies client certificates against it", self.client_auth_type.as_deref().unwrap_or_default()),
                    "set client_ca_file to the PEM certificate of the CA that signs the clients' certificates",
                ))
            }
            (auth, Some((pem, origin))) => {
                let mut roots = RootCertStore::empty();
                for ca in certificates(&pem, &origin, "tls_server_config.client_ca_file", errors)? {
                    roots.add(ca).map_err(|e| {
                        errors.key(
                            "tls_server_config.client_ca_file",
                            format!("{origin}: not a usable CA certificate: {e}"),
                            "give the PEM certificate of the CA that signs the clients' certificates",
                        )
                    })?;
                }
                let builder =
                    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), Arc::clone(&provider));
                let builder = if auth == ClientAuth::VerifyClientCertIfGiven {
                    builder.allow_unauthenticated()
                } else {
                    builder
                };
                builder.build().map_err(|e| {
                    errors.key(
                        "tls_server_config.client_ca_file",
                        format!("{origin}: {e}"),
                        "give the PEM certificate of the CA that signs the clients' certificates",
                    )
                })?
            }
        };

        let min = match self.min_version.as_deref().filter(|v| !v.is_empty()) {
            Some(text) => version(text, "tls_server_config.min_version", errors)?,
            None => 12,
        };
        let max = match self.max_version.as_deref().filter(|v| !v.is_empty()) {
            Some(text) => version(text, "tls_server_config.max_version", errors)?,
            None => 13,
        };
        if min < 12 {
            tracing::warn!(
                "{}: tls_server_config.min_version TLS{min} is read as TLS12 (rustls speaks TLS 1.2 and 1.3 only)",
                errors.file.display()
            );
        }
        let versions: Vec<&'static rustls::SupportedProtocolVersion> =
            [(12, &rustls::version::TLS12), (13, &rustls::version::TLS13)]
                .into_iter()
                .filter(|(v, _)| (min..=max).contains(v))
                .map(|(_, version)| version)
                .collect();
        if versions.is_empty() {
            return Err(errors.key(
                "tls_server_config.max_version",
                format!("no TLS version rustls speaks lies between min_version TLS{min} and max_version TLS{max}"),
                "leave max_version at TLS13 (the default); min_version TLS12 or TLS13",
            ));
        }
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&versions)
            .map_err(|e| {
                errors.key(
                    "tls_server_config.min_version",
                    e.to_string(),
                    "use TLS12 or TLS13",
                )
            })?
            .with_client_cert_verifier(verifier)
            .with_single_cert(chain, private_key)
            .map_err(|e| {
                errors.key(
                    "tls_server_config.key_file",
                    format!("{} does not go with {}: {e}", key.1, cert.1),
                    "give the private key the certificate was made for",
                )
            })?;
        // HTTP/1.1 is all the server speaks; saying so lets a client that offers h2 fall back.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        config.ignore_client_order = self.prefer_server_cipher_suites.unwrap_or(true);
        Ok(Some(Arc::new(config)))
    }
}

/// What Go's HTTPS server answers a plain HTTP request with, so that `curl http://` to a TLS
/// port says what is wrong instead of closing without a word.
const PLAIN_HTTP_ANSWER: &[u8] =
    b"HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";

/// Answers [`PLAIN_HTTP_ANSWER`], then reads what the client sends until it closes: a socket
/// closed with unread bytes is reset, and the reset can overtake the answer.
async fn answer_plain_http(stream: TcpStream) {
    let Ok(stream) = stream.into_std() else {
        return;
    };
    let answered = (&stream).write_all(PLAIN_HTTP_ANSWER).is_ok()
        && stream.shutdown(std::net::Shutdown::Write).is_ok();
    let Ok(stream) = TcpStream::from_std(stream) else {
        return;
    };
    let mut rest = [0u8; 4096];
    while answered && stream.readable().await.is_ok() {
        match stream.try_read(&mut rest) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => break,
        }
    }
}

/// The first byte of every TLS connection: a handshake record.
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

/// Runs the TLS handshake on `stream`, within `timeout` (the header-read timeout: a client that
/// opens TCP and never finishes its handshake is as idle as one that never sends a request
/// head). `None` if the client spoke plain HTTP (answered with a 400), failed the handshake or
/// took too long.
pub async fn handshake(
    stream: TcpStream,
    config: Arc<ServerConfig>,
    timeout: Duration,
) -> Option<TlsStream<TcpStream>> {
    let peer = stream.peer_addr().ok();
    let attempt = async {
        let mut first = [0u8; 1];
        if stream.peek(&mut first).await.ok()? == 0 {
            return None;
        }
        if first[0] != TLS_HANDSHAKE_RECORD {
            tracing::debug!(
                ?peer,
                "plain HTTP (or not TLS) on the TLS port: answered 400"
            );
            answer_plain_http(stream).await;
            return None;
        }
        match tokio_rustls::TlsAcceptor::from(config).accept(stream).await {
            Ok(tls) => Some(tls),
            Err(e) => {
                tracing::debug!(?peer, "TLS handshake failed: {e}");
                None
            }
        }
    };
    match tokio::time::timeout(timeout, attempt).await {
        Ok(tls) => tls,
        Err(_) => {
            tracing::debug!(?peer, "TLS handshake not done within {timeout:?}: closed");
            None
        }
    }
}
