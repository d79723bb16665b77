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
        let mut command = self.command(&self.work_dir.join("lesson.sql"), None);
        command
            .arg("-l")
            .arg("--log-prefix")
            .arg(logs.join("tx"))
            .args(["-c", &clients.to_string(), "-j", &threads.to_string()])
            .args(["-T", &duration.as_secs().max(1).to_string()])
            .arg(&self.database);
        let stdout = run(command, "pgbench")?;
        let mut samples = read_logs(&logs)?;
        samples.elapsed = duration;
        samples.errors = failed_transactions(&stdout);
        Ok(samples)
    }

    /// `transactions` cycles on one connection to `127.0.0.1:port` (the cost relay), without
    /// TLS so that the relay can read the messages.
    pub fn transactions_via(&self, port: u16, transactions: u64) -> Result<()> {
        let lesson = self.work_dir.join("lesson.sql");
        let mut command = self.command(&lesson, Some(port));
        command
            .env("PGSSLMODE", "disable")
            .args(["-c", "1", "-t", &transactions.to_string()])
            .arg(&self.database);
        run(command, "pgbench through the relay").map(drop)
    }

    /// The mean latency in ms of `sql` (our own constant text, with a server-generated sandbox
    /// name), run alone on one connection to `database` for `duration`.
    pub fn latency_of(&self, sql: &str, database: &str, duration: Duration) -> Result<f64> {
        let script = self.work_dir.join("statement.sql");
        std::fs::write(&script, sql)?;
        let mut command = self.command(&script, None);
        command
            .args(["-c", "1", "-T", &duration.as_secs().max(1).to_string()])
            .arg(database);
        let stdout = run(command, "pgbench on one statement")?;
        stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix("latency average ="))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|ms| ms.parse().ok())
            .context("pgbench printed no average latency")
    }

    /// pgbench running `script` (prepared statements, no vacuum) on the server or, with
    /// `relay_port`, through the relay on 127.0.0.1; the caller adds its options, then the
    /// database last.
    fn command(&self, script: &Path, relay_port: Option<u16>) -> Command {
        let (host, port) = match relay_port {
            Some(port) => ("127.0.0.1", port),
            None => (self.server.get_host(), self.server.get_port()),
        };
        let mut command = Command::new(&self.binary);
        command
            .args(["-n", "-M", "prepared", "-f"])
            .arg(script)
            .args(["-h", host, "-p", &port.to_string()])
            .args(["-U", self.server.get_username()]);
        command
    }
}

/// Runs pgbench; its standard output, or its standard error as the failure.
fn run(mut command: Command, what: &str) -> Result<String> {
    let output = command
        .output()
        .with_context(|| format!("running {what}"))?;
    if !output.status.success() {
        bail!("{what} failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
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
