//! A learner's stepper socket, and what PostgreSQL says about a sandbox, for the tests that
//! drive `/api/step` over a real WebSocket.

use std::net::SocketAddr;
use std::time::Duration;

use app::backend::request::WebSettings;
use futures_util::{SinkExt, StreamExt};
use outbox_lab::catalog::{CrashPoint, Mode, Slot};
use outbox_lab::pg::{LabConfig, RateLimit};
use serde_json::{Value, json};
use sqlx::PgPool;
use sqlx::postgres::PgConnectOptions;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{self, Message as Frame};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::{app_with, cookie_pair};

/// Generous: a wait that takes this long is a failure, never a pace.
pub const PATIENCE: Duration = Duration::from_secs(30);

pub fn config() -> LabConfig {
    LabConfig {
        // Many learners from one test address.
        claims_per_client: RateLimit {
            per_second: 100.0,
            burst: 1000.0,
        },
        rate: RateLimit {
            per_second: 1000.0,
            burst: 1000.0,
        },
        ..LabConfig::default()
    }
}

/// The router on a real socket, so WebSockets can reach it.
pub async fn serve(opts: PgConnectOptions, config: LabConfig) -> (SocketAddr, axum::Router) {
    let router = app_with(opts, config, WebSettings::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let served = router.clone();
    // The server's own accept loop (header-read limit, peer address), never shut down.
    tokio::spawn(server::serve::serve(
        listener,
        served,
        std::future::pending(),
        server::serve::HEADER_READ_LIMIT,
    ));
    (addr, router)
}

pub struct Socket {
    pub ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    /// `sandbox=…` for HTTP calls as the same learner.
    pub cookie: String,
}

impl Socket {
    /// Opens `/api/step` as a learner: `cookie` names their sandbox, or a newcomer gets one.
    pub async fn open(addr: SocketAddr, cookie: Option<&str>) -> Socket {
        let (ws, cookie) = Self::try_open(addr, cookie, &[]).await.expect("upgraded");
        Socket { ws, cookie }
    }

    pub async fn try_open(
        addr: SocketAddr,
        cookie: Option<&str>,
        extra: &[(&'static str, &str)],
    ) -> Result<(WebSocketStream<MaybeTlsStream<TcpStream>>, String), tungstenite::Error> {
        let mut request = format!("ws://{addr}/api/step").into_client_request()?;
        if let Some(c) = cookie {
            request.headers_mut().insert("cookie", c.parse().unwrap());
        }
        for (k, v) in extra {
            request.headers_mut().insert(*k, v.parse().unwrap());
        }
        let (ws, response) = tokio_tungstenite::connect_async(request).await?;
        let cookie = match cookie {
            Some(c) => c.to_owned(),
            None => response
                .headers()
                .get_all("set-cookie")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .find(|v| v.starts_with("sandbox="))
                .map(cookie_pair)
                .expect("a newcomer's socket sets the sandbox cookie"),
        };
        Ok((ws, cookie))
    }

    pub async fn send(&mut self, command: Value) {
        self.ws
            .send(Frame::Text(command.to_string().into()))
            .await
            .unwrap();
    }

    pub async fn recv(&mut self) -> Value {
        loop {
            let frame = tokio::time::timeout(PATIENCE, self.ws.next())
                .await
                .expect("an answer in time")
                .expect("the socket is open")
                .expect("a frame");
            if let Frame::Text(text) = frame {
                return serde_json::from_str(text.as_str()).unwrap();
            }
        }
    }

    pub async fn pause(&mut self) -> Value {
        let m = self.recv().await;
        m.get("pause")
            .cloned()
            .unwrap_or_else(|| panic!("a pause: {m}"))
    }

    pub async fn report(&mut self) -> Value {
        let m = self.recv().await;
        m.get("report")
            .cloned()
            .unwrap_or_else(|| panic!("a report: {m}"))
    }

    pub async fn error(&mut self) -> Value {
        let m = self.recv().await;
        m.get("error")
            .cloned()
            .unwrap_or_else(|| panic!("an error: {m}"))
    }

    pub async fn begin(&mut self, mode: Mode) -> Value {
        self.send(json!({"cmd": "begin", "mode": mode.id()})).await;
        self.pause().await
    }

    /// Steps on until the function is held at `at`.
    pub async fn step_to(&mut self, mode: Mode, at: CrashPoint) -> Value {
        let mut pause = self.begin(mode).await;
        while pause["at"] != at.id() {
            self.send(json!({"cmd": "next"})).await;
            pause = self.pause().await;
        }
        pause
    }
}

/// The pauses of a mode, in order: its crash points as the timeline draws them.
pub fn pauses_of(mode: Mode) -> Vec<CrashPoint> {
    mode.timeline()
        .iter()
        .filter_map(|s| match s {
            Slot::Crash(c) => Some(*c),
            Slot::Step(_) => None,
        })
        .collect()
}

pub fn status(snapshot: &Value) -> &str {
    snapshot["tickets"][0]["status"].as_str().unwrap()
}

pub fn outbox_rows(snapshot: &Value) -> usize {
    snapshot["outbox"].as_array().unwrap().len()
}

pub async fn pool(opts: &PgConnectOptions) -> PgPool {
    PgPool::connect_with(opts.clone()).await.unwrap()
}

/// What PostgreSQL itself says of the learner's sandbox (not the stepper's report).
pub async fn tables(pg: &PgPool, sandbox: &str) -> (String, i64) {
    let status: String = sqlx::query_scalar(&format!(
        "SELECT status FROM \"{sandbox}\".tickets WHERE id = 'ticket-42'"
    ))
    .fetch_one(pg)
    .await
    .unwrap();
    let rows: i64 = sqlx::query_scalar(&format!("SELECT count(*) FROM \"{sandbox}\".outbox"))
        .fetch_one(pg)
        .await
        .unwrap();
    (status, rows)
}

pub async fn backend_alive(pg: &PgPool, pid: i64) -> bool {
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1::int)")
        .bind(pid)
        .fetch_one(pg)
        .await
        .unwrap()
}

/// Stepped backends, `idle in transaction` sessions and locks on sandbox tables left behind.
pub async fn leftovers(pg: &PgPool) -> (i64, i64, i64) {
    sqlx::query_as(
        "SELECT \
           (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
              AND application_name LIKE 'outbox-step:%'), \
           (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
              AND state LIKE 'idle in transaction%'), \
           (SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation \
              JOIN pg_namespace n ON n.oid = c.relnamespace \
              WHERE n.nspname LIKE 'sb\\_%' AND l.pid <> pg_backend_pid())",
    )
    .fetch_one(pg)
    .await
    .unwrap()
}

/// Polls PostgreSQL until `done` holds (PostgreSQL has no notification for a backend's exit).
pub async fn until<F, Fut>(what: &str, mut done: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = std::time::Instant::now();
    while !done().await {
        assert!(start.elapsed() < PATIENCE, "never: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
