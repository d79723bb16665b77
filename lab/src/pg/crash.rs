//! Making a crash real, and proving it happened.
//!
//! A crashed process sends nothing: no ROLLBACK, no Terminate message. Its socket just
//! closes, and PostgreSQL's backend finds end-of-file, rolls back whatever was open and exits
//! (its log says "unexpected EOF on client connection"). Before a report is read, the runner
//! waits until that backend has left `pg_stat_activity`, so no lock or half-state is shown.

use std::time::{Duration, Instant};

use sqlx::{Connection, PgConnection, PgPool};

use super::error::LabError;

/// Closes the socket without a word to PostgreSQL.
///
/// `close_hard` shuts the TCP stream down without sending Terminate (unlike `close`), and the
/// caller has forgotten any transaction handle, so no ROLLBACK is queued either.
pub async fn kill(conn: PgConnection) {
    // An error here means the socket is already gone, which is what we want.
    let _ = conn.close_hard().await;
}

/// Waits (bounded) until backend `pid` has exited; returns how long that took.
pub async fn wait_until_gone(
    pool: &PgPool,
    pid: i32,
    limit: Duration,
) -> Result<Duration, LabError> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        let alive: bool =
            sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)")
                .bind(pid)
                .fetch_one(pool)
                .await
                .map_err(LabError::from_sqlx)?;
        let waited = start.elapsed();
        if !alive {
            return Ok(waited);
        }
        if waited >= limit {
            return Err(LabError::BackendLingers { pid, waited });
        }
        // PostgreSQL offers no notification for a backend's exit; poll with backoff.
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// What PostgreSQL says became of transaction `xid` (`pg_xact_status`): `committed`,
/// `aborted`, `in progress`, or `None` when it is too old to know.
pub async fn xact_status(pool: &PgPool, xid: &str) -> Result<Option<String>, LabError> {
    sqlx::query_scalar("SELECT pg_xact_status($1::xid8)")
        .bind(xid)
        .fetch_one(pool)
        .await
        .map_err(LabError::from_sqlx)
}
