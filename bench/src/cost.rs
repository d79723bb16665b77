//! What one action costs PostgreSQL, beside pgbench's cycle: round trips, counted on the wire
//! by a relay between the client and PostgreSQL (each ReadyForQuery ends one), and WAL bytes,
//! from `pg_current_wal_insert_lsn()` before and after.
//!
//! A second server (the "cost server") is started for this, connected through the relay, with
//! no warm pool, so that nothing but the measured learner talks to PostgreSQL through it.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
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

/// Round trips ended so far on every relayed connection.
#[derive(Clone, Default)]
pub struct Counter(Arc<AtomicU64>);

impl Counter {
    fn get(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
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
    let upward = async move {
        let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
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
            let ready = messages.feed(&buf[..n]);
            counter.0.fetch_add(ready, Ordering::SeqCst);
            if client_write.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        let _ = client_write.shutdown().await;
    };
    tokio::join!(upward, downward);
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
    let (attempt, reset, cookie) = result?;
    let token = cookie.split_once('=').map_or("", |(_, token)| token);
    let statements = statement_times(server, pgbench, token).await?;
    Ok(Costs {
        attempt,
        reset,
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

async fn measure_playground(
    relay: &Relay,
    admin: &mut PgConnection,
    client: &Client,
) -> Result<(Cost, Cost, String)> {
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
    let (mut attempt, mut reset) = ((0, 0), (0, 0));
    for _ in 0..ACTIONS {
        for (path, form, sum) in [
            ("/api/attempt", "crash=none", &mut attempt),
            ("/api/reset", "", &mut reset),
        ] {
            let trips = relay.settled().await;
            let wal = wal_position(admin).await?;
            ok(client.post(path, form, Some(&cookie)).await?.status, path)?;
            sum.0 += relay.settled().await - trips;
            sum.1 += wal_position(admin).await? - wal;
        }
    }
    Ok((
        per_action(attempt.0, attempt.1),
        per_action(reset.0, reset.1),
        cookie,
    ))
}

async fn start_cost_server(server: &CostServer, relay_port: u16) -> Result<(Child, String)> {
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0")?;
        probe.local_addr()?.port()
    };
    let through_relay = via_relay(&server.pg_server_url, relay_port, &server.database);
    let child = Command::new(&server.binary)
        .env("DATABASE_URL", through_relay)
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
        .with_context(|| format!("starting {}", server.binary.display()))?;
    let url = format!("http://127.0.0.1:{port}");
    let client = Client::new(&url);
    for _ in 0..300 {
        if client.health().await {
            return Ok((child, url));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("the cost server did not become healthy")
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

    #[test]
    fn ready_for_query_is_counted_across_reads() {
        // ParseComplete (1), then ReadyForQuery split over three reads.
        let mut m = Messages::default();
        assert_eq!(m.feed(&[b'1', 0, 0, 0, 4, b'Z', 0]), 0);
        assert_eq!(m.feed(&[0, 0]), 0);
        assert_eq!(m.feed(&[5, b'I', b'Z', 0, 0, 0, 5, b'T']), 2);
    }
}
