//! The HTTP server loop: no client can take `/metrics` away from the others.
//!
//! axum's own `serve` has no header-read timeout and no connection cap: one client sending
//! half a header held SIGTERM up for as long as it liked, and about 1,100 idle connections used
//! up the descriptors `accept()` needed, so `/metrics` stopped answering with nothing logged.
//! Here:
//!
//! - a request head must arrive within [`ServeOptions::header_read_timeout`] (idle keep-alive
//!   connections too), and a request is answered within [`ServeOptions::request_timeout`];
//! - a *request* takes one of [`ServeOptions::max_connections`] places while it is answered:
//!   a connection that is idle or still sending its head takes none, so connections that send
//!   a byte and stall (200 of them held every place) cannot make
//!   a scraper wait;
//! - at most [`WAITING_PER_PLACE`] connections per place are open; at that cap a new
//!   connection closes the one that has waited longest without a request being answered, so a
//!   scraper, which sends its request at once, always gets in, and the listener always keeps
//!   accepting;
//! - `accept()` errors (out of descriptors) are logged, rate-limited, and retried after a pause
//!   instead of spinning;
//! - on shutdown the listener closes, connections finish their request, and whatever is left
//!   after [`ServeOptions::shutdown_grace`] is dropped.
//!
//! With a web config file ([`WebConfigHandle`]), a connection first runs its TLS handshake,
//! within the header-read timeout and while idle in the lobby (it holds no place, can be
//! evicted, and shutdown does not wait for it). A request then passes basic auth *before* it
//! takes a place, so requests waiting for a bcrypt check never keep a scraper from a place,
//! and shutdown answers them 503 instead of waiting; every response, a 401 included, carries
//! the configured headers.

use std::collections::BTreeMap;
use std::future::Future;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};
use tokio::task::{AbortHandle, JoinSet};
use tower::ServiceExt;

use super::auth::{self, Verdict};
use super::tls;
use super::web_config::WebConfigHandle;

/// Limits of the HTTP server.
#[derive(Debug, Clone, Copy)]
pub struct ServeOptions {
    /// `--web.max-connections`: requests answered at once.
    pub max_connections: usize,
    pub header_read_timeout: Duration,
    pub request_timeout: Duration,
    /// How long shutdown waits for connections before it drops them.
    pub shutdown_grace: Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            max_connections: 64,
            header_read_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(30),
            shutdown_grace: Duration::from_secs(4),
        }
    }
}

/// Open connections per place: at that cap, the longest-waiting idle one is closed for a new one.
const WAITING_PER_PLACE: usize = 64;

/// The open connections, oldest first, and whether each is being answered.
#[derive(Default)]
struct Lobby {
    next: u64,
    open: BTreeMap<u64, (Arc<AtomicBool>, AbortHandle)>,
}

impl Lobby {
    /// Closes the oldest connection that is not being answered; false if every one is.
    fn close_oldest_idle(&mut self) -> bool {
        let oldest = self
            .open
            .iter()
            .find(|(_, (answering, _))| !answering.load(Ordering::SeqCst))
            .map(|(id, _)| *id);
        let Some(id) = oldest else {
            return false;
        };
        if let Some((_, handle)) = self.open.remove(&id) {
            handle.abort();
        }
        true
    }
}

/// Removes a connection from the lobby when its task ends (or is aborted).
struct LobbyTicket {
    lobby: Arc<Mutex<Lobby>>,
    id: u64,
}

impl Drop for LobbyTicket {
    fn drop(&mut self) {
        let mut lobby = self.lobby.lock().unwrap_or_else(PoisonError::into_inner);
        lobby.open.remove(&self.id);
    }
}

/// Serves `app` on `listener`, over TLS and behind basic auth if `web` says so, until `shutdown`
/// completes; returns within [`ServeOptions::shutdown_grace`] after that, whatever clients do.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    web: Arc<WebConfigHandle>,
    shutdown: impl Future<Output = ()> + Send + 'static,
    options: ServeOptions,
) -> std::io::Result<()> {
    let places = Arc::new(Semaphore::new(options.max_connections.max(1)));
    let cap = options.max_connections.max(1) * WAITING_PER_PLACE;
    let lobby = Arc::new(Mutex::new(Lobby::default()));
    let (closing, closed) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut accept_errors = 0u64;
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            () = &mut shutdown => break,
            accepted = accept(&listener, &mut accept_errors) => accepted,
        };
        let Some((stream, peer)) = stream else {
            continue;
        };
        // Reap finished connections so the set does not grow.
        while connections.try_join_next().is_some() {}
        let mut open = lobby.lock().unwrap_or_else(PoisonError::into_inner);
        if open.open.len() >= cap && !open.close_oldest_idle() {
            // Every connection is being answered: the newcomer is the one to go.
            drop(stream);
            continue;
        }
        let id = open.next;
        open.next += 1;
        let answering = Arc::new(AtomicBool::new(false));
        let ticket = LobbyTicket {
            lobby: Arc::clone(&lobby),
            id,
        };
        let served = Served {
            app: app.clone(),
            web: Arc::clone(&web),
            closed: closed.clone(),
            places: Arc::clone(&places),
            answering: Arc::clone(&answering),
            peer,
            options,
        };
        let handle = connections.spawn(async move {
            let _ticket = ticket;
            connection(stream, served).await;
        });
        // Registered under the lobby's lock, which the task's ticket takes when it ends: even
        // a task that ends at once on another worker finds its entry to remove.
        open.open.insert(id, (answering, handle));
    }
    drop(listener);
    let _ = closing.send(true);
    drain(connections, options.shutdown_grace).await;
    Ok(())
}

