//! TLS for the HTTP server: the web config file's `tls_server_config`, read into a rustls
//! `ServerConfig` (built by [`crate::tls`], which the remote-write client shares), and the
//! handshake that the serve loop runs before HTTP.
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

use rustls::ServerConfig;
use serde::de::IgnoredAny;
use serde::Deserialize;
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;

use crate::tls::pem::{Pem, PemSource};
use crate::tls::server::{ClientAuth, ServerTls};
use crate::tls::TlsError;

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
enum ClientAuthType {
    NoClientCert,
    VerifyClientCertIfGiven,
    RequireAndVerifyClientCert,
}

const CLIENT_AUTH_FIX: &str = "use NoClientCert (the default), VerifyClientCertIfGiven or RequireAndVerifyClientCert (with client_ca_file)";

/// How a relative path in the section is read, and what to do about a file that cannot be.
const UNREADABLE_FIX: &str =
    "give a readable PEM file; a relative path is read from the web config file's directory";

/// The TLS version a `min_version` or `max_version` names: 10, 11, 12 or 13.
fn version(text: &str, key: &str) -> Result<u8, TlsError> {
    match text {
        "TLS10" => Ok(10),
        "TLS11" => Ok(11),
        "TLS12" => Ok(12),
        "TLS13" => Ok(13),
        _ => Err(TlsError::new(
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

    fn refuse_unsupported(&self) -> Result<(), TlsError> {
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
                return Err(TlsError::new(
                    key,
                    format!("not supported by llmtail ({why})"),
                    format!("remove {key}"),
                ));
            }
        }
        Ok(())
    }

    /// The rustls configuration, or `None` if the section asks for no TLS. `file` is the web
    /// config file, whose directory relative paths are read from. Errors name the key within
    /// `tls_server_config`.
    pub fn server_config(&self, file: &Path) -> Result<Option<Arc<ServerConfig>>, TlsError> {
        self.refuse_unsupported()?;
        if !self.is_enabled() {
            return Ok(None);
        }
        let dir = file.parent().unwrap_or(Path::new("."));
        let cert = self.pem(("cert", &self.cert), ("cert_file", &self.cert_file), dir)?;
        let cert = cert.ok_or_else(|| {
            TlsError::new(
                "cert_file",
                "missing: TLS is on (another tls_server_config key is set) but has no certificate",
                "set cert_file (and key_file) to the server's PEM certificate (and key)",
            )
        })?;
        let key = self.pem(("key", &self.key), ("key_file", &self.key_file), dir)?;
        let key = key.ok_or_else(|| {
            TlsError::new(
                "key_file",
                "missing: a certificate needs its private key",
                "set key_file to the certificate's PEM private key",
            )
        })?;
        let client_auth = self.client_auth(dir)?;
        Ok(Some(
            ServerTls {
                cert,
                key,
                client_auth,
                versions: self.versions(file)?,
                prefer_server_order: self.prefer_server_cipher_suites.unwrap_or(true),
            }
            .config()?,
        ))
    }

    /// PEM given inline (`cert`) or a file (`cert_file`), relative to `dir`.
    fn pem(
        &self,
        inline: (&str, &Option<String>),
        file: (&str, &Option<PathBuf>),
        dir: &Path,
    ) -> Result<Option<Pem>, TlsError> {
        PemSource {
            inline: (inline.0, inline.1.as_deref()),
            file: (file.0, file.1.as_deref()),
        }
        .read(dir, UNREADABLE_FIX)
    }

    /// `client_auth_type` and the client CA it checks against.
    fn client_auth(&self, dir: &Path) -> Result<ClientAuth, TlsError> {
        let auth_type = match self.client_auth_type.as_deref().unwrap_or("") {
            "" | "NoClientCert" => ClientAuthType::NoClientCert,
            "VerifyClientCertIfGiven" => ClientAuthType::VerifyClientCertIfGiven,
            "RequireAndVerifyClientCert" => ClientAuthType::RequireAndVerifyClientCert,
            unverified @ ("RequestClientCert" | "RequireAnyClientCert" | "RequireClientCert") => {
                return Err(TlsError::new(
                    "client_auth_type",
                    format!("{unverified} asks for a client certificate without verifying it, which authenticates nobody; llmtail does not offer it"),
                    CLIENT_AUTH_FIX,
                ))
            }
            other => {
                return Err(TlsError::new(
                    "client_auth_type",
                    format!("{other:?} is not a client auth type"),
                    CLIENT_AUTH_FIX,
                ))
            }
        };
        let ca = self.pem(
            ("client_ca", &self.client_ca),
            ("client_ca_file", &self.client_ca_file),
            dir,
        )?;
        match (auth_type, ca) {
            (ClientAuthType::NoClientCert, None) => Ok(ClientAuth::None),
            (ClientAuthType::NoClientCert, Some(_)) => Err(TlsError::new(
                "client_ca_file",
                "a client CA is set but client_auth_type is NoClientCert, so it would never be asked for",
                "set client_auth_type: RequireAndVerifyClientCert, or remove client_ca_file",
            )),
            (_, None) => Err(TlsError::new(
                "client_ca_file",
                format!(
                    "missing: client_auth_type {:?} verifies client certificates against it",
                    self.client_auth_type.as_deref().unwrap_or_default()
                ),
                "set client_ca_file to the PEM certificate of the CA that signs the clients' certificates",
            )),
            (ClientAuthType::VerifyClientCertIfGiven, Some(ca)) => Ok(ClientAuth::VerifyIfGiven(ca)),
            (ClientAuthType::RequireAndVerifyClientCert, Some(ca)) => Ok(ClientAuth::Require(ca)),
        }
    }

    /// `min_version` (TLS12 unless told) and `max_version` (TLS13); TLS10 and TLS11 are read as
    /// TLS12, with a warning naming `file`.
    fn versions(&self, file: &Path) -> Result<(u8, u8), TlsError> {
        let min = match self.min_version.as_deref().filter(|v| !v.is_empty()) {
            Some(text) => version(text, "min_version")?,
            None => 12,
        };
        let max = match self.max_version.as_deref().filter(|v| !v.is_empty()) {
            Some(text) => version(text, "max_version")?,
            None => 13,
        };
        if min < 12 {
            tracing::warn!(
                "{}: tls_server_config.min_version TLS{min} is read as TLS12 (rustls speaks TLS 1.2 and 1.3 only)",
                file.display()
            );
        }
        Ok((min, max))
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
    // Plain in the log (`peer=10.0.0.7:51234`), not `Some(..)`.
    let peer = stream
        .peer_addr()
        .map_or_else(|_| "unknown".to_string(), |a| a.to_string());
    let attempt = async {
        let mut first = [0u8; 1];
        if stream.peek(&mut first).await.ok()? == 0 {
            return None;
        }
        if first[0] != TLS_HANDSHAKE_RECORD {
            tracing::debug!(
                %peer,
                "plain HTTP (or not TLS) on the TLS port: answered 400"
            );
            answer_plain_http(stream).await;
            return None;
        }
        match tokio_rustls::TlsAcceptor::from(config).accept(stream).await {
            Ok(tls) => Some(tls),
            Err(e) => {
                tracing::debug!(%peer, "TLS handshake failed: {e}");
                None
            }
        }
    };
    match tokio::time::timeout(timeout, attempt).await {
        Ok(tls) => tls,
        Err(_) => {
            tracing::debug!(%peer, "TLS handshake not done within {timeout:?}: closed");
            None
        }
    }
}
