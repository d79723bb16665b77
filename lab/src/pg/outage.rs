//! Remembers that PostgreSQL is down, so that a learner is told at once.
//!
//! While PostgreSQL refuses connections, the pool keeps retrying them with a backoff until its
//! acquire timeout (seconds): every action would wait that long before it could answer
//! "unavailable". Once one request has seen the outage, the next ones first try a single fresh
//! connection with a short bound instead: refused at once while PostgreSQL is down, and the
//! first success clears the flag, so the playground recovers by itself.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::{ConnectOptions, Connection};

use super::error::LabError;

/// How long the probe may take before the database counts as still down.
const PROBE_BOUND: Duration = Duration::from_millis(500);

#[derive(Debug, Default)]
pub struct Outage {
    down: AtomicBool,
}

impl Outage {
    pub fn is_down(&self) -> bool {
        self.down.load(Ordering::Relaxed)
    }

    /// Notes what an action ended with: an unreachable database raises the flag.
    pub fn observe(&self, err: &LabError) {
        if matches!(err, LabError::Unavailable(_)) && !self.down.swap(true, Ordering::Relaxed) {
            tracing::warn!(error = %err, "PostgreSQL is unreachable; answering at once until it is back");
        }
    }

    /// Ok when the database is believed up, or a fresh connection shows it is up again.
    pub async fn check(&self, connect: &PgConnectOptions) -> Result<(), LabError> {
        if !self.is_down() {
            return Ok(());
        }
        let probe = tokio::time::timeout(PROBE_BOUND, connect.connect()).await;
        match probe {
            Ok(Ok(conn)) => {
                close_quietly(conn).await;
                if self.down.swap(false, Ordering::Relaxed) {
                    tracing::info!("PostgreSQL answers again");
                }
                Ok(())
            }
            Ok(Err(e)) => Err(LabError::Unavailable(e)),
            Err(_) => Err(LabError::Unavailable(sqlx::Error::PoolTimedOut)),
        }
    }
}

async fn close_quietly(conn: PgConnection) {
    if let Err(e) = conn.close().await {
        tracing::debug!(error = %e, "closing the outage probe's connection");
    }
}
