//! The stepper's other writer: the lesson's guarded UPDATE of ticket-42 on a second session,
//! queued behind the held row lock if there is one, with its own lane of the trace.

use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::Connection;
use tokio::task::JoinHandle;

use crate::catalog::Step;
use crate::sql_trace::{Actor, Lane, TxState};
use crate::stepped::{Waiter, WaiterState};

use super::super::error::{LabError, sqlstate};
use super::super::names::SchemaName;
use super::super::publisher;
use super::super::runner::Lab;
use super::super::ticket_statements::GUARDED_UPDATE;
use super::super::trace::{Tracer, answer_of, done, rows};

/// What the second session does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Job {
    /// The lesson's guarded UPDATE of ticket-42.
    Writer,
    /// A second publisher run: it locks what it can, sends and marks it, and commits.
    Publisher { skip_locked: bool },
}

/// What the writer's UPDATE answered (rows, or PostgreSQL's refusal), and its lane.
type Finished = (Result<Result<u64, sqlx::Error>, LabError>, Tracer);

/// Another writer: the lesson's guarded UPDATE of ticket-42 in a transaction of its own, on a
/// pooled connection, queued behind the held row lock if there is one.
pub(super) struct WaiterTask {
    pid: i32,
    /// A second publisher's SKIP LOCKED; `None` for another writer.
    skip_locked: Option<bool>,
    task: JoinHandle<Finished>,
    /// Set once the task has been joined: what it did, and its lane of the trace.
    done: Option<(Waiter, Option<Tracer>)>,
    /// The last non-empty `pg_blocking_pids` seen for it.
    waited_behind: Vec<i32>,
}

impl WaiterTask {
    pub(super) async fn start(
        lab: &Lab,
        sandbox: &SchemaName,
        job: Job,
        started: Instant,
    ) -> Result<Self, LabError> {
        // A connection of its own, counted: a pooled one held for the whole lock wait would
        // take the pool from everyone else's actions while a class steps.
        let slot = Arc::clone(&lab.inner.stepping.writers)
            .try_acquire_owned()
            .map_err(|_| LabError::Busy)?;
        let lab = lab.clone();
        let sandbox = sandbox.clone();
        let lock_timeout = lab.config().step_waiter_lock_timeout;
        let (pid_tx, pid_rx) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(async move {
            let _slot = slot;
            let mut trace = Tracer::lane(started, Lane::B);
            let result = match lab.connect_own(None).await {
                Ok(mut conn) => {
                    let result = match job {
                        Job::Writer => {
                            other_writer(&mut conn, &sandbox, lock_timeout, pid_tx, &mut trace)
                                .await
                        }
                        Job::Publisher { skip_locked } => {
                            let second = Second {
                                pool: lab.pool(),
                                sandbox: &sandbox,
                                lock_timeout,
                                skip_locked,
                            };
                            second.run(&mut conn, pid_tx, &mut trace).await
                        }
                    };
                    if let Err(e) = conn.close().await {
                        tracing::debug!(error = %e, "closing the other writer's connection");
                    }
                    result
                }
                Err(e) => Err(e),
            };
            (result, trace)
        });
        let Ok(pid) = pid_rx.await else {
            // The task ended before it had a backend: its error says why.
            let (result, _) = task.await.map_err(|e| LabError::Config(e.to_string()))?;
            drop(result?);
            return Err(LabError::Config("the other writer never started".into()));
        };
        Ok(WaiterTask {
            pid,
            skip_locked: match job {
                Job::Writer => None,
                Job::Publisher { skip_locked } => Some(skip_locked),
            },
            task,
            done: None,
            waited_behind: Vec::new(),
        })
    }

