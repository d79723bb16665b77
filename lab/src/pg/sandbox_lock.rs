//! One action at a time per sandbox, across every server process sharing the database.
//!
//! A report is judged against the tables read just before its action, so two actions on one
//! sandbox must never overlap, even when a load balancer sends them to different replicas.
//! Inside a process a mutex queues them without holding a connection; across processes a
//! session-level advisory lock does, held on a connection from a pool of its own, so that an
//! action waiting for its lock never holds one of the connections that actions work with.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use sqlx::pool::PoolConnection;
use sqlx::{PgPool, Postgres};
use tokio::sync::OwnedMutexGuard;

use super::error::{LabError, sqlstate};
use super::names::SchemaName;

const LOCK: &str = "SELECT pg_advisory_lock(hashtextextended($1, 0))";
const UNLOCK: &str = "SELECT pg_advisory_unlock(hashtextextended($1, 0))";

#[derive(Default)]
pub struct LocalLocks(Mutex<HashMap<String, Weak<tokio::sync::Mutex<()>>>>);

impl LocalLocks {
    async fn lock(&self, sandbox: &SchemaName) -> OwnedMutexGuard<()> {
        let lock = {
            let mut locks = self
                .0
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            locks.retain(|_, weak| weak.strong_count() > 0);
            match locks.get(sandbox.as_str()).and_then(Weak::upgrade) {
                Some(lock) => lock,
                None => {
                    let lock = Arc::new(tokio::sync::Mutex::new(()));
                    locks.insert(sandbox.to_string(), Arc::downgrade(&lock));
                    lock
                }
            }
        };
        lock.lock_owned().await
    }
}

/// Held while an action runs. Call [`SandboxLock::release`] when done; if it is dropped
/// instead (an error, a cancelled request), its connection is closed rather than pooled, and
/// PostgreSQL drops the advisory lock with the session.
pub struct SandboxLock {
    conn: Option<PoolConnection<Postgres>>,
    sandbox: SchemaName,
    _local: OwnedMutexGuard<()>,
}

impl SandboxLock {
    pub async fn acquire(
        local: &LocalLocks,
        lock_pool: &PgPool,
        sandbox: &SchemaName,
    ) -> Result<SandboxLock, LabError> {
        let local = local.lock(sandbox).await;
        let mut conn = lock_pool.acquire().await.map_err(LabError::from_sqlx)?;
        let locked = sqlx::query(LOCK)
            .bind(sandbox.as_str())
            .execute(&mut *conn)
            .await;
        if let Err(e) = locked {
            // lock_timeout: another process has held this sandbox for seconds — a stepped
            // transaction (it names itself by its application_name), or a busy learner.
            return Err(match sqlstate(&e).as_deref() {
                Some("55P03") if stepped_elsewhere(&mut conn, sandbox).await => {
                    LabError::StepInProgress
                }
                Some("55P03") => LabError::RateLimited,
                _ => LabError::from_sqlx(e),
            });
        }
        Ok(SandboxLock {
            conn: Some(conn),
            sandbox: sandbox.clone(),
            _local: local,
        })
    }

    pub async fn release(mut self) -> Result<(), LabError> {
        if let Some(mut conn) = self.conn.take() {
            let unlocked = sqlx::query(UNLOCK)
                .bind(self.sandbox.as_str())
                .execute(&mut *conn)
                .await;
            if unlocked.is_err() {
                conn.close_on_drop();
            }
            unlocked.map_err(LabError::from_sqlx)?;
        }
        Ok(())
    }
}

impl Drop for SandboxLock {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.as_mut() {
            conn.close_on_drop();
        }
    }
}

/// Whether a stepped transaction of `sandbox` is open in any server process.
async fn stepped_elsewhere(conn: &mut sqlx::PgConnection, sandbox: &SchemaName) -> bool {
    let name = format!("{}{sandbox}", super::stepper::APPLICATION_PREFIX);
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name = $1)")
        .bind(name)
        .fetch_one(conn)
        .await
        .unwrap_or(false)
}
