//! What one action costs PostgreSQL, beside pgbench's cycle: round trips, counted on the wire
//! by a relay between the client and PostgreSQL (each ReadyForQuery ends one), and WAL bytes,
//! from `pg_current_wal_insert_lsn()` before and after.
//!
//! A second server (the "cost server") is started for this, connected through the relay, with
//! no warm pool, so that nothing but the measured learner talks to PostgreSQL through it.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use http::StatusCode;
use sqlx::postgres::PgConnectOptions;
use sqlx::{Connection, PgConnection};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, Command};

use crate::http_load::Client;
use crate::pgbench::PgBench;

/// Actions measured, one after another, for each average.
const ACTIONS: u64 = 50;

/// Round trips ended so far on every relayed connection, in all and by what each one ran.
#[derive(Clone, Default)]
pub struct Counter {
    total: Arc<AtomicU64>,
    by_statement: Arc<Mutex<HashMap<String, u64>>>,
}

impl Counter {
    fn get(&self) -> u64 {
        self.total.load(Ordering::SeqCst)
    }

    fn count(&self, label: String) {
        *self.statements().entry(label).or_default() += 1;
        self.total.fetch_add(1, Ordering::SeqCst);
    }

    fn by_statement(&self) -> HashMap<String, u64> {
        self.statements().clone()
    }

    fn statements(&self) -> std::sync::MutexGuard<'_, HashMap<String, u64>> {
        self.by_statement
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A TCP relay to PostgreSQL that counts the server's ReadyForQuery messages.
pub struct Relay {
    pub port: u16,
    pub round_trips: Counter,
}

impl Relay {
    pub async fn start(upstream: (String, u16)) -> Result<Relay> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let round_trips = Counter::default();
        let counter = round_trips.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let upstream = upstream.clone();
                let counter = counter.clone();
                tokio::spawn(async move {
                    if let Ok(server) = TcpStream::connect((upstream.0.as_str(), upstream.1)).await
                    {
                        relay(client, server, counter).await;
                    }
                });
            }
        });
        Ok(Relay { port, round_trips })
    }

    /// Waits until no round trip has ended for a while: a pooled connection's check on its
    /// way back to the pool may come after the HTTP answer.
    async fn settled(&self) -> u64 {
        loop {
            let seen = self.round_trips.get();
            tokio::time::sleep(Duration::from_millis(30)).await;
            if self.round_trips.get() == seen {
                return seen;
            }
        }
    }
}

async fn relay(client: TcpStream, server: TcpStream, counter: Counter) {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    // What each round trip ran: a label per Sync (or simple Query) the client sent, taken in
    // order as the server's ReadyForQuery messages answer them.
    let asked = Arc::new(Mutex::new(VecDeque::<String>::new()));
    let asked_up = Arc::clone(&asked);
    let upward = async move {
        let mut requests = Requests::default();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match client_read.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let labels = requests.feed(&buf[..n]);
            if !labels.is_empty() {
                lock(&asked_up).extend(labels);
            }
            if server_write.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        let _ = server_write.shutdown().await;
    };
    let downward = async move {
        let mut messages = Messages::default();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match server_read.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            for _ in 0..messages.feed(&buf[..n]) {
                // The first ReadyForQuery ends the connection's start-up: nothing asked it.
                let label = lock(&asked)
                    .pop_front()
                    .unwrap_or_else(|| "(connection start-up)".to_owned());
                counter.count(label);
            }
            if client_write.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        let _ = client_write.shutdown().await;
    };
    tokio::join!(upward, downward);
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Reads the client's messages (after the untyped start-up message) and names each round trip
/// it asks for: a simple Query by its text; an extended-protocol batch ending in Sync by the
/// statement it executed (or "prepare: …" when it only parsed one), the text found through
/// the prepared statement's name.
#[derive(Default)]
struct Requests {
    started: bool,
    buf: Vec<u8>,
    prepared: HashMap<String, String>,
    statement: Option<String>,
    executed: bool,
}

impl Requests {
    fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        self.buf.extend_from_slice(bytes);
        let mut labels = Vec::new();
        loop {
            let (kind, header) = if self.started {
                let Some(&kind) = self.buf.first() else { break };
                (Some(kind), 1)
            } else {
                (None, 0)
            };
            let Some(length) = self.buf.get(header..header + 4) else {
                break;
            };
            let length = u32::from_be_bytes([length[0], length[1], length[2], length[3]]) as usize;
            let end = header + length;
            if self.buf.len() < end {
                break;
            }
            let body: Vec<u8> = self.buf[header + 4..end].to_vec();
            self.buf.drain(..end);
            match kind {
                None => self.started = true,
                Some(kind) => {
                    if let Some(label) = self.message(kind, &body) {
                        labels.push(label);
                    }
                }
            }
        }
        labels
    }

    fn message(&mut self, kind: u8, body: &[u8]) -> Option<String> {
        let mut parts = body
            .split(|&b| b == 0)
            .map(|p| String::from_utf8_lossy(p).into_owned());
        match kind {
            b'Q' => Some(label(&parts.next().unwrap_or_default())),
            b'P' => {
                let (name, sql) = (
                    parts.next().unwrap_or_default(),
                    parts.next().unwrap_or_default(),
                );
                self.prepared.insert(name, sql.clone());
                self.statement = Some(sql);
                None
            }
            b'B' => {
                let _portal = parts.next();
                let name = parts.next().unwrap_or_default();
                self.statement = self.prepared.get(&name).cloned();
                None
            }
            b'E' => {
                self.executed = true;
                None
            }
            b'S' => {
                let executed = std::mem::take(&mut self.executed);
                Some(match self.statement.take() {
                    // sqlx checks a pooled connection with a Sync of its own.
                    None => "(a pooled connection's check: a bare Sync)".to_owned(),
                    Some(sql) if executed => label(&sql),
                    Some(sql) => format!("prepare: {}", label(&sql)),
                })
            }
            _ => None,
        }
    }
}

