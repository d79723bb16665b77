//! The runner's one error type.
//!
//! Policy: an error here means the playground could not *run* the lesson — the database is
//! unreachable, a sandbox vanished, a limit was hit. What the lesson's transaction itself does
//! (a guard refusing, a primary-key conflict, a crash) is never an error: it is an outcome in
//! the report. The web layer maps each variant to a status code and a learner-facing text.

use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// PostgreSQL cannot be reached or is shutting down; retrying later may work.
    #[error("PostgreSQL is unavailable: {0}")]
    Unavailable(#[source] sqlx::Error),
    /// PostgreSQL answered with an error the runner did not expect.
    #[error("unexpected database error: {0}")]
    Database(#[source] sqlx::Error),
    /// The sandbox's schema is gone (reaped, or dropped by hand).
    #[error("sandbox {0} no longer exists")]
    SandboxGone(String),
    /// The configured maximum number of sandboxes exists already.
    #[error("the maximum number of sandboxes ({0}) is reached")]
    SandboxLimit(u32),
    /// A crashed attempt's backend did not exit in time, so its state cannot be shown safely.
    #[error("backend {pid} was still alive after {waited:?}")]
    BackendLingers { pid: i32, waited: Duration },
    /// A race's second request was never seen waiting for the first one's lock.
    #[error("backend {pid} was never seen waiting for a lock")]
    LockWaitNotSeen { pid: i32 },
    /// The fault-injecting relay could not be set up.
    #[error("the network relay failed: {0}")]
    Relay(#[source] std::io::Error),
    /// The lost-COMMIT-reply fault needs a plain TCP connection to PostgreSQL.
    #[error("a lost COMMIT reply can only be simulated over TCP without TLS")]
    RelayUnsupported,
    /// This client address asked for more new sandboxes than its budget allows.
    #[error("too many new sandboxes from this address")]
    SandboxRateLimited,
    /// The sandbox made more requests than its budget allows; waiting a moment helps.
    #[error("too many requests for this sandbox")]
    RateLimited,
    /// A replay link was asked for a sandbox that has run nothing yet.
    #[error("there is no run to share")]
    NothingToShare,
    /// The run's report is larger than a replay may keep.
    #[error("the run is {bytes} bytes; a replay keeps at most {limit}")]
    ReplayTooLarge { bytes: usize, limit: usize },
    /// This client address shared more runs than its budget allows.
    #[error("too many shared runs from this address")]
    ShareRateLimited,
    /// No attempt of this sandbox has a transaction id to reconcile.
    #[error("no attempt awaits reconciliation")]
    NothingToReconcile,
    /// A transaction of this sandbox is being stepped through: one at a time.
    #[error("a stepped transaction is already open on this sandbox")]
    StepBusy,
    /// This process holds as many stepped transactions as it may.
    #[error("too many stepped transactions are open")]
    StepLimit,
    /// Every connection this process may use is taken and enough actions wait already (or
    /// this one's turn did not come in time): the server is busy, not broken.
    #[error("the playground is busy")]
    Busy,
    /// This client address holds as many sockets or stepped runs as it may.
    #[error("too many stepper sockets or stepped runs from this address")]
    ClientLimit,
    /// An action was asked while a stepped transaction holds the sandbox.
    #[error("a stepped transaction holds this sandbox")]
    StepInProgress,
    /// No quest has this id.
    #[error("no quest is called {0:?}")]
    UnknownQuest(String),
    /// The quest's question has no choice with this id.
    #[error("quest {quest:?} has no answer {answer:?}")]
    UnknownAnswer { quest: String, answer: String },
    /// The quest's question is asked only once its goal holds.
    #[error("quest {0:?} is not reached yet")]
    QuestNotReached(String),
    /// A stored report could not be written or read as JSON.
    #[error("a stored report is unreadable: {0}")]
    Report(#[source] serde_json::Error),
    /// The database URL or the database's set-up is wrong.
    #[error("database configuration: {0}")]
    Config(String),
    #[error("migrations failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

impl LabError {
    /// Sorts a driver error into "unavailable" (connection-level) or "unexpected".
    pub fn from_sqlx(err: sqlx::Error) -> Self {
        if is_unavailable(&err) {
            LabError::Unavailable(err)
        } else {
            LabError::Database(err)
        }
    }

    /// Like [`LabError::from_sqlx`], but an undefined schema or table means the sandbox is gone.
    pub fn in_sandbox(err: sqlx::Error, sandbox: &str) -> Self {
        match sqlstate(&err).as_deref() {
            Some("3F000" | "42P01") => LabError::SandboxGone(sandbox.to_owned()),
            _ => LabError::from_sqlx(err),
        }
    }
}

/// The SQLSTATE of a database error, if the error came from PostgreSQL.
pub fn sqlstate(err: &sqlx::Error) -> Option<String> {
    match err {
        sqlx::Error::Database(db) => db.code().map(|c| c.into_owned()),
        _ => None,
    }
}

/// Whether the error means the connection (not the statement) failed.
pub fn is_connection_failure(err: &sqlx::Error) -> bool {
    matches!(
        err,
        sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::Protocol(_)
    )
}

fn is_unavailable(err: &sqlx::Error) -> bool {
    if is_connection_failure(err)
        || matches!(err, sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed)
    {
        return true;
    }
    // 08: connection exception; 57P01-57P03: shutdown or not yet accepting; 53300: too many
    // connections.
    sqlstate(err).is_some_and(|code| {
        code.starts_with("08") || matches!(code.as_str(), "57P01" | "57P02" | "57P03" | "53300")
    })
}
