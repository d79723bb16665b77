//! A real race: two requests resolve ticket-42 at once, on two connections. A's UPDATE takes
//! the row lock; B's UPDATE waits for it, visibly, in `pg_stat_activity`; A commits; B's
//! UPDATE re-checks its WHERE clause on the row A left. With the guard, B matches 0 rows.

use std::time::{Duration, Instant};

use sqlx::{PgPool, Postgres, Transaction};

use crate::catalog::{Mistake, OutcomeId, Step, names::TICKET_ID};
use crate::input::{AttemptSpec, Mistakes};
use crate::model;
use crate::report::LockWaitSeen;
use crate::sql_trace::{Actor, Answer, Lane, Sent, TxState};

use super::error::LabError;
use super::names::SchemaName;
use super::sandbox_tx;
use super::ticket_function::{begin_in_sandbox, insert_refusal};
use super::ticket_statements::{GUARDED_UPDATE, INSERT_OUTBOX, UNGUARDED_UPDATE};
use super::trace::{Tracer, answer_of, done, rows};

/// What the race did.
pub struct Raced {
    pub a: OutcomeId,
    pub b: OutcomeId,
    pub lock_wait: Option<LockWaitSeen>,
    pub trace: Tracer,
}

const LOCK_WAIT: &str = "SELECT wait_event_type, wait_event, pg_blocking_pids(pid) \
     FROM pg_stat_activity WHERE pid = $1";

pub async fn run(
    pool: &PgPool,
    sandbox: &SchemaName,
    mistakes: &Mistakes,
    wait_limit: Duration,
) -> Result<Raced, LabError> {
    let start = Instant::now();
    let (spec_a, spec_b) = model::race_specs(mistakes);
    let update = if mistakes.has(Mistake::UnguardedUpdate) {
        UNGUARDED_UPDATE
    } else {
        GUARDED_UPDATE
    };
    let mut ta = Tracer::lane(start, Lane::A);
    let mut tb = Tracer::lane(start, Lane::B);
    let mut conn_a = pool.acquire().await.map_err(LabError::from_sqlx)?;
    let mut conn_b = pool.acquire().await.map_err(LabError::from_sqlx)?;
    let (mut tx_a, _, _) = begin_in_sandbox(&mut conn_a, sandbox, &mut ta).await?;
    let (mut tx_b, pid_b, _) = begin_in_sandbox(&mut conn_b, sandbox, &mut tb).await?;

    let a_updated = run_update(&mut tx_a, update, sandbox, &mut ta, false).await?;
    let mut lock_wait = None;
    let (a, b_updated) = if a_updated == 1 {
        // B's UPDATE now blocks on A's row lock. A goes on only once PostgreSQL shows B
        // waiting, so the wait is real and on record, not a guess.
        let b_update = run_update(&mut tx_b, update, sandbox, &mut tb, true);
        let a_rest = async {
            let seen = record_lock_wait(pool, pid_b, wait_limit, &mut ta).await?;
            lock_wait = Some(seen);
            insert_and_commit(tx_a, &spec_a, &mut ta).await
        };
        let (b_updated, a) = tokio::join!(b_update, a_rest);
        (a?, b_updated?)
    } else {
        sandbox_tx::rollback(tx_a, Actor::Service, &mut ta).await?;
        let b_updated = run_update(&mut tx_b, update, sandbox, &mut tb, false).await?;
        (OutcomeId::GuardRejected, b_updated)
    };
    let b = if b_updated == 1 {
        insert_and_commit(tx_b, &spec_b, &mut tb).await?
    } else {
        sandbox_tx::rollback(tx_b, Actor::Service, &mut tb).await?;
        OutcomeId::GuardRejected
    };
    lock_wait_to_lane_b(&mut ta);
    Ok(Raced {
        a,
        b,
        lock_wait,
        trace: Tracer::merge(start, vec![ta, tb]),
    })
}