/// A statement's text, short enough for a table.
fn label(sql: &str) -> String {
    const MAX: usize = 70;
    let flat: String = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &flat[..at]),
        None => flat,
    }
}

/// Splits the server's byte stream into messages (a type byte, then a length that counts
/// itself) and counts the ReadyForQuery ones. The connection must not ask for TLS.
#[derive(Default)]
struct Messages {
    header: Vec<u8>,
    skip: usize,
}

impl Messages {
    fn feed(&mut self, mut bytes: &[u8]) -> u64 {
        let mut ready = 0;
        while !bytes.is_empty() {
            if self.skip > 0 {
                let n = self.skip.min(bytes.len());
                self.skip -= n;
                bytes = &bytes[n..];
                continue;
            }
            let n = (5 - self.header.len()).min(bytes.len());
            self.header.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if self.header.len() == 5 {
                if self.header[0] == b'Z' {
                    ready += 1;
                }
                let length = u32::from_be_bytes([
                    self.header[1],
                    self.header[2],
                    self.header[3],
                    self.header[4],
                ]) as usize;
                self.skip = length.saturating_sub(4);
                self.header.clear();
            }
        }
        ready
    }
}

/// Round trips and WAL bytes per action, averaged over [`ACTIONS`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Cost {
    pub round_trips: f64,
    pub wal_bytes: f64,
}

pub struct Costs {
    pub attempt: Cost,
    pub reset: Cost,
    /// Round trips per action by what each ran, most first.
    pub attempt_by: Vec<(String, f64)>,
    pub reset_by: Vec<(String, f64)>,
    pub pgbench_cycle: Cost,
    /// A statement and its mean latency in ms, alone on one connection.
    pub statements: Vec<(String, f64)>,
}

/// Where to start the cost server from, and which database it uses.
pub struct CostServer {
    pub binary: PathBuf,
    pub pg_server: PgConnectOptions,
    pub pg_server_url: String,
    pub database: String,
}

pub async fn measure(server: &CostServer, pgbench: &PgBench) -> Result<Costs> {
    let upstream = (
        server.pg_server.get_host().to_owned(),
        server.pg_server.get_port(),
    );
    let relay = Relay::start(upstream).await?;
    let mut admin = PgConnection::connect_with(&server.pg_server.clone().database("postgres"))
        .await
        .context("connecting to PostgreSQL for the WAL position")?;

    let pgbench_cycle = {
        let (trips, wal) = (relay.settled().await, wal_position(&mut admin).await?);
        // One extra ReadyForQuery ends pgbench's connection start-up.
        tokio::task::block_in_place(|| pgbench.transactions_via(relay.port, ACTIONS))?;
        let trips = relay.settled().await - trips - 1;
        let wal = wal_position(&mut admin).await? - wal;
        per_action(trips, wal)
    };

    let (mut child, url) = start_cost_server(server, relay.port).await?;
    let result = measure_playground(&relay, &mut admin, &Client::new(&url)).await;
    let _ = child.kill().await;
    let Measured {
        attempt,
        reset,
        attempt_by,
        reset_by,
        cookie,
    } = result?;
    let token = cookie.split_once('=').map_or("", |(_, token)| token);
    let statements = statement_times(server, pgbench, token).await?;
    Ok(Costs {
        attempt,
        reset,
        attempt_by,
        reset_by,
        pgbench_cycle,
        statements,
    })
}

