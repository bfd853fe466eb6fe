//! The HTTP server loop: no client can take `/metrics` away from the others.
//!
//! axum's own `serve` has no header-read timeout and no connection cap: one client sending
//! half a header held SIGTERM up for as long as it liked, and about 1,100 idle connections used
//! up the descriptors `accept()` needed, so `/metrics` stopped answering with nothing logged.
//! Here:
//!
//! - a request head must arrive within [`ServeOptions::header_read_timeout`] (idle keep-alive
//!   connections too), and a request is answered within [`ServeOptions::request_timeout`];
//! - a connection takes one of [`ServeOptions::max_connections`] places only once its client
//!   has sent something: idle connections wait outside (and are closed after a header-read
//!   timeout), so they cannot fill the places a scraper needs; at most
//!   [`WAITING_PER_PLACE`] per place may wait, the rest are closed at once, and the listener
//!   always keeps accepting;
//! - `accept()` errors (out of descriptors) are logged, rate-limited, and retried after a pause
//!   instead of spinning;
//! - on shutdown the listener closes, connections finish their request, and whatever is left
//!   after [`ServeOptions::shutdown_grace`] is dropped.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tower::ServiceExt;

/// Limits of the HTTP server.
#[derive(Debug, Clone, Copy)]
pub struct ServeOptions {
    /// `--web.max-connections`: connections served at once.
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

/// Connections that may wait for a place, per place: beyond that they are closed at once.
const WAITING_PER_PLACE: usize = 64;

/// Serves `app` on `listener` until `shutdown` completes; returns within
/// [`ServeOptions::shutdown_grace`] after that, whatever clients do.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
    options: ServeOptions,
) -> std::io::Result<()> {
    let places = Arc::new(Semaphore::new(options.max_connections.max(1)));
    let waiting = Arc::new(Semaphore::new(
        options.max_connections.max(1) * WAITING_PER_PLACE,
    ));
    let (closing, closed) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut accept_errors = 0u64;
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            () = &mut shutdown => break,
            accepted = accept(&listener, &mut accept_errors) => accepted,
        };
        let Some(stream) = stream else { continue };
        // Reap finished connections so the set does not grow.
        while connections.try_join_next().is_some() {}
        let Ok(wait_ticket) = waiting.clone().try_acquire_owned() else {
            drop(stream);
            continue;
        };
        let places = places.clone();
        let (app, closed) = (app.clone(), closed.clone());
        connections.spawn(async move {
            // A client that sends nothing within the header-read timeout never takes a place.
            if !spoke(&stream, options.header_read_timeout).await {
                return;
            }
            let Ok(place) = places.acquire_owned().await else {
                return;
            };
            drop(wait_ticket);
            connection(stream, app, closed, place, options).await;
        });
    }
    drop(listener);
    let _ = closing.send(true);
    drain(connections, options.shutdown_grace).await;
    Ok(())
}

/// The next connection; `None` after an error, which is logged (1st, 2nd, 4th...) and
/// followed by a pause, so that running out of descriptors neither spins nor goes unsaid.
async fn accept(listener: &TcpListener, errors: &mut u64) -> Option<TcpStream> {
    match listener.accept().await {
        Ok((stream, _)) => Some(stream),
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

/// Whether the client sent a byte within `timeout`. (`readable()` is no test: a fresh socket
/// may report ready with nothing to read; `peek` waits for a byte.)
async fn spoke(stream: &TcpStream, timeout: Duration) -> bool {
    let mut first = [0u8; 1];
    let peeked = tokio::time::timeout(timeout, stream.peek(&mut first)).await;
    matches!(peeked, Ok(Ok(n)) if n > 0)
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

/// Serves one connection, holding its `place` until it ends.
async fn connection(
    stream: TcpStream,
    app: Router,
    mut closed: watch::Receiver<bool>,
    place: OwnedSemaphorePermit,
    options: ServeOptions,
) {
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let app = app.clone();
        async move {
            let answer = tokio::time::timeout(
                options.request_timeout,
                app.oneshot(request.map(axum::body::Body::new)),
            );
            match answer.await {
                Ok(response) => response,
                Err(_) => Ok(timed_out()),
            }
        }
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(options.header_read_timeout);
    let conn = http.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        () = until_closing(&mut closed) => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
    drop(place);
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
