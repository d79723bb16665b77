//! Serving HTTP/1.1 with bounds `axum::serve` does not set: a client must send its request
//! headers within [`HEADER_READ_LIMIT`] (a connection trickling a header line every few
//! seconds would otherwise stay open for ever and hold up a graceful shutdown), and a shutdown
//! waits a bounded time for requests in flight.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// How long a client may take to send a request's headers.
pub const HEADER_READ_LIMIT: Duration = Duration::from_secs(10);
/// How long a shutdown waits for requests in flight.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(15);

/// Serves `app` on `listener` until `shutdown` resolves, then lets requests in flight finish
/// (bounded). Each request carries its peer's address as axum's `ConnectInfo`; a client gets
/// `header_read_limit` (normally [`HEADER_READ_LIMIT`]) to send a request's headers.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()>,
    header_read_limit: Duration,
) {
    let graceful = GracefulShutdown::new();
    let mut http = Builder::new(TokioExecutor::new());
    http.http1()
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_limit);
    let http = http.http1_only();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, say: the next accept may work; do not spin.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request
                .extensions_mut()
                .insert(ConnectInfo::<SocketAddr>(peer));
            let app = app.clone();
            async move {
                let response = app.oneshot(request.map(axum::body::Body::new)).await;
                Ok::<_, Infallible>(response.unwrap_or_else(|never| match never {}))
            }
        });
        let connection = http.serve_connection_with_upgrades(TokioIo::new(stream), service);
        let connection = graceful.watch(connection.into_owned());
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, %peer, "connection ended with an error");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN_LIMIT, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("requests still in flight after {DRAIN_LIMIT:?}; stopping anyway");
    }
}
