//! The connections that hold sandboxes' advisory locks: a small pool of their own, without the
//! round trip sqlx spends on every connection it takes back.
//!
//! sqlx sends a Sync and waits for the answer whenever a pooled connection goes back, to catch
//! one that a cancelled query left out of step. A lock connection goes back only after its last
//! statement (`lab.leave_action`, or the unlock) was answered in full, so it is in step by
//! construction; any other ending closes it, which also lets PostgreSQL drop the lock. That is
//! one round trip less per action.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions, Connection, PgConnection};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::error::LabError;

/// A connection idle this long is checked before use (PostgreSQL may have been restarted
/// meanwhile); one used more recently is taken as it is, as in the working pool.
const CHECK_IF_IDLE_FOR: Duration = Duration::from_secs(1);

pub struct LockConnections {
    idle: Mutex<Vec<(PgConnection, Instant)>>,
    permits: Arc<Semaphore>,
    connect: PgConnectOptions,
    acquire_timeout: Duration,
    open: AtomicU32,
}

/// One lock connection, taken from [`LockConnections`]. [`LockConnection::give_back`] returns
/// it; dropped instead, it is closed.
pub struct LockConnection {
    conn: Option<PgConnection>,
    home: Arc<LockConnections>,
    _permit: OwnedSemaphorePermit,
}

impl LockConnections {
    pub fn new(connect: PgConnectOptions, max: u32, acquire_timeout: Duration) -> Arc<Self> {
        Arc::new(LockConnections {
            idle: Mutex::new(Vec::new()),
            permits: Arc::new(Semaphore::new(max as usize)),
            connect,
            acquire_timeout,
            open: AtomicU32::new(0),
        })
    }

    /// Open connections, in use or idle.
    pub fn size(&self) -> u32 {
        self.open.load(Ordering::Relaxed)
    }

    /// Every connection is in use.
    pub fn is_full(&self) -> bool {
        self.permits.available_permits() == 0
    }

    /// A connection, waiting up to the acquire timeout for one to be free (then
    /// `PoolTimedOut`, as the working pool answers).
    pub async fn acquire(self: &Arc<Self>) -> Result<LockConnection, LabError> {
        let permit = match tokio::time::timeout(
            self.acquire_timeout,
            Arc::clone(&self.permits).acquire_owned(),
        )
        .await
        {
            Ok(Ok(permit)) => permit,
            Ok(Err(_)) => return Err(LabError::Unavailable(sqlx::Error::PoolClosed)),
            Err(_) => return Err(LabError::Unavailable(sqlx::Error::PoolTimedOut)),
        };
        loop {
            let Some((mut conn, since)) = self.take_idle() else {
                break;
            };
            if since.elapsed() < CHECK_IF_IDLE_FOR || conn.ping().await.is_ok() {
                return Ok(self.lend(conn, permit));
            }
            // Gone with a restart of PostgreSQL, say: a new one replaces it.
            self.closed();
        }
        // Bounded like the working pool's acquire: a server that drops packets must not hold
        // the learner for a TCP timeout.
        let conn = match tokio::time::timeout(self.acquire_timeout, self.connect.connect()).await {
            Ok(connected) => connected.map_err(LabError::from_sqlx)?,
            Err(_) => return Err(LabError::Unavailable(sqlx::Error::PoolTimedOut)),
        };
        self.open.fetch_add(1, Ordering::Relaxed);
        Ok(self.lend(conn, permit))
    }

    fn take_idle(&self) -> Option<(PgConnection, Instant)> {
        self.idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .pop()
    }

    fn lend(self: &Arc<Self>, conn: PgConnection, permit: OwnedSemaphorePermit) -> LockConnection {
        LockConnection {
            conn: Some(conn),
            home: Arc::clone(self),
            _permit: permit,
        }
    }

    fn closed(&self) {
        self.open.fetch_sub(1, Ordering::Relaxed);
    }
}

impl LockConnection {
    pub fn conn(&mut self) -> Result<&mut PgConnection, LabError> {
        self.conn
            .as_mut()
            .ok_or(LabError::Unavailable(sqlx::Error::PoolClosed))
    }

    /// Back to the pool, unchecked: call it only right after a statement was answered in full.
    pub fn give_back(mut self) {
        if let Some(conn) = self.conn.take() {
            self.home
                .idle
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .push((conn, Instant::now()));
        }
    }
}

impl Drop for LockConnection {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.home.closed();
            // Closed in the background with a goodbye; PostgreSQL ends the session, and the
            // session's advisory locks with it, either way.
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    let _ = tokio::time::timeout(Duration::from_secs(2), conn.close()).await;
                });
            }
        }
    }
}