/// The next connection; `None` after an error, which is logged (1st, 2nd, 4th...) and
/// followed by a pause, so that running out of descriptors neither spins nor goes unsaid.
async fn accept(listener: &TcpListener, errors: &mut u64) -> Option<(TcpStream, IpAddr)> {
    match listener.accept().await {
        Ok((stream, peer)) => Some((stream, peer.ip())),
        Err(e) => {
            *errors += 1;
            if errors.is_power_of_two() {
                tracing::warn!(
                    errors_so_far = *errors,
                    "cannot accept a connection: {e} (out of file descriptors? see LimitNOFILE)"
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
            None
        }
    }
}

/// Lets open connections finish for `grace`, then drops the rest.
async fn drain(mut connections: JoinSet<()>, grace: Duration) {
    let drained = tokio::time::timeout(grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            left = connections.len(),
            "connections still open at shutdown were dropped"
        );
        connections.abort_all();
    }
}

/// What serving one connection needs besides the stream.
struct Served {
    app: Router,
    web: Arc<WebConfigHandle>,
    /// Says when the server is closing.
    closed: watch::Receiver<bool>,
    places: Arc<Semaphore>,
    /// Whether this connection's request is being answered (the lobby spares it then).
    answering: Arc<AtomicBool>,
    /// The client's address, for the standing of its password checks.
    peer: IpAddr,
    options: ServeOptions,
}

/// Serves one connection, over TLS if the web configuration in force when it arrived says so.
async fn connection(stream: TcpStream, mut served: Served) {
    let Some(tls) = served.web.current().tls.clone() else {
        return http(TokioIo::new(stream), served).await;
    };
    let handshake = tls::handshake(stream, tls, served.options.header_read_timeout);
    let stream = tokio::select! {
        stream = handshake => stream,
        // Shutdown does not wait for a handshake: no request has been made on it.
        () = until_closing(&mut served.closed) => None,
    };
    if let Some(stream) = stream {
        http(TokioIo::new(stream), served).await;
    }
}

/// Serves HTTP/1.1 on `io`; each request passes basic auth, then holds one of the `places`
/// while it is answered.
async fn http<I>(io: I, served: Served)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let Served {
        app,
        web,
        mut closed,
        places,
        answering,
        peer,
        options,
    } = served;
    let stopping = closed.clone();
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let (app, places, answering) = (app.clone(), Arc::clone(&places), Arc::clone(&answering));
        let (web, mut stopping) = (Arc::clone(&web), stopping.clone());
        async move {
            answering.store(true, Ordering::SeqCst);
            let config = web.current();
            let answer = tokio::time::timeout(options.request_timeout, async {
                let checked = tokio::select! {
                    verdict = web.checker.check(&config.users, request.headers(), peer) => verdict,
                    // Shutdown does not wait for a password check: no answer has begun.
                    () = until_closing(&mut stopping) => Verdict::Busy,
                };
                match checked {
                    Verdict::Allowed => {}
                    Verdict::Denied => return Ok(auth::unauthorized()),
                    Verdict::Busy => return Ok(auth::busy()),
                }
                let _place = places.acquire_owned().await;
                app.oneshot(request.map(axum::body::Body::new)).await
            });
            let mut response = match answer.await {
                Ok(response) => response,
                Err(_) => Ok(timed_out()),
            };
            if let Ok(response) = &mut response {
                for (name, value) in &config.headers {
                    response.headers_mut().insert(name.clone(), value.clone());
                }
            }
            answering.store(false, Ordering::SeqCst);
            response
        }
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(options.header_read_timeout);
    let conn = http.serve_connection(io, service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        () = until_closing(&mut closed) => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}

/// Completes once the server is closing (or gone).
async fn until_closing(closed: &mut watch::Receiver<bool>) {
    while !*closed.borrow_and_update() {
        if closed.changed().await.is_err() {
            return;
        }
    }
}

fn timed_out() -> axum::response::Response {
    use axum::response::IntoResponse;
    (
        axum::http::StatusCode::SERVICE_UNAVAILABLE,
        "the request took too long\n",
    )
        .into_response()
}

/// Raises the soft limit on open descriptors to the hard limit, as Go programs do at start-up:
/// every followed file and every connection holds one, and the default soft limit of 1,024
/// runs out first.
pub fn raise_descriptor_limit() {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => tracing::debug!(limit, "open file limit"),
        Err(e) => tracing::warn!("cannot raise the open file limit: {e}"),
    }
}
