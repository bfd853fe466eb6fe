//! TLS on both ends llmtail speaks it: the HTTP server (the web config file's
//! `tls_server_config`) and the remote-write client (a `[[remote_write]]` entry's `tls_config`).
//!
//! One stack for both: PEM certificates, keys and CAs read through [`crate::bounded_read`]
//! (a FIFO or `/dev/zero` given as a certificate must not hang start-up), rustls configurations
//! built with the same crypto provider, and one error, [`TlsError`], which names the setting
//! and the file. Which keys a section has, and what their values mean, stays with the
//! subsystem that owns the section (exporter-toolkit's names for the server, Prometheus' for
//! the client); it hands this module what they say.

pub mod client;
pub mod pem;
pub mod server;

use std::sync::Arc;

use rustls::crypto::CryptoProvider;

/// A TLS setting that cannot be used: which key of its section, what is wrong with it (naming
/// the file, when one was read), and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {what}\n  fix: {fix}")]
pub struct TlsError {
    /// The key within its section (`cert_file`, `ca_file`, ...); the caller names the section.
    pub key: String,
    pub what: String,
    pub fix: String,
}

impl TlsError {
    pub fn new(key: &str, what: impl Into<String>, fix: impl Into<String>) -> TlsError {
        TlsError {
            key: key.to_string(),
            what: what.into(),
            fix: fix.into(),
        }
    }

    /// The message with the key under its section: `tls_config.ca_file: ...`.
    pub fn in_section(&self, section: &str) -> String {
        format!("{section}.{self}")
    }
}

/// The crypto both ends use: ring, as the rest of the agent's dependencies do.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::client::ClientTls;
    use super::pem::{read_file, PemSource};
    use super::server::{ClientAuth, ServerTls};

    /// A self-signed certificate for localhost and its key, as PEM files in `dir`.
    fn certificate(dir: &Path, name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let (cert_file, key_file) = (
            dir.join(format!("{name}.crt")),
            dir.join(format!("{name}.key")),
        );
        std::fs::write(&cert_file, cert.pem()).unwrap();
        std::fs::write(&key_file, key.serialize_pem()).unwrap();
        (cert_file, key_file)
    }

    #[test]
    fn a_file_that_cannot_be_read_is_named_with_its_key_and_a_fix() {
        let err = read_file("ca_file", Path::new("/nonexistent/ca.pem"), "give a CA").unwrap_err();
        assert_eq!(err.key, "ca_file");
        assert!(
            err.what.starts_with("cannot read /nonexistent/ca.pem: "),
            "{err}"
        );
        assert_eq!(err.fix, "give a CA");
        assert!(
            err.in_section("tls_config")
                .starts_with("tls_config.ca_file: cannot read"),
            "{err}"
        );
    }

    #[test]
    fn a_file_without_a_certificate_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let (_, key_file) = certificate(dir.path(), "server");
        let err = read_file("cert_file", &key_file, "")
            .unwrap()
            .certificates()
            .unwrap_err();
        assert_eq!(err.key, "cert_file");
        assert_eq!(
            err.what,
            format!("{} holds no PEM certificate", key_file.display())
        );
    }

    #[test]
    fn pem_is_given_inline_or_as_a_file_relative_to_a_directory_never_both() {
        let dir = tempfile::tempdir().unwrap();
        certificate(dir.path(), "server");
        let file = PemSource {
            inline: ("cert", None),
            file: ("cert_file", Some(Path::new("server.crt"))),
        };
        let pem = file.read(dir.path(), "").unwrap().unwrap();
        assert_eq!(pem.certificates().unwrap().len(), 1);
        let both = PemSource {
            inline: ("cert", Some("-----BEGIN CERTIFICATE-----")),
            ..file
        };
        let err = both.read(dir.path(), "").unwrap_err();
        assert_eq!(err.what, "both cert and cert_file are set");
        let neither = PemSource {
            inline: ("cert", Some("")),
            file: ("cert_file", None),
        };
        assert!(neither.read(dir.path(), "").unwrap().is_none());
    }

    #[test]
    fn a_server_key_that_does_not_go_with_its_certificate_names_both_files() {
        let dir = tempfile::tempdir().unwrap();
        let (cert_file, _) = certificate(dir.path(), "one");
        let (_, other_key) = certificate(dir.path(), "other");
        let err = ServerTls {
            cert: read_file("cert_file", &cert_file, "").unwrap(),
            key: read_file("key_file", &other_key, "").unwrap(),
            client_auth: ClientAuth::None,
            versions: (12, 13),
            prefer_server_order: true,
        }
        .config()
        .unwrap_err();
        assert_eq!(err.key, "key_file");
        assert!(
            err.what.starts_with(&format!(
                "{} does not go with {}",
                other_key.display(),
                cert_file.display()
            )),
            "{err}"
        );
    }

    #[test]
    fn the_client_trusts_its_ca_file_and_refuses_one_without_a_ca() {
        let dir = tempfile::tempdir().unwrap();
        let (cert_file, key_file) = certificate(dir.path(), "ca");
        let client = |ca_file| ClientTls {
            ca_file: Some(ca_file),
            client_cert: Some((&cert_file, &key_file)),
            insecure_skip_verify: false,
        };
        client(&cert_file).config().unwrap();
        let err = client(&key_file).config().unwrap_err();
        assert_eq!(err.key, "ca_file");
        assert!(err.what.contains(&key_file.display().to_string()), "{err}");
    }
}
