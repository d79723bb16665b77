//! The ticket function's statements, shared by its two modes (the outbox way in
//! `ticket_function`, Trace A in `naive`): the lesson's SQL, one statement through the
//! transaction or (the mistake) through the pool, COMMIT, and where the function stopped.

use sqlx::{PgPool, Postgres, Transaction};

use crate::catalog::{OutcomeId, Step};
use crate::sql_trace::{Actor, TxState};

use super::error::{LabError, is_connection_failure};
use super::names::SchemaName;
use super::sandbox_tx;
use super::trace::{Tracer, answer_of, done, rows};

/// Step 1: change the status only if the ticket is still open.
pub const GUARDED_UPDATE: &str =
    "UPDATE tickets SET status = 'resolved' WHERE id = $1 AND status = 'open'";
/// The mistake `unguarded_update`: no `AND status = 'open'`.
pub const UNGUARDED_UPDATE: &str = "UPDATE tickets SET status = 'resolved' WHERE id = $1";
/// Step 2: the durable intent to publish, in the same transaction.
pub const INSERT_OUTBOX: &str = "INSERT INTO outbox (event_id, aggregate_id, payload, published_at) VALUES ($1, $2, $3::jsonb, NULL)";
/// The mistake `on_conflict_do_nothing`: a replayed event_id is silently skipped.
pub const INSERT_OUTBOX_DO_NOTHING: &str = "INSERT INTO outbox (event_id, aggregate_id, payload, published_at) VALUES ($1, $2, $3::jsonb, NULL) ON CONFLICT (event_id) DO NOTHING";
/// Where the lesson's function stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The function returned with this outcome; the connection is healthy.
    Returned(OutcomeId),
    /// The process dies here. The caller must kill the connection without a ROLLBACK or a
    /// goodbye, so that PostgreSQL itself deals with whatever is open.
    Crash(OutcomeId),
    /// COMMIT was sent and no answer came: the outcome is unknown.
    CommitUnanswered,
}

/// Where an attempt runs: the learner's sandbox, and the pool that statements outside the
/// transaction (the mistakes, the simulated broker) go through.
#[derive(Clone, Copy)]
pub struct Place<'a> {
    pub pool: &'a PgPool,
    pub sandbox: &'a SchemaName,
}

/// A statement's result: rows affected, or PostgreSQL's refusal (the connection is fine).
type StatementResult = Result<u64, sqlx::Error>;

/// Runs one statement of the function, through `tx` or — the mistake — through the pool in a
/// transaction of its own that commits at once.
pub(super) async fn statement(
    tx: &mut Transaction<'_, Postgres>,
    outside: bool,
    place: Place<'_>,
    sql: &'static str,
    params: &[&str],
    trace: &mut Tracer,
) -> Result<StatementResult, LabError> {
    let bind = |mut q: sqlx::query::Query<'static, Postgres, sqlx::postgres::PgArguments>| {
        for p in params {
            q = q.bind((*p).to_owned());
        }
        q
    };
    if !outside {
        let result = bind(sqlx::query(sql)).execute(&mut **tx).await;
        return finish_statement(result, Actor::Service, sql, params, trace);
    }
    let mut own = sandbox_tx::begin(place.pool, place.sandbox, Actor::ServicePool, trace).await?;
    let result = bind(sqlx::query(sql)).execute(&mut *own).await;
    let result = finish_statement(result, Actor::ServicePool, sql, params, trace)?;
    match &result {
        Ok(_) => sandbox_tx::commit(own, Actor::ServicePool, trace).await?,
        Err(_) => sandbox_tx::rollback(own, Actor::ServicePool, trace).await?,
    }
    Ok(result)
}

fn finish_statement(
    result: Result<sqlx::postgres::PgQueryResult, sqlx::Error>,
    actor: Actor,
    sql: &str,
    params: &[&str],
    trace: &mut Tracer,
) -> Result<StatementResult, LabError> {
    match result {
        Ok(r) => {
            trace.sql(actor, sql, params, rows(r.rows_affected()), TxState::Open);
            Ok(Ok(r.rows_affected()))
        }
        Err(err) if matches!(err, sqlx::Error::Database(_)) => {
            let state = if actor == Actor::Service {
                TxState::Failed
            } else {
                TxState::Open
            };
            trace.sql(actor, sql, params, answer_of(&err), state);
            Ok(Err(err))
        }
        Err(err) => Err(LabError::from_sqlx(err)),
    }
}

/// Sends COMMIT; `Some(stop)` when no answer came.
pub async fn commit(
    tx: Transaction<'_, Postgres>,
    trace: &mut Tracer,
) -> Result<Option<Stop>, LabError> {
    trace.enter(Step::Commit);
    match tx.commit().await {
        Ok(()) => {
            trace.sql(Actor::Service, "COMMIT", &[], done(), TxState::Committed);
            Ok(None)
        }
        Err(err) if is_connection_failure(&err) => {
            trace.sql(
                Actor::Service,
                "COMMIT",
                &[],
                answer_of(&err),
                TxState::Unknown,
            );
            Ok(Some(Stop::CommitUnanswered))
        }
        Err(err) => Err(LabError::from_sqlx(err)),
    }
}