async fn run_update(
    tx: &mut Transaction<'_, Postgres>,
    sql: &'static str,
    sandbox: &SchemaName,
    trace: &mut Tracer,
    waits: bool,
) -> Result<u64, LabError> {
    trace.enter(Step::Update);
    let sent = trace.now_us();
    let n = sqlx::query(sql)
        .bind(TICKET_ID)
        .execute(&mut **tx)
        .await
        .map_err(|e| LabError::in_sandbox(e, sandbox.as_str()))?
        .rows_affected();
    trace.sql(Actor::Service, sql, &[TICKET_ID], rows(n), TxState::Open);
    // An UPDATE that waited for a lock belongs in time where it was sent; the trace keeps
    // both moments.
    if let Some(step) = trace.steps_mut().last_mut().filter(|_| waits) {
        step.answered_us = Some(step.at_us);
        step.at_us = sent;
    }
    Ok(n)
}

async fn insert_and_commit(
    mut tx: Transaction<'_, Postgres>,
    spec: &AttemptSpec,
    trace: &mut Tracer,
) -> Result<OutcomeId, LabError> {
    trace.enter(Step::Insert);
    let params = [spec.event_id.as_str(), TICKET_ID, spec.payload.as_str()];
    let inserted = sqlx::query(INSERT_OUTBOX)
        .bind(params[0])
        .bind(params[1])
        .bind(params[2])
        .execute(&mut *tx)
        .await;
    match inserted {
        Ok(r) => trace.sql(
            Actor::Service,
            INSERT_OUTBOX,
            &params,
            rows(r.rows_affected()),
            TxState::Open,
        ),
        Err(err) if matches!(err, sqlx::Error::Database(_)) => {
            trace.sql(
                Actor::Service,
                INSERT_OUTBOX,
                &params,
                answer_of(&err),
                TxState::Failed,
            );
            sandbox_tx::rollback(tx, Actor::Service, trace).await?;
            return Ok(insert_refusal(&err));
        }
        Err(err) => return Err(LabError::from_sqlx(err)),
    }
    trace.enter(Step::Commit);
    tx.commit().await.map_err(LabError::from_sqlx)?;
    trace.sql(Actor::Service, "COMMIT", &[], done(), TxState::Committed);
    Ok(OutcomeId::Committed)
}

/// Waits until B's backend `pid` is seen waiting on a lock, and records the wait in A's trace
/// (a third session saw it; [`lock_wait_to_lane_b`] moves it to B's lane once both are done).
pub(super) async fn record_lock_wait(
    pool: &PgPool,
    pid: i32,
    limit: Duration,
    ta: &mut Tracer,
) -> Result<LockWaitSeen, LabError> {
    let seen = wait_until_blocked(pool, pid, limit, ta).await?;
    ta.push(
        Actor::Postgres,
        Sent::LockWait {
            pid: seen.waiting_pid,
            blocked_by: seen.blocked_by.clone(),
        },
        Answer::Values {
            values: vec!["Lock".to_owned(), seen.wait_event.clone()],
        },
        TxState::Open,
    );
    Ok(seen)
}

/// The lock wait was seen by a third session, but it belongs to B's lane.
pub(super) fn lock_wait_to_lane_b(ta: &mut Tracer) {
    for step in ta.steps_mut() {
        if matches!(step.sent, Sent::LockWait { .. }) {
            step.lane = Some(Lane::B);
        }
    }
}

/// Polls (bounded) until backend `pid` waits on a lock, and returns what was seen.
async fn wait_until_blocked(
    pool: &PgPool,
    pid: i32,
    limit: Duration,
    clock: &Tracer,
) -> Result<LockWaitSeen, LabError> {
    let start = Instant::now();
    let mut pause = Duration::from_micros(200);
    loop {
        let row: Option<(Option<String>, Option<String>, Vec<i32>)> = sqlx::query_as(LOCK_WAIT)
            .bind(pid)
            .fetch_optional(pool)
            .await
            .map_err(LabError::from_sqlx)?;
        if let Some((Some(kind), event, blocked_by)) = row
            && kind == "Lock"
            && !blocked_by.is_empty()
        {
            return Ok(LockWaitSeen {
                waiting_pid: pid,
                blocked_by,
                wait_event: event.unwrap_or_default(),
                at_us: clock.now_us(),
            });
        }
        if start.elapsed() >= limit {
            return Err(LabError::LockWaitNotSeen { pid });
        }
        // PostgreSQL has no notification for "a backend started waiting"; poll with backoff.
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}
