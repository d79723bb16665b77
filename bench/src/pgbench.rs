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

/// What the playground reads after each action to show the tables as they really are: every
/// table the page shows, as JSON, the way `lab.snapshot` builds it. Here the tables are shared
/// and keyed by client (one static, prepared statement), which is the cheapest way to read them.
const READ_TABLES: &str = r#"SELECT jsonb_build_object(
 'tickets', coalesce((SELECT jsonb_agg(jsonb_build_object('id', id, 'status', status) ORDER BY id COLLATE "C") FROM tickets WHERE id = 'ticket-' || :client_id), '[]'::jsonb),
 'outbox', coalesce((SELECT jsonb_agg(jsonb_build_object('event_id', event_id, 'aggregate_id', aggregate_id, 'payload', payload::text, 'published_at', published_at::text) ORDER BY event_id COLLATE "C") FROM outbox WHERE aggregate_id = 'ticket-' || :client_id), '[]'::jsonb),
 'kafka', coalesce((SELECT jsonb_agg(jsonb_build_object('offset', log_offset, 'key', key, 'value', value) ORDER BY log_offset) FROM kafka_log WHERE client = :client_id), '[]'::jsonb),
 'history', coalesce((SELECT jsonb_agg(jsonb_build_object('event_id', event_id, 'ticket_id', ticket_id, 'to_status', to_status) ORDER BY line) FROM history WHERE client = :client_id), '[]'::jsonb),
 'inbox', coalesce((SELECT jsonb_agg(event_id ORDER BY event_id COLLATE "C") FROM inbox WHERE client = :client_id), '[]'::jsonb),
 'consumer_offset', coalesce((SELECT next_offset FROM consumer_offsets WHERE client = :client_id AND consumer = 'history'), 0));
"#;

/// Which cycle pgbench runs.
#[derive(Clone, Copy)]
pub enum Cycle {
    /// The lesson's transaction, then the ticket put back.
    Lesson,
    /// The same, plus the tables read after each of the two actions: the least SQL a
    /// playground that shows the tables as they really are can send, without HTTP, a server,
    /// a sandbox lock or a kept report.
    Floor,
}

impl Cycle {
    fn file(self) -> &'static str {
        match self {
            Cycle::Lesson => "lesson.sql",
            Cycle::Floor => "floor.sql",
        }
    }
}

/// The floor's script: the lesson's transaction, the read, the ticket put back, the read.
fn floor_script() -> String {
    let lines: Vec<&str> = SCRIPT.lines().collect();
    let (attempt, reset) = lines.split_at(4);
    format!(
        "{}\n{READ_TABLES}{}\n{READ_TABLES}",
        attempt.join("\n"),
        reset.join("\n")
    )
}

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
             CREATE INDEX ON outbox (aggregate_id);
             CREATE SEQUENCE event_seq;
             CREATE TABLE kafka_log (client int, log_offset bigint, key text, value text,
                                     PRIMARY KEY (client, log_offset));
             CREATE TABLE history (client int, line bigint, event_id text, ticket_id text,
                                   to_status text, PRIMARY KEY (client, line));
             CREATE TABLE inbox (client int, event_id text, PRIMARY KEY (client, event_id));
             CREATE TABLE consumer_offsets (client int, consumer text, next_offset bigint,
                                            PRIMARY KEY (client, consumer));",
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
        std::fs::write(self.work_dir.join(Cycle::Lesson.file()), SCRIPT)?;
        std::fs::write(self.work_dir.join(Cycle::Floor.file()), floor_script())?;
        Ok(())
    }

    pub fn run(&self, cycle: Cycle, clients: usize, duration: Duration) -> Result<Samples> {
        let logs = self.work_dir.join(format!("{}-c{clients}", cycle.file()));
        let _ = std::fs::remove_dir_all(&logs);
        std::fs::create_dir_all(&logs)?;
        let threads = clients.clamp(1, 4);
        let mut command = self.command(&self.work_dir.join(cycle.file()), None);
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
        let lesson = self.work_dir.join(Cycle::Lesson.file());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_reads_the_tables_after_each_action() {
        let floor = floor_script();
        let statements: Vec<&str> = floor.lines().filter(|l| !l.starts_with(' ')).collect();
        assert_eq!(statements.len(), 8, "{floor}");
        assert_eq!(statements[3], "COMMIT;");
        assert!(statements[4].starts_with("SELECT jsonb_build_object("));
        assert!(statements[5].starts_with("DELETE FROM outbox"));
        assert!(statements[7].starts_with("SELECT jsonb_build_object("));
    }
}
