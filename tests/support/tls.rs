//! Certificates made at test time (rcgen) and a small HTTPS client (rustls over a blocking
//! socket), for the TLS tests: no certificate is checked in, no HTTP client crate needed.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};

use super::agent::{parse_response, Response};

/// A certificate authority that signs server and client certificates.
pub struct Ca {
    /// Its certificate, PEM.
    pub pem: String,
    issuer: Issuer<'static, KeyPair>,
}

/// A certificate and its private key, PEM.
pub struct Issued {
    pub cert: String,
    pub key: String,
}

impl Ca {
    pub fn new(name: &str) -> Ca {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let cert = params.self_signed(&key).unwrap();
        Ca {
            pem: cert.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// A server certificate for `localhost` and 127.0.0.1.
    pub fn server(&self) -> Issued {
        self.issue(
            &["localhost", "127.0.0.1"],
            ExtendedKeyUsagePurpose::ServerAuth,
        )
    }

    /// A client certificate.
    pub fn client(&self, name: &str) -> Issued {
        self.issue(&[name], ExtendedKeyUsagePurpose::ClientAuth)
    }

    fn issue(&self, names: &[&str], usage: ExtendedKeyUsagePurpose) -> Issued {
        let key = KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = CertificateParams::new(names.clone()).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, &names[0]);
        params.extended_key_usages = vec![usage];
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        Issued {
            cert: cert.pem(),
            key: key.serialize_pem(),
        }
    }
}

impl Issued {
    /// Writes `<name>.crt` and `<name>.key` into `dir`.
    pub fn write(&self, dir: &Path, name: &str) {
        std::fs::write(dir.join(format!("{name}.crt")), &self.cert).unwrap();
        std::fs::write(dir.join(format!("{name}.key")), &self.key).unwrap();
    }
}

/// An HTTPS client that trusts one CA, with a client certificate or without.
pub struct HttpsClient {
    config: Arc<rustls::ClientConfig>,
}

impl HttpsClient {
    pub fn trusting(ca: &Ca, certificate: Option<&Issued>) -> HttpsClient {
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_slice(ca.pem.as_bytes()).unwrap())
            .unwrap();
        let builder = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
        let config = match certificate {
            None => builder.with_no_client_auth(),
            Some(issued) => builder
                .with_client_auth_cert(
                    vec![CertificateDer::from_pem_slice(issued.cert.as_bytes()).unwrap()],
                    PrivateKeyDer::from_pem_slice(issued.key.as_bytes()).unwrap(),
                )
                .unwrap(),
        };
        HttpsClient {
            config: Arc::new(config),
        }
    }

    /// GET `path` over HTTPS (server name `localhost`), with basic auth if given. `Err` if the
    /// connection or the handshake fails.
    pub fn get(
        &self,
        addr: SocketAddr,
        path: &str,
        user: Option<(&str, &str)>,
    ) -> std::io::Result<Response> {
        self.request("GET", addr, path, user)
    }

    /// POST `path` without a body (the lifecycle endpoints), as [`HttpsClient::get`].
    pub fn post(
        &self,
        addr: SocketAddr,
        path: &str,
        user: Option<(&str, &str)>,
    ) -> std::io::Result<Response> {
        self.request("POST", addr, path, user)
    }

    fn request(
        &self,
        method: &str,
        addr: SocketAddr,
        path: &str,
        user: Option<(&str, &str)>,
    ) -> std::io::Result<Response> {
        let tcp = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
        tcp.set_read_timeout(Some(Duration::from_secs(10)))?;
        let name = ServerName::try_from("localhost").unwrap();
        let connection = rustls::ClientConnection::new(Arc::clone(&self.config), name)
            .map_err(std::io::Error::other)?;
        let mut tls = rustls::StreamOwned::new(connection, tcp);
        let authorization = user
            .map(|(u, p)| {
                let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"));
                format!("Authorization: Basic {encoded}\r\n")
            })
            .unwrap_or_default();
        write!(
            tls,
            "{method} {path} HTTP/1.1\r\nHost: localhost\r\n{authorization}Content-Length: 0\r\nConnection: close\r\n\r\n"
        )?;
        let mut raw = Vec::new();
        match tls.read_to_end(&mut raw) {
            Ok(_) => {}
            // A server that closes without close_notify still sent the whole response.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !raw.is_empty() => {}
            Err(e) => return Err(e),
        }
        Ok(parse_response(&raw))
    }
}
