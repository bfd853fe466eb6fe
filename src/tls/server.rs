//! The server's rustls configuration: a certificate chain and its key, who may connect, and
//! which TLS versions. What the web config file's keys mean is the web config's to say
//! (`exposition::tls`); this builds what they ask for.

use std::sync::Arc;

use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, SupportedProtocolVersion};

use super::pem::Pem;
use super::TlsError;

/// Whether clients show a certificate, and the CA it is checked against.
pub enum ClientAuth {
    /// No client certificate is asked for.
    None,
    /// A client may show one; if it does, it must be signed by the CA.
    VerifyIfGiven(Pem),
    /// Every client must show one signed by the CA.
    Require(Pem),
}

/// What the server's TLS is made of.
pub struct ServerTls {
    pub cert: Pem,
    pub key: Pem,
    pub client_auth: ClientAuth,
    /// The lowest and highest TLS version allowed, as 12 or 13 (rustls speaks no other).
    pub versions: (u8, u8),
    /// Choose the cipher suite by the server's order of preference, not the client's.
    pub prefer_server_order: bool,
}

impl ServerTls {
    /// The rustls configuration, HTTP/1.1 offered by ALPN.
    pub fn config(self) -> Result<Arc<ServerConfig>, TlsError> {
        let chain = self.cert.certificates()?;
        let private_key = self.key.private_key(&format!(
            "give the PEM private key (-----BEGIN PRIVATE KEY----- or EC/RSA PRIVATE KEY) that goes with {}",
            self.cert.key
        ))?;
        let provider = super::provider();
        let verifier = match &self.client_auth {
            ClientAuth::None => WebPkiClientVerifier::no_client_auth(),
            ClientAuth::VerifyIfGiven(ca) | ClientAuth::Require(ca) => {
                let if_given = matches!(self.client_auth, ClientAuth::VerifyIfGiven(_));
                client_verifier(ca, if_given, Arc::clone(&provider))?
            }
        };
        let versions = versions(self.versions)?;
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&versions)
            .map_err(|e| TlsError::new("min_version", e.to_string(), "use TLS12 or TLS13"))?
            .with_client_cert_verifier(verifier)
            .with_single_cert(chain, private_key)
            .map_err(|e| {
                TlsError::new(
                    &self.key.key,
                    format!(
                        "{} does not go with {}: {e}",
                        self.key.origin, self.cert.origin
                    ),
                    "give the private key the certificate was made for",
                )
            })?;
        // HTTP/1.1 is all the server speaks; saying so lets a client that offers h2 fall back.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        config.ignore_client_order = self.prefer_server_order;
        Ok(Arc::new(config))
    }
}

/// Checks client certificates against the CA in `ca`; `if_given` lets clients without one in.
fn client_verifier(
    ca: &Pem,
    if_given: bool,
    provider: Arc<rustls::crypto::CryptoProvider>,
) -> Result<Arc<dyn rustls::server::danger::ClientCertVerifier>, TlsError> {
    const FIX: &str = "give the PEM certificate of the CA that signs the clients' certificates";
    let mut roots = RootCertStore::empty();
    for certificate in ca.certificates()? {
        roots.add(certificate).map_err(|e| {
            TlsError::new(
                &ca.key,
                format!("{}: not a usable CA certificate: {e}", ca.origin),
                FIX,
            )
        })?;
    }
    let builder = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
    let builder = if if_given {
        builder.allow_unauthenticated()
    } else {
        builder
    };
    builder
        .build()
        .map_err(|e| TlsError::new(&ca.key, format!("{}: {e}", ca.origin), FIX))
}

/// The versions rustls speaks between `min` and `max` (each 10 to 13): at least one.
fn versions((min, max): (u8, u8)) -> Result<Vec<&'static SupportedProtocolVersion>, TlsError> {
    let versions: Vec<_> = [(12, &rustls::version::TLS12), (13, &rustls::version::TLS13)]
        .into_iter()
        .filter(|(v, _)| (min..=max).contains(v))
        .map(|(_, version)| version)
        .collect();
    if versions.is_empty() {
        return Err(TlsError::new(
            "max_version",
            format!("no TLS version rustls speaks lies between min_version TLS{min} and max_version TLS{max}"),
            "leave max_version at TLS13 (the default); min_version TLS12 or TLS13",
        ));
    }
    Ok(versions)
}
