//! The HTTP side of a push: one keep-alive HTTP/1.1 connection per receiver (TLS when the URL
//! is https), a POST with the remote-write headers, and the answer read into an [`Outcome`].
//!
//! Built on hyper's connection API and tokio-rustls, which the server already uses, rather
//! than reqwest: one request every interval to one fixed host needs no pool, redirects,
//! cookies or proxy support, and the only crates this adds are hyper's client half (`want`,
//! `try-lock`) and the system's CA roots (`rustls-native-certs`).

use std::time::Duration;

use axum::body::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::client::conn::http1::SendRequest;
use hyper::header;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::queue::Outcome;
use super::settings::Target;

/// The longest one request may take, connecting included: Prometheus' `remote_timeout`
/// default.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// How much of an error answer is kept for the log message.
const ERROR_BODY_BYTES: usize = 512;

/// A connection to one receiver, opened when first needed and again after it closes.
pub struct Client {
    target: Target,
    connection: Option<SendRequest<Full<Bytes>>>,
    user_agent: String,
}

impl Client {
    pub fn new(target: Target) -> Client {
        Client {
            target,
            connection: None,
            user_agent: format!("llmtail/{}", env!("CARGO_PKG_VERSION")),
        }
    }

    /// Sends one compressed WriteRequest and says what the receiver made of it.
    pub async fn send(&mut self, body: Bytes) -> Outcome {
        match tokio::time::timeout(REQUEST_TIMEOUT, self.attempt(body)).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(why)) => {
                self.connection = None;
                Outcome::Retry { why, after: None }
            }
            Err(_) => {
                self.connection = None;
                Outcome::Retry {
                    why: format!("no answer within {REQUEST_TIMEOUT:?}"),
                    after: None,
                }
            }
        }
    }

    async fn attempt(&mut self, body: Bytes) -> Result<Outcome, String> {
        let request = self.request(body)?;
        let connection = self.connection().await?;
        let response = connection
            .send_request(request)
            .await
            .map_err(|e| format!("sending failed: {e}"))?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        // The body is read to its end (keeping the connection usable), the first bytes kept.
        let body = Limited::new(response.into_body(), 1 << 20)
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&body[..body.len().min(ERROR_BODY_BYTES)]);
        Ok(Outcome::of_status(status, &text, retry_after))
    }

    fn request(&self, body: Bytes) -> Result<hyper::Request<Full<Bytes>>, String> {
        let uri = &self.target.uri;
        let mut request = hyper::Request::post(uri.path_and_query().map_or("/", |p| p.as_str()))
            .header(header::HOST, uri.authority().map_or("", |a| a.as_str()))
            .header(header::CONTENT_ENCODING, "snappy")
            .header(header::CONTENT_TYPE, "application/x-protobuf")
            .header("X-Prometheus-Remote-Write-Version", "0.1.0")
            .header(header::USER_AGENT, &self.user_agent);
        if let Some(authorization) = &self.target.authorization {
            request = request.header(header::AUTHORIZATION, authorization);
        }
        for (name, value) in &self.target.headers {
            request = request.header(name, value);
        }
        request
            .body(Full::new(body))
            .map_err(|e| format!("cannot build the request: {e}"))
    }

    /// The open connection, or a new one.
    async fn connection(&mut self) -> Result<&mut SendRequest<Full<Bytes>>, String> {
        if let Some(open) = &mut self.connection {
            if open.ready().await.is_ok() {
                return Ok(self.connection.as_mut().expect("just checked"));
            }
        }
        let fresh = self.connect().await?;
        Ok(self.connection.insert(fresh))
    }

    async fn connect(&self) -> Result<SendRequest<Full<Bytes>>, String> {
        let uri = &self.target.uri;
        let host = uri.host().unwrap_or_default();
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let default_port = if self.target.tls.is_some() { 443 } else { 80 };
        let port = uri.port_u16().unwrap_or(default_port);
        let tcp = TcpStream::connect((host, port))
            .await
            .map_err(|e| format!("cannot connect to {host}:{port}: {e}"))?;
        let _ = tcp.set_nodelay(true);
        match &self.target.tls {
            None => handshake(tcp).await,
            Some(tls) => {
                let connector = tokio_rustls::TlsConnector::from(tls.config.clone());
                let stream = connector
                    .connect(tls.server_name.clone(), tcp)
                    .await
                    .map_err(|e| format!("TLS with {host}:{port} failed: {e}"))?;
                handshake(stream).await
            }
        }
    }
}

/// HTTP/1.1 over `stream`; the connection is driven by a task of its own until it closes.
async fn handshake<S>(stream: S) -> Result<SendRequest<Full<Bytes>>, String>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("HTTP handshake failed: {e}"))?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!("remote-write connection closed: {e}");
        }
    });
    Ok(sender)
}
