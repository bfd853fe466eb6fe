//! The client's rustls configuration: which CAs to trust (a file, else the system's), an
//! optional client certificate, and the name to verify. What a `[[remote_write]]` entry's
//! `tls_config` keys mean is remote_write's to say; this builds what they ask for.

use std::path::Path;
use std::sync::Arc;

use rustls::ClientConfig;
use rustls_pki_types::ServerName;

use super::pem::read_file;
use super::TlsError;

/// What the client's TLS is made of.
pub struct ClientTls<'a> {
    /// The CAs to trust; `None`: the system's (`/etc/ssl/certs`, as Prometheus' Go client).
    pub ca_file: Option<&'a Path>,
    /// A client certificate and its key.
    pub client_cert: Option<(&'a Path, &'a Path)>,
    /// Take any certificate (signatures are still checked; who signed it is not).
    pub insecure_skip_verify: bool,
}

/// `name` (a host name or an IP address, `[::1]` too) as the name a server's certificate must
/// carry.
pub fn server_name(name: &str) -> Result<ServerName<'static>, TlsError> {
    let name = name.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(name.to_string()).map_err(|e| {
        TlsError::new(
            "server_name",
            format!("{name:?} is not a server name to verify ({e})"),
            "set tls_config.server_name to the name in the receiver's certificate",
        )
    })
}

impl ClientTls<'_> {
    pub fn config(&self) -> Result<Arc<ClientConfig>, TlsError> {
        let provider = super::provider();
        let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| {
                TlsError::new(
                    "versions",
                    format!("rustls refuses its own default versions: {e}"),
                    "report this as a bug",
                )
            })?;
        let builder = if self.insecure_skip_verify {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(insecure::AnyCertificate(provider)))
        } else {
            builder.with_root_certificates(roots(self.ca_file)?)
        };
        let config = match self.client_cert {
            None => builder.with_no_client_auth(),
            Some((cert_file, key_file)) => {
                const UNREADABLE: &str = "give a PEM file llmtail's user can read";
                let cert = read_file("cert_file", cert_file, UNREADABLE)?;
                let chain = cert.certificates()?;
                let key = read_file("key_file", key_file, UNREADABLE)?;
                let private_key = key.private_key("give the PEM private key of cert_file")?;
                builder
                    .with_client_auth_cert(chain, private_key)
                    .map_err(|e| {
                        TlsError::new(
                            "key_file",
                            format!(
                                "{} and {} do not make a client certificate ({e})",
                                cert.origin, key.origin
                            ),
                            "give the key that belongs to the certificate",
                        )
                    })?
            }
        };
        Ok(Arc::new(config))
    }
}

/// `ca_file`'s certificates, else the system's.
fn roots(ca_file: Option<&Path>) -> Result<rustls::RootCertStore, TlsError> {
    let mut roots = rustls::RootCertStore::empty();
    let certificates = match ca_file {
        Some(path) => {
            read_file("ca_file", path, "give a PEM file llmtail's user can read")?.certificates()?
        }
        None => rustls_native_certs::load_native_certs().certs,
    };
    let (_, refused) = roots.add_parsable_certificates(certificates);
    if roots.is_empty() {
        let what = match ca_file {
            Some(path) => format!("{} holds no usable CA certificate", path.display()),
            None => "the system has no CA certificates (ca-certificates not installed?)".into(),
        };
        return Err(TlsError::new(
            "ca_file",
            format!("{what} ({refused} refused)"),
            "give the CA that signed the receiver's certificate in tls_config.ca_file",
        ));
    }
    Ok(roots)
}

/// `insecure_skip_verify = true`: any certificate is taken (signatures are still checked, so
/// the handshake is real; who signed the certificate is not). Prometheus' own option.
mod insecure {
    use std::sync::Arc;

    use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
    use rustls::crypto::CryptoProvider;
    use rustls::{DigitallySignedStruct, SignatureScheme};
    use rustls_pki_types::{CertificateDer, ServerName, UnixTime};

    #[derive(Debug)]
    pub struct AnyCertificate(pub Arc<CryptoProvider>);

    impl ServerCertVerifier for AnyCertificate {
        fn verify_server_cert(
            &self,
            _end_entity: &CertificateDer<'_>,
            _intermediates: &[CertificateDer<'_>],
            _server_name: &ServerName<'_>,
            _ocsp_response: &[u8],
            _now: UnixTime,
        ) -> Result<ServerCertVerified, rustls::Error> {
            Ok(ServerCertVerified::assertion())
        }

        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            rustls::crypto::verify_tls12_signature(
                message,
                cert,
                dss,
                &self.0.signature_verification_algorithms,
            )
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            rustls::crypto::verify_tls13_signature(
                message,
                cert,
                dss,
                &self.0.signature_verification_algorithms,
            )
        }

        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            self.0.signature_verification_algorithms.supported_schemes()
        }
    }
}
