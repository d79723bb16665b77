//! What the class left behind: transactions still open in the server's database, the app's
//! backends, the server's memory, and whether it still answers its health check.

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions, PgConnection};
use tokio::time::Instant;

use super::browser::{Client, Jar};

/// How long the server gets to end what the class started (closed sockets' runs, pools).
const SETTLE: Duration = Duration::from_secs(30);

pub struct Aftermath {
    /// Backends with a transaction left open: `idle in transaction` (any application), or
    /// the app's with any transaction at all; each backend counted once.
    pub left_open: Option<i64>,
    /// Backends `idle in transaction` (any application) in the server's database.
    pub idle_in_transaction: Option<i64>,
    /// The app's backends with a transaction open at all.
    pub app_transactions: Option<i64>,
    /// The app's backends (`application_name LIKE 'outbox%'`).
    pub app_backends: Option<i64>,
    /// How long it took until nothing was left open (or the whole wait, if something was).
    pub settled_after: Duration,
    /// Why the database could not be asked, if it could not.
    pub database_error: Option<String>,
    /// VmRSS and VmHWM of the server, MiB.
    pub rss_mib: Option<(f64, f64)>,
    pub healthz: Option<u16>,
}

struct Counts {
    left_open: i64,
    idle_in_transaction: i64,
    app_transactions: i64,
    app_backends: i64,
}

async fn counts(conn: &mut PgConnection) -> sqlx::Result<Counts> {
    let (left_open, idle_in_transaction, app_transactions, app_backends): (i64, i64, i64, i64) =
        sqlx::query_as(
            "SELECT count(*) FILTER (WHERE state LIKE 'idle in transaction%'
                                        OR (application_name LIKE 'outbox%'
                                            AND xact_start IS NOT NULL)),
                    count(*) FILTER (WHERE state LIKE 'idle in transaction%'),
                    count(*) FILTER (WHERE application_name LIKE 'outbox%'
                                       AND xact_start IS NOT NULL),
                    count(*) FILTER (WHERE application_name LIKE 'outbox%')
               FROM pg_stat_activity
              WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        .fetch_one(conn)
        .await?;
    Ok(Counts {
        left_open,
        idle_in_transaction,
        app_transactions,
        app_backends,
    })
}

/// Waits (bounded) until nothing is left open, then takes the measurements.
pub async fn measure(database_url: &str, server_pid: Option<u32>, client: &Client) -> Aftermath {
    let start = Instant::now();
    let mut found = None;
    let mut database_error = None;
    match connect(database_url).await {
        Err(e) => database_error = Some(e),
        Ok(mut conn) => {
            while start.elapsed() < SETTLE {
                match counts(&mut conn).await {
                    Ok(c) => {
                        let settled = c.left_open == 0;
                        found = Some(c);
                        if settled {
                            break;
                        }
                    }
                    Err(e) => {
                        database_error = Some(e.to_string());
                        break;
                    }
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        }
    }
    let healthz = client.get("/healthz", &mut Jar::default()).await.status;
    Aftermath {
        left_open: found.as_ref().map(|c| c.left_open),
        idle_in_transaction: found.as_ref().map(|c| c.idle_in_transaction),
        app_transactions: found.as_ref().map(|c| c.app_transactions),
        app_backends: found.as_ref().map(|c| c.app_backends),
        settled_after: start.elapsed(),
        database_error,
        rss_mib: server_pid.and_then(memory_mib),
        healthz,
    }
}

async fn connect(database_url: &str) -> Result<PgConnection, String> {
    let options = PgConnectOptions::from_str(database_url)
        .map_err(|e| e.to_string())?
        // Not `outbox…`: this connection must not count as one of the app's.
        .application_name("classroom-bench");
    match tokio::time::timeout(Duration::from_secs(10), options.connect()).await {
        Ok(Ok(conn)) => Ok(conn),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("no connection in 10 s".into()),
    }
}

/// VmRSS and VmHWM (the peak) of a process, MiB (Linux).
pub fn memory_mib(pid: u32) -> Option<(f64, f64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<f64> {
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix(name))?
            .split_whitespace()
            .next()?
            .parse()
            .ok()?;
        Some(kib / 1024.0)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}