/// What PostgreSQL spends on the playground's heaviest statements, one client, warm caches:
/// pgbench runs each alone for a few seconds on the cost server's database (prepared, so the
/// time is the statement's own: the per-sandbox SQL inside is planned on every call).
async fn statement_times(
    server: &CostServer,
    pgbench: &PgBench,
    token: &str,
) -> Result<Vec<(String, f64)>> {
    if !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        bail!("the sandbox cookie is not a hex token");
    }
    let mut db =
        PgConnection::connect_with(&server.pg_server.clone().database(&server.database)).await?;
    let sandbox: String = sqlx::query_scalar(
        "SELECT schema_name FROM lab.sandboxes WHERE token_hash IS NOT NULL LIMIT 1",
    )
    .fetch_one(&mut db)
    .await
    .context("the cost learner's sandbox")?;
    let mut times = Vec::new();
    for (name, sql) in [
        ("`SELECT 1` (a round trip)", "SELECT 1;".to_owned()),
        (
            "`lab.snapshot` (the tables as JSON; once per action)",
            format!("SELECT lab.snapshot('{sandbox}');"),
        ),
        (
            "`lab.reset_tables` of tickets and outbox (a reset after an attempt)",
            format!("SELECT lab.reset_tables('{sandbox}', '{{tickets,outbox}}');"),
        ),
        (
            "`lab.enter_sandbox` (find the sandbox, spend the budget)",
            format!(
                "SELECT lab.enter_sandbox(sha256(decode('{token}', 'hex')), 1000000, 1000000);"
            ),
        ),
    ] {
        let ms = tokio::task::block_in_place(|| {
            pgbench.latency_of(&sql, &server.database, Duration::from_secs(3))
        })?;
        times.push((name.to_owned(), ms));
    }
    Ok(times)
}

fn per_action(round_trips: u64, wal_bytes: i64) -> Cost {
    Cost {
        round_trips: round_trips as f64 / ACTIONS as f64,
        wal_bytes: wal_bytes.max(0) as f64 / ACTIONS as f64,
    }
}

async fn wal_position(admin: &mut PgConnection) -> Result<i64> {
    let position: i64 =
        sqlx::query_scalar("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint")
            .fetch_one(admin)
            .await?;
    Ok(position)
}

/// What the playground's actions cost, and the learner that ran them.
struct Measured {
    attempt: Cost,
    reset: Cost,
    attempt_by: Vec<(String, f64)>,
    reset_by: Vec<(String, f64)>,
    cookie: String,
}

async fn measure_playground(
    relay: &Relay,
    admin: &mut PgConnection,
    client: &Client,
) -> Result<Measured> {
    let cookie = client.new_learner().await?;
    let ok = |status: StatusCode, what: &str| {
        if status == StatusCode::OK {
            Ok(())
        } else {
            bail!("{what} on the cost server answered {status}")
        }
    };
    // Warm up: the pool's connections, prepared statements, the sandbox's pages in cache.
    for _ in 0..5 {
        ok(
            client
                .post("/api/attempt", "crash=none", Some(&cookie))
                .await?
                .status,
            "attempt",
        )?;
        ok(
            client.post("/api/reset", "", Some(&cookie)).await?.status,
            "reset",
        )?;
    }
    let (mut attempt, mut reset) = ((0, 0, HashMap::new()), (0, 0, HashMap::new()));
    for _ in 0..ACTIONS {
        for (path, form, sum) in [
            ("/api/attempt", "crash=none", &mut attempt),
            ("/api/reset", "", &mut reset),
        ] {
            let trips = relay.settled().await;
            let before = relay.round_trips.by_statement();
            let wal = wal_position(admin).await?;
            ok(client.post(path, form, Some(&cookie)).await?.status, path)?;
            sum.0 += relay.settled().await - trips;
            for (label, n) in relay.round_trips.by_statement() {
                let new = n - before.get(&label).copied().unwrap_or(0);
                if new > 0 {
                    *sum.2.entry(label).or_insert(0) += new;
                }
            }
            sum.1 += wal_position(admin).await? - wal;
        }
    }
    Ok(Measured {
        attempt: per_action(attempt.0, attempt.1),
        reset: per_action(reset.0, reset.1),
        attempt_by: per_statement(attempt.2),
        reset_by: per_statement(reset.2),
        cookie,
    })
}

/// Round trips per action by statement, most first.
fn per_statement(counts: HashMap<String, u64>) -> Vec<(String, f64)> {
    let mut rows: Vec<(String, f64)> = counts
        .into_iter()
        .map(|(label, n)| (label, n as f64 / ACTIONS as f64))
        .collect();
    rows.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    rows
}

