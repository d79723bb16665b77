//! The outbox publisher (lesson 8.3, previewed) on a real PostgreSQL: a transaction of its own
//! locks the unpublished rows, sends each through the broker (which commits on its own), marks
//! it, and commits. Its crash points really kill its connection; two publishers really race.

use std::time::{Duration, Instant};

use sqlx::{Connection, PgConnection, PgPool, Postgres, Transaction};

use crate::broker::PUBLISH_BATCH;
use crate::catalog::{PausePoint, PublisherCrash, Step};
use crate::report::LockWaitSeen;
use crate::sql_trace::{Actor, Answer, Lane, Sent, TxState};

use super::crash;
use super::error::LabError;
use super::kafka_topic;
use super::names::SchemaName;
use super::pauses::{Go, Here, Pauses};
use super::ticket_race::{lock_wait_to_lane_b, record_lock_wait};
use super::trace::{Tracer, done, rows};

/// The publisher's SELECT, with SKIP LOCKED (the lesson's) or waiting for locked rows.
pub fn claim_sql(skip_locked: bool) -> String {
    format!(
        "SELECT event_id, aggregate_id, payload::text FROM outbox \
         WHERE published_at IS NULL ORDER BY event_id COLLATE \"C\" \
         FOR UPDATE{} LIMIT {PUBLISH_BATCH}",
        if skip_locked { " SKIP LOCKED" } else { "" }
    )
}

pub const MARK: &str = "UPDATE outbox SET published_at = now() WHERE event_id = $1";
/// The playground's plumbing: the sandbox on the search_path, and the backend's pid.
const ENTER: &str = "SELECT set_config('search_path', $1, true), pg_backend_pid()";

/// An outbox row as the publisher reads it.
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct Unpublished {
    pub event_id: String,
    pub aggregate_id: String,
    pub payload: String,
}

/// BEGIN, the sandbox on the search_path, and the backend's pid (to watch it die or wait).
pub(super) async fn begin<'c>(
    conn: &'c mut PgConnection,
    sandbox: &SchemaName,
    trace: &mut Tracer,
) -> Result<(Transaction<'c, Postgres>, i32), LabError> {
    trace.enter(Step::Begin);
    let mut tx = conn.begin().await.map_err(LabError::from_sqlx)?;
    trace.sql(Actor::Publisher, "BEGIN", &[], done(), TxState::Open);
    let (_, pid): (String, i32) = sqlx::query_as(ENTER)
        .bind(sandbox.as_str())
        .fetch_one(&mut *tx)
        .await
        .map_err(LabError::from_sqlx)?;
    trace.sql(
        Actor::Playground,
        ENTER,
        &[sandbox.as_str()],
        Answer::Values {
            values: vec![sandbox.to_string(), pid.to_string()],
        },
        TxState::Open,
    );
    Ok((tx, pid))
}

async fn claim(
    tx: &mut Transaction<'_, Postgres>,
    sandbox: &SchemaName,
    skip_locked: bool,
    trace: &mut Tracer,
    sent_at: Option<u64>,
) -> Result<Vec<Unpublished>, LabError> {
    let sql = claim_sql(skip_locked);
    let rows: Vec<Unpublished> = sqlx::query_as(&sql)
        .fetch_all(&mut **tx)
        .await
        .map_err(|e| LabError::in_sandbox(e, sandbox.as_str()))?;
    let values = rows.iter().map(|r| r.event_id.clone()).collect();
    trace.sql(
        Actor::Publisher,
        &sql,
        &[],
        Answer::Values { values },
        TxState::Open,
    );
    // A SELECT that waited for a lock belongs in time where it was sent.
    if let (Some(sent), Some(step)) = (sent_at, trace.steps_mut().last_mut()) {
        step.answered_us = Some(step.at_us);
        step.at_us = sent;
    }
    Ok(rows)
}

/// Sends one row through the broker, then marks it inside the publisher's transaction.
pub(super) async fn send(
    pool: &PgPool,
    sandbox: &SchemaName,
    row: &Unpublished,
    trace: &mut Tracer,
) -> Result<(), LabError> {
    kafka_topic::publish(pool, sandbox, &row.aggregate_id, &row.payload, trace)
        .await
        .map(drop)
}

pub(super) async fn mark(
    tx: &mut Transaction<'_, Postgres>,
    sandbox: &SchemaName,
    row: &Unpublished,
    trace: &mut Tracer,
) -> Result<(), LabError> {
    let n = sqlx::query(MARK)
        .bind(&row.event_id)
        .execute(&mut **tx)
        .await
        .map_err(|e| LabError::in_sandbox(e, sandbox.as_str()))?
        .rows_affected();
    trace.sql(
        Actor::Publisher,
        MARK,
        &[&row.event_id],
        rows(n),
        TxState::Open,
    );
    Ok(())
}

async fn send_mark_commit(
    pool: &PgPool,
    sandbox: &SchemaName,
    mut tx: Transaction<'_, Postgres>,
    rows: &[Unpublished],
    trace: &mut Tracer,
) -> Result<(), LabError> {
    for row in rows {
        send(pool, sandbox, row, trace).await?;
        mark(&mut tx, sandbox, row, trace).await?;
    }
    tx.commit().await.map_err(LabError::from_sqlx)?;
    trace.sql(Actor::Publisher, "COMMIT", &[], done(), TxState::Committed);
    Ok(())
}

/// What a publisher run did.
pub struct Ran {
    pub sent: Vec<String>,
    /// Whether it found rows to publish.
    pub found: bool,
    /// Where it died, and after which row (from 0).
    pub died: Option<(PublisherCrash, usize)>,
}