    /// Waits until the writer is either queued behind a lock or finished, so the pause shows
    /// which (bounded: PostgreSQL has no notification for "now waiting").
    pub(super) async fn wait_until_settled(&mut self, lab: &Lab) -> Result<(), LabError> {
        let limit = lab.config().backend_exit_timeout;
        let start = Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            if self.task.is_finished() {
                return Ok(());
            }
            let blocked_by = blocking_pids(lab, self.pid).await?;
            if !blocked_by.is_empty() {
                self.waited_behind = blocked_by;
                return Ok(());
            }
            if start.elapsed() >= limit {
                return Err(LabError::LockWaitNotSeen { pid: self.pid });
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(20));
        }
    }

    pub(super) async fn view(&mut self, lab: &Lab) -> Result<Waiter, LabError> {
        if self.done.is_none() && !self.task.is_finished() {
            let blocked_by = blocking_pids(lab, self.pid).await?;
            if !blocked_by.is_empty() {
                self.waited_behind.clone_from(&blocked_by);
            }
            return Ok(Waiter {
                pid: self.pid,
                blocked_by,
                state: WaiterState::Waiting,
                rows: None,
                sqlstate: None,
                waited_behind: self.waited_behind.clone(),
                skip_locked: self.skip_locked,
            });
        }
        self.join().await
    }

    /// Waits for the writer to finish (its lock_timeout bounds it) and adds its lane to `trace`.
    pub(super) async fn finish(mut self, trace: &mut Tracer) -> Result<Waiter, LabError> {
        let waiter = self.join().await?;
        if let Some((_, lane)) = &mut self.done
            && let Some(lane) = lane.take()
        {
            let main = std::mem::take(trace);
            let start = main.start();
            *trace = Tracer::merge(start, vec![main, lane]);
        }
        Ok(waiter)
    }

    async fn join(&mut self) -> Result<Waiter, LabError> {
        if let Some((done, _)) = &self.done {
            return Ok(done.clone());
        }
        let (result, lane) = (&mut self.task)
            .await
            .map_err(|e| LabError::Config(e.to_string()))?;
        let (state, rows, code) = match result? {
            Ok(n) => (WaiterState::Done, Some(n), None),
            Err(err) => (WaiterState::Failed, None, sqlstate(&err)),
        };
        let waiter = Waiter {
            pid: self.pid,
            blocked_by: vec![],
            state,
            rows,
            sqlstate: code,
            waited_behind: self.waited_behind.clone(),
            skip_locked: self.skip_locked,
        };
        self.done = Some((waiter.clone(), Some(lane)));
        Ok(waiter)
    }
}

async fn blocking_pids(lab: &Lab, pid: i32) -> Result<Vec<i32>, LabError> {
    sqlx::query_scalar("SELECT pg_blocking_pids($1)")
        .bind(pid)
        .fetch_one(lab.pool())
        .await
        .map_err(LabError::from_sqlx)
}

/// The second session's plumbing: the sandbox, its lock_timeout set long enough for a learner
/// to act, and the statement timeout above it so that the lock wait is what ends it.
const ENTER: &str = "SELECT set_config('search_path', $1, true), \
    set_config('lock_timeout', $2, true), set_config('statement_timeout', $3, true), \
    pg_backend_pid()";

/// BEGIN and [`ENTER`] for a second session; tells its pid as soon as it has one.
async fn enter_second<'c>(
    conn: &'c mut sqlx::PgConnection,
    sandbox: &SchemaName,
    lock_timeout: Duration,
    actor: Actor,
    pid_tx: tokio::sync::oneshot::Sender<i32>,
    trace: &mut Tracer,
) -> Result<sqlx::Transaction<'c, sqlx::Postgres>, LabError> {
    let mut tx = conn.begin().await.map_err(LabError::from_sqlx)?;
    trace.sql(actor, "BEGIN", &[], done(), TxState::Open);
    let lock_ms = format!("{}ms", lock_timeout.as_millis());
    let statement_ms = format!("{}ms", (lock_timeout + Duration::from_secs(5)).as_millis());
    let (_, _, _, pid): (String, String, String, i32) = sqlx::query_as(ENTER)
        .bind(sandbox.as_str())
        .bind(&lock_ms)
        .bind(&statement_ms)
        .fetch_one(&mut *tx)
        .await
        .map_err(LabError::from_sqlx)?;
    trace.sql(
        Actor::Playground,
        ENTER,
        &[sandbox.as_str(), &lock_ms, &statement_ms],
        crate::sql_trace::Answer::Values {
            values: vec![pid.to_string()],
        },
        TxState::Open,
    );
    let _ = pid_tx.send(pid);
    Ok(tx)
}