async fn start_cost_server(server: &CostServer, relay_port: u16) -> Result<(Child, String)> {
    let through_relay = via_relay(&server.pg_server_url, relay_port, &server.database);
    let mut command = Command::new(&server.binary);
    command.env("DATABASE_URL", through_relay);
    start_server(command, Duration::from_secs(30)).await
}

/// Starts `command` (the server, or a wrapper around it) as a quiet playground on a free port
/// with no warm pool and no request budget, and waits (up to `patience`) until it is healthy.
pub async fn start_server(mut command: Command, patience: Duration) -> Result<(Child, String)> {
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0")?;
        probe.local_addr()?.port()
    };
    let child = command
        .env("LEPTOS_SITE_ROOT", "target/site")
        .env("LEPTOS_SITE_PKG_DIR", "pkg")
        .env("LEPTOS_OUTPUT_NAME", "outbox-playground")
        .env("LEPTOS_SITE_ADDR", format!("127.0.0.1:{port}"))
        .env("LEPTOS_ENV", "PROD")
        .env("LEPTOS_HASH_FILES", "true")
        .env("RUST_LOG", "warn")
        .env("PLAYGROUND_WARM_SANDBOXES", "0")
        .env("PLAYGROUND_RATE_PER_SECOND", "1000000")
        .env("PLAYGROUND_RATE_BURST", "1000000")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting {:?}", command.as_std().get_program()))?;
    let url = format!("http://127.0.0.1:{port}");
    let client = Client::new(&url);
    let deadline = tokio::time::Instant::now() + patience;
    while tokio::time::Instant::now() < deadline {
        if client.health().await {
            return Ok((child, url));
        }
        // A process starting up tells nobody when it is ready; ask again shortly.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("the server did not become healthy within {patience:?}")
}

/// The server's URL with its user (and password, if any) kept, pointed at the relay; TLS off,
/// so that the relay can read the messages.
fn via_relay(pg_server_url: &str, relay_port: u16, database: &str) -> String {
    let rest = pg_server_url
        .split_once("://")
        .map_or(pg_server_url, |(_, rest)| rest);
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    let user = authority
        .rsplit_once('@')
        .map_or(String::new(), |(user, _)| format!("{user}@"));
    format!("postgres://{user}127.0.0.1:{relay_port}/{database}?sslmode=disable")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_relay_url_keeps_the_user_and_drops_the_host() {
        assert_eq!(
            via_relay("postgres://app:secret@db.example:5433", 7000, "cost"),
            "postgres://app:secret@127.0.0.1:7000/cost?sslmode=disable"
        );
        assert_eq!(
            via_relay("postgresql://127.0.0.1:5432/x?sslmode=prefer", 7000, "cost"),
            "postgres://127.0.0.1:7000/cost?sslmode=disable"
        );
    }

    fn message(kind: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![kind];
        m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    #[test]
    fn round_trips_are_named_by_the_statement_they_ran() {
        let mut r = Requests::default();
        // The start-up message has no type byte.
        let mut startup = (8u32).to_be_bytes().to_vec();
        startup.extend_from_slice(&[0, 3, 0, 0]);
        assert!(r.feed(&startup).is_empty());
        // Prepared once (Parse, Describe, Sync), then executed by name (Bind, Execute, Sync).
        let mut bytes = message(b'P', b"s1\0SELECT  lab.snapshot($1)\0\0\0");
        bytes.extend(message(b'D', b"Ss1\0"));
        bytes.extend(message(b'S', b""));
        let split = bytes.len() - 3;
        assert!(r.feed(&bytes[..split]).is_empty());
        assert_eq!(
            r.feed(&bytes[split..]),
            vec!["prepare: SELECT lab.snapshot($1)"]
        );
        let mut bytes = message(b'B', b"\0s1\0\0\0\0\0\0");
        bytes.extend(message(b'E', b"\0\0\0\0\0"));
        bytes.extend(message(b'S', b""));
        bytes.extend(message(b'Q', b"BEGIN\0"));
        assert_eq!(r.feed(&bytes), vec!["SELECT lab.snapshot($1)", "BEGIN"]);
    }

    #[test]
    fn ready_for_query_is_counted_across_reads() {
        // ParseComplete (1), then ReadyForQuery split over three reads.
        let mut m = Messages::default();
        assert_eq!(m.feed(&[b'1', 0, 0, 0, 4, b'Z', 0]), 0);
        assert_eq!(m.feed(&[0, 0]), 0);
        assert_eq!(m.feed(&[5, b'I', b'Z', 0, 0, 0, 5, b'T']), 2);
    }
}
