//! One action at a time per sandbox, across every server process sharing the database.
//!
//! A report is judged against the tables read just before its action, so two actions on one
//! sandbox must never overlap, even when a load balancer sends them to different replicas.
//! Inside a process a mutex queues them without holding a connection; across processes a
//! session-level advisory lock does, held on a connection from a pool of its own, so that an
//! action waiting for its lock never holds one of the connections that actions work with.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use sqlx::PgConnection;
use sqlx::types::Json;
use tokio::sync::OwnedMutexGuard;

use crate::report::Report;
use crate::snapshot::Snapshot;

use super::error::{LabError, sqlstate};
use super::lock_conns::{LockConnection, LockConnections};
use super::names::SchemaName;
use super::pending::PendingAttempt;

/// Takes the lock and, when asked, reads the tables under it, in one round trip. The same
/// statement asks PostgreSQL what each of the action's payloads becomes (`lab.jsonb_text`, in
/// the order given): the model predicts with PostgreSQL's own answer instead of imitating the
/// cast, and asking here adds no round trip.
const ENTER: &str = "SELECT lab.enter_action($1, $2), \
     ARRAY(SELECT lab.jsonb_text(p) FROM unnest($3::text[]) WITH ORDINALITY AS u(p, n) ORDER BY n)";
const UNLOCK: &str = "SELECT pg_advisory_unlock(hashtextextended($1, 0))";

#[derive(Default)]
pub struct LocalLocks(Mutex<HashMap<String, Weak<tokio::sync::Mutex<()>>>>);

/// This process's turn on one sandbox.
pub type LocalGuard = OwnedMutexGuard<()>;

impl LocalLocks {
    pub async fn lock(&self, sandbox: &SchemaName) -> LocalGuard {
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
    conn: Option<LockConnection>,
    sandbox: SchemaName,
    _local: OwnedMutexGuard<()>,
}

impl SandboxLock {
    /// Takes the lock for a caller that already has this process's turn ([`LocalLocks`]);
    /// with `read_tables`, also reads its tables under it; and asks what `payloads` become
    /// (see [`enter`]).
    pub async fn enter<const N: usize>(
        local: LocalGuard,
        lock_conns: &Arc<LockConnections>,
        sandbox: &SchemaName,
        read_tables: bool,
        payloads: [&str; N],
    ) -> Result<(SandboxLock, Entered<N>), LabError> {
        let mut conn = lock_conns.acquire().await?;
        match enter(conn.conn()?, sandbox, read_tables, payloads).await {
            Ok(entered) => Ok((
                SandboxLock {
                    conn: Some(conn),
                    sandbox: sandbox.clone(),
                    _local: local,
                },
                entered,
            )),
            // The read may fail after the lock was taken (a sandbox dropped meanwhile): the
            // connection is dropped, so the session goes, and the lock with it.
            Err(e) => Err(e),
        }
    }

    /// The connection that holds the lock: the action's bookkeeping runs on it.
    pub fn conn(&mut self) -> Result<&mut PgConnection, LabError> {
        self.conn
            .as_mut()
            .ok_or(LabError::Unavailable(sqlx::Error::PoolClosed))?
            .conn()
    }

    /// Keeps the action's report and releases the lock in one statement, then gives the
    /// connection back to the pool; on a failure the session is closed, which releases the
    /// lock too.
    pub async fn leave(
        mut self,
        report: &Report,
        pending: Option<&PendingAttempt>,
        keep_pending: bool,
        quests: &crate::quest::judge::Marks,
    ) -> Result<(), LabError> {
        if let Some(mut conn) = self.conn.take() {
            let left = super::sandbox::leave_action(
                conn.conn()?,
                &self.sandbox,
                report,
                pending,
                keep_pending,
                quests,
            )
            .await;
            // Answered in full: back to the pool; else dropped, which closes it.
            left?;
            conn.give_back();
        }
        Ok(())
    }

    pub async fn release(mut self) -> Result<(), LabError> {
        if let Some(mut conn) = self.conn.take() {
            sqlx::query(UNLOCK)
                .bind(self.sandbox.as_str())
                .execute(conn.conn()?)
                .await
                .map_err(LabError::from_sqlx)?;
            conn.give_back();
        }
        Ok(())
    }
}

/// ENTER's row: the tables (when asked for) and PostgreSQL's text of each payload.
type EnterRow = (Option<Json<Snapshot>>, Vec<Option<String>>);

/// What an action learnt as it took the sandbox's lock.
#[derive(Debug)]
pub struct Entered<const N: usize> {
    /// The sandbox's tables under the lock, when asked for.
    pub tables: Option<Snapshot>,
    /// PostgreSQL's text of each payload asked about, in the order asked: what
    /// `payload::jsonb::text` gives, or `None` where PostgreSQL refuses the cast.
    pub stored_payloads: [Option<String>; N],
}

/// Takes the sandbox's advisory lock on `conn` and, with `read_tables`, reads its tables under
/// it; in the same statement PostgreSQL casts each of `payloads` to jsonb and says what it
/// stores (or that it refuses). On an error the caller closes the session, which lets a lock
/// taken half-way go.
pub async fn enter<const N: usize>(
    conn: &mut PgConnection,
    sandbox: &SchemaName,
    read_tables: bool,
    payloads: [&str; N],
) -> Result<Entered<N>, LabError> {
    let entered: Result<EnterRow, _> = sqlx::query_as(ENTER)
        .bind(sandbox.as_str())
        .bind(read_tables)
        .bind(&payloads[..])
        .fetch_one(&mut *conn)
        .await;
    match entered {
        Ok((tables, stored)) => {
            let stored_payloads = <[Option<String>; N]>::try_from(stored).map_err(|got| {
                LabError::Config(format!(
                    "PostgreSQL answered for {} payloads, not the {N} asked",
                    got.len()
                ))
            })?;
            Ok(Entered {
                tables: tables.map(|Json(t)| t),
                stored_payloads,
            })
        }
        // lock_timeout: another process has held this sandbox for seconds — a stepped
        // transaction (it names itself by its application_name), or a busy learner.
        Err(e) => Err(match sqlstate(&e).as_deref() {
            Some("55P03") if stepped_elsewhere(conn, sandbox).await => LabError::StepInProgress,
            Some("55P03") => LabError::RateLimited,
            _ => LabError::in_sandbox(e, sandbox.as_str()),
        }),
    }
}

/// Whether a stepped transaction of `sandbox` is open in any server process.
async fn stepped_elsewhere(conn: &mut sqlx::PgConnection, sandbox: &SchemaName) -> bool {
    let name = format!("{}{sandbox}", super::stepping::APPLICATION_PREFIX);
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name = $1)")
        .bind(name)
        .fetch_one(conn)
        .await
        .unwrap_or(false)
}