/// One publisher run on `conn` (a connection of its own, killed if the publisher dies), held
/// at each of its pauses by `pauses`: after locking the rows, and after each send and each mark.
pub async fn run<P: Pauses>(
    mut conn: PgConnection,
    pool: &PgPool,
    sandbox: &SchemaName,
    pauses: &mut P,
    exit_limit: Duration,
    trace: &mut Tracer,
) -> Result<Ran, LabError> {
    let (mut tx, pid) = begin(&mut conn, sandbox, trace).await?;
    trace.enter(Step::Claim);
    let rows = claim(&mut tx, sandbox, true, trace, None).await?;
    let mut sent = Vec::new();
    let here = |point, next| Here {
        point: PausePoint::Publisher(point),
        next: Some(next),
    };
    let died = 'run: {
        if rows.is_empty() {
            break 'run None;
        }
        let conn = Some(&mut *tx);
        if pauses
            .at(here(PublisherCrash::BeforeSend, Step::Send), conn, trace)
            .await?
            == Go::Die
        {
            break 'run Some((PublisherCrash::BeforeSend, 0));
        }
        for (i, row) in rows.iter().enumerate() {
            trace.enter(Step::Send);
            send(pool, sandbox, row, trace).await?;
            sent.push(row.event_id.clone());
            let conn = Some(&mut *tx);
            if pauses
                .at(here(PublisherCrash::AfterSend, Step::Mark), conn, trace)
                .await?
                == Go::Die
            {
                break 'run Some((PublisherCrash::AfterSend, i));
            }
            trace.enter(Step::Mark);
            mark(&mut tx, sandbox, row, trace).await?;
            let next = if i + 1 < rows.len() {
                Step::Send
            } else {
                Step::Commit
            };
            let conn = Some(&mut *tx);
            if pauses
                .at(here(PublisherCrash::AfterMark, next), conn, trace)
                .await?
                == Go::Die
            {
                break 'run Some((PublisherCrash::AfterMark, i));
            }
        }
        None
    };
    let found = !rows.is_empty();
    if died.is_none() {
        trace.enter(Step::Commit);
        tx.commit().await.map_err(LabError::from_sqlx)?;
        trace.sql(Actor::Publisher, "COMMIT", &[], done(), TxState::Committed);
        conn.close().await.map_err(LabError::from_sqlx)?;
        return Ok(Ran { sent, found, died });
    }
    // The process dies holding the row locks: no ROLLBACK, the socket just closes.
    std::mem::forget(tx);
    crash::kill(conn).await;
    trace.enter(Step::Crash);
    trace.push(
        Actor::Publisher,
        Sent::ProcessCrashed,
        Answer::Nothing,
        TxState::Abandoned,
    );
    crash::wait_until_gone(pool, pid, exit_limit).await?;
    trace.push(
        Actor::Postgres,
        Sent::BackendGone { pid },
        Answer::Nothing,
        TxState::RolledBack,
    );
    Ok(Ran { sent, found, died })
}

/// What two publishers at once did.
pub struct Raced {
    pub a_sent: Vec<String>,
    pub b_sent: Vec<String>,
    pub lock_wait: Option<LockWaitSeen>,
    pub trace: Tracer,
}

/// Two publishers at once on two pooled connections. A locks its rows first; B's SELECT then
/// skips them (SKIP LOCKED) or waits for A's COMMIT and re-checks them (plain FOR UPDATE).
pub async fn race(
    pool: &PgPool,
    sandbox: &SchemaName,
    skip_locked: bool,
    wait_limit: Duration,
) -> Result<Raced, LabError> {
    let start = Instant::now();
    let mut ta = Tracer::lane(start, Lane::A);
    let mut tb = Tracer::lane(start, Lane::B);
    let mut conn_a = pool.acquire().await.map_err(LabError::from_sqlx)?;
    let mut conn_b = pool.acquire().await.map_err(LabError::from_sqlx)?;
    let (mut tx_a, _) = begin(&mut conn_a, sandbox, &mut ta).await?;
    let (mut tx_b, pid_b) = begin(&mut conn_b, sandbox, &mut tb).await?;
    let a_rows = claim(&mut tx_a, sandbox, skip_locked, &mut ta, None).await?;
    let mut lock_wait = None;
    let b_rows = if skip_locked || a_rows.is_empty() {
        let b_rows = claim(&mut tx_b, sandbox, skip_locked, &mut tb, None).await?;
        send_mark_commit(pool, sandbox, tx_a, &a_rows, &mut ta).await?;
        b_rows
    } else {
        // B's SELECT blocks on A's row locks. A goes on only once PostgreSQL shows B waiting,
        // so the wait is real and on record.
        let sent_at = tb.now_us();
        let b_claim = claim(&mut tx_b, sandbox, false, &mut tb, Some(sent_at));
        let a_rest = async {
            let seen = record_lock_wait(pool, pid_b, wait_limit, &mut ta).await?;
            lock_wait = Some(seen);
            send_mark_commit(pool, sandbox, tx_a, &a_rows, &mut ta).await
        };
        let (b_rows, a_done) = tokio::join!(b_claim, a_rest);
        a_done?;
        b_rows?
    };
    send_mark_commit(pool, sandbox, tx_b, &b_rows, &mut tb).await?;
    lock_wait_to_lane_b(&mut ta);
    Ok(Raced {
        a_sent: a_rows.into_iter().map(|r| r.event_id).collect(),
        b_sent: b_rows.into_iter().map(|r| r.event_id).collect(),
        lock_wait,
        trace: Tracer::merge(start, vec![ta, tb]),
    })
}