/// A second publisher beside the held one.
struct Second<'a> {
    pool: &'a sqlx::PgPool,
    sandbox: &'a SchemaName,
    lock_timeout: Duration,
    skip_locked: bool,
}

impl Second<'_> {
    /// Its run: the rows it could lock (none, if SKIP LOCKED found them all held; after a
    /// wait, those the held publisher left unmarked), each sent and marked, then COMMIT.
    /// Returns the rows it took, or PostgreSQL's refusal (lock_timeout).
    async fn run(
        &self,
        conn: &mut sqlx::PgConnection,
        pid_tx: tokio::sync::oneshot::Sender<i32>,
        trace: &mut Tracer,
    ) -> Result<Result<u64, sqlx::Error>, LabError> {
        let actor = Actor::Publisher;
        trace.enter(Step::Claim);
        let mut tx =
            enter_second(conn, self.sandbox, self.lock_timeout, actor, pid_tx, trace).await?;
        let sql = publisher::claim_sql(self.skip_locked);
        let rows: Vec<publisher::Unpublished> = match sqlx::query_as(&sql).fetch_all(&mut *tx).await
        {
            Ok(rows) => rows,
            Err(err) if matches!(err, sqlx::Error::Database(_)) => {
                trace.sql(actor, &sql, &[], answer_of(&err), TxState::Failed);
                tx.rollback().await.map_err(LabError::from_sqlx)?;
                trace.sql(actor, "ROLLBACK", &[], done(), TxState::RolledBack);
                return Ok(Err(err));
            }
            Err(err) => return Err(LabError::from_sqlx(err)),
        };
        let values = rows.iter().map(|r| r.event_id.clone()).collect();
        trace.sql(
            actor,
            &sql,
            &[],
            crate::sql_trace::Answer::Values { values },
            TxState::Open,
        );
        for row in &rows {
            trace.enter(Step::Send);
            publisher::send(self.pool, self.sandbox, row, trace).await?;
            trace.enter(Step::Mark);
            publisher::mark(&mut tx, self.sandbox, row, trace).await?;
        }
        trace.enter(Step::Commit);
        tx.commit().await.map_err(LabError::from_sqlx)?;
        trace.sql(actor, "COMMIT", &[], done(), TxState::Committed);
        Ok(Ok(rows.len() as u64))
    }
}

/// The writer's transaction: its lock_timeout set long enough for a learner to act, and the
/// statement timeout above it so that the lock wait is what ends it.
async fn other_writer(
    conn: &mut sqlx::PgConnection,
    sandbox: &SchemaName,
    lock_timeout: Duration,
    pid_tx: tokio::sync::oneshot::Sender<i32>,
    trace: &mut Tracer,
) -> Result<Result<u64, sqlx::Error>, LabError> {
    trace.enter(Step::Update);
    let mut tx = enter_second(
        conn,
        sandbox,
        lock_timeout,
        Actor::OtherWriter,
        pid_tx,
        trace,
    )
    .await?;
    let ticket = crate::catalog::names::TICKET_ID;
    match sqlx::query(GUARDED_UPDATE)
        .bind(ticket)
        .execute(&mut *tx)
        .await
    {
        Ok(r) => {
            trace.sql(
                Actor::OtherWriter,
                GUARDED_UPDATE,
                &[ticket],
                rows(r.rows_affected()),
                TxState::Open,
            );
            tx.commit().await.map_err(LabError::from_sqlx)?;
            trace.sql(
                Actor::OtherWriter,
                "COMMIT",
                &[],
                done(),
                TxState::Committed,
            );
            Ok(Ok(r.rows_affected()))
        }
        Err(err) if matches!(err, sqlx::Error::Database(_)) => {
            trace.sql(
                Actor::OtherWriter,
                GUARDED_UPDATE,
                &[ticket],
                answer_of(&err),
                TxState::Failed,
            );
            tx.rollback().await.map_err(LabError::from_sqlx)?;
            trace.sql(
                Actor::OtherWriter,
                "ROLLBACK",
                &[],
                done(),
                TxState::RolledBack,
            );
            Ok(Err(err))
        }
        Err(err) => Err(LabError::from_sqlx(err)),
    }
}
