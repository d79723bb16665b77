//! The physical limit: pgbench running the lesson's transaction on the same PostgreSQL.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use sqlx::postgres::PgConnectOptions;
use sqlx::{Connection, Executor, PgConnection};

use crate::stats::Samples;

/// One learner cycle on raw PostgreSQL: the lesson's transaction (BEGIN, guarded UPDATE,
/// INSERT into the outbox, COMMIT) on the client's own ticket, then the ticket put back, as
/// the playground's reset does between attempts.
const SCRIPT: &str = r#"BEGIN;
UPDATE tickets SET status = 'resolved' WHERE id = 'ticket-' || :client_id AND status = 'open';
INSERT INTO outbox (event_id, aggregate_id, payload, published_at) VALUES ('event-' || nextval('event_seq'), 'ticket-' || :client_id, '{"ticket_id": "ticket-42", "from": "open", "to": "resolved"}'::jsonb, NULL);
COMMIT;
DELETE FROM outbox WHERE aggregate_id = 'ticket-' || :client_id;
UPDATE tickets SET status = 'open' WHERE id = 'ticket-' || :client_id;
"#;

pub struct PgBench {
    pub binary: PathBuf,
    pub server: PgConnectOptions,
    pub database: String,
    pub work_dir: PathBuf,
}

impl PgBench {
    /// A database with the lesson's tables and one open ticket per client.
    pub async fn prepare(&self, max_clients: usize) -> Result<()> {
        let mut admin = PgConnection::connect_with(&self.server.clone().database("postgres"))
            .await
            .context("connecting to PostgreSQL")?;
        // The name is ours (a constant), so formatting it into DDL is safe.
        admin
            .execute(format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.database).as_str())
            .await?;
        admin
            .execute(format!("CREATE DATABASE {}", self.database).as_str())
            .await?;
        let mut db =
            PgConnection::connect_with(&self.server.clone().database(&self.database)).await?;
        db.execute(
            "CREATE TABLE tickets (id text PRIMARY KEY, status text NOT NULL);
             CREATE TABLE outbox (
                 event_id     text        PRIMARY KEY,
                 aggregate_id text        NOT NULL REFERENCES tickets(id),
                 payload      jsonb       NOT NULL,
                 published_at timestamptz NULL);
             CREATE SEQUENCE event_seq;",
        )
        .await?;
        sqlx::query(
            "INSERT INTO tickets (id, status) \
             SELECT 'ticket-' || i, 'open' FROM generate_series(0, $1) AS i",
        )
        .bind(max_clients as i32)
        .execute(&mut db)
        .await?;
        std::fs::create_dir_all(&self.work_dir)?;
        std::fs::write(self.work_dir.join("lesson.sql"), SCRIPT)?;
        Ok(())
    }

    pub fn run(&self, clients: usize, duration: Duration) -> Result<Samples> {
        let logs = self.work_dir.join(format!("c{clients}"));
        let _ = std::fs::remove_dir_all(&logs);
        std::fs::create_dir_all(&logs)?;
        let threads = clients.clamp(1, 4);
        let output = Command::new(&self.binary)
            .args(["-n", "-M", "prepared", "-l"])
            .arg("--log-prefix")
            .arg(logs.join("tx"))
            .args(["-c", &clients.to_string(), "-j", &threads.to_string()])
            .args(["-T", &duration.as_secs().max(1).to_string()])
            .arg("-f")
            .arg(self.work_dir.join("lesson.sql"))
            .args(["-h", self.server.get_host()])
            .args(["-p", &self.server.get_port().to_string()])
            .args(["-U", self.server.get_username()])
            .arg(&self.database)
            .output()
            .context("running pgbench")?;
        if !output.status.success() {
            bail!(
                "pgbench failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let mut samples = read_logs(&logs)?;
        samples.elapsed = duration;
        samples.errors = failed_transactions(&String::from_utf8_lossy(&output.stdout));
        Ok(samples)
    }
}

impl PgBench {
    /// `transactions` cycles on one connection to `127.0.0.1:port` (the cost relay), without
    /// TLS so that the relay can read the messages.
    pub fn transactions_via(&self, port: u16, transactions: u64) -> Result<()> {
        let output = Command::new(&self.binary)
            .env("PGSSLMODE", "disable")
            .args(["-n", "-M", "prepared", "-c", "1"])
            .args(["-t", &transactions.to_string()])
            .arg("-f")
            .arg(self.work_dir.join("lesson.sql"))
            .args(["-h", "127.0.0.1", "-p", &port.to_string()])
            .args(["-U", self.server.get_username()])
            .arg(&self.database)
            .output()
            .context("running pgbench through the relay")?;
        if !output.status.success() {
            bail!(
                "pgbench through the relay failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(())
    }
}

impl PgBench {
    /// The mean latency in ms of `sql` (our own constant text, with a server-generated sandbox
    /// name), run alone on one connection to `database` for `duration`.
    pub fn latency_of(&self, sql: &str, database: &str, duration: Duration) -> Result<f64> {
        let script = self.work_dir.join("statement.sql");
        std::fs::write(&script, sql)?;
        let output = Command::new(&self.binary)
            .args(["-n", "-M", "prepared", "-c", "1"])
            .args(["-T", &duration.as_secs().max(1).to_string()])
            .arg("-f")
            .arg(&script)
            .args(["-h", self.server.get_host()])
            .args(["-p", &self.server.get_port().to_string()])
            .args(["-U", self.server.get_username()])
            .arg(database)
            .output()
            .context("running pgbench on one statement")?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            bail!(
                "pgbench on one statement failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix("latency average ="))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|ms| ms.parse().ok())
            .context("pgbench printed no average latency")
    }
}

/// pgbench's per-transaction log: `client_id transaction_no time_us script_no epoch us`.
fn read_logs(dir: &Path) -> Result<Samples> {
    let mut samples = Samples::default();
    for entry in std::fs::read_dir(dir)? {
        let text = std::fs::read_to_string(entry?.path())?;
        for line in text.lines() {
            let field = line.split_whitespace().nth(2).unwrap_or("skipped");
            match field.parse::<u64>() {
                Ok(us) => samples.micros.push(us),
                Err(_) => samples.errors += 1,
            }
        }
    }
    Ok(samples)
}

fn failed_transactions(stdout: &str) -> u64 {
    stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("number of failed transactions:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}
