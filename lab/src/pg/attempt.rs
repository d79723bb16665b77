//! The lesson's transaction: BEGIN → guarded UPDATE → INSERT outbox → COMMIT, all through one
//! transaction handle (`tx`), with the crash points as named stops between the steps.

use sqlx::{Connection, PgConnection};

use crate::catalog::{CrashPoint, OutcomeId, names::TICKET_ID};
use crate::input::AttemptSpec;
use crate::outcome::{Actor, Answer, TxState};

use super::error::{LabError, is_connection_failure, sqlstate};
use super::names::SchemaName;
use super::trace::{Tracer, answer_of, done, rows};

/// Step 1: change the status only if the ticket is still open.
pub const GUARDED_UPDATE: &str =
    "UPDATE tickets SET status = 'resolved' WHERE id = $1 AND status = 'open'";
/// Step 2: the durable intent to publish, in the same transaction.
pub const INSERT_OUTBOX: &str = "INSERT INTO outbox (event_id, aggregate_id, payload, published_at) VALUES ($1, $2, $3::jsonb, NULL)";
/// The playground's plumbing inside the transaction: point the lesson's unqualified table
/// names at the learner's sandbox, and note the backend and transaction ids (the first to
/// prove a crash's backend is gone, the second for reconciliation).
pub const ENTER_SANDBOX: &str =
    "SELECT set_config('search_path', $1, true), pg_backend_pid(), pg_current_xact_id()::text";

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

/// The stop, plus the ids noted inside the transaction.
#[derive(Debug, Clone)]
pub struct Attempted {
    pub stop: Stop,
    pub backend_pid: i32,
    pub xid: String,
}

/// Runs the lesson's transaction on `conn` and records every step in `trace`.
pub async fn resolve_ticket(
    conn: &mut PgConnection,
    sandbox: &SchemaName,
    spec: &AttemptSpec,
    trace: &mut Tracer,
) -> Result<Attempted, LabError> {
    let mut tx = conn.begin().await.map_err(LabError::from_sqlx)?;
    trace.sql(Actor::Service, "BEGIN", &[], done(), TxState::Open);

    let (_, backend_pid, xid): (String, i32, String) = sqlx::query_as(ENTER_SANDBOX)
        .bind(sandbox.as_str())
        .fetch_one(&mut *tx)
        .await
        .map_err(LabError::from_sqlx)?;
    let values = vec![sandbox.to_string(), backend_pid.to_string(), xid.clone()];
    trace.sql(
        Actor::Playground,
        ENTER_SANDBOX,
        &[sandbox.as_str()],
        Answer::Values { values },
        TxState::Open,
    );
    let attempted = |stop| Attempted {
        stop,
        backend_pid,
        xid: xid.clone(),
    };

    // Step 1: the guarded UPDATE, through tx.
    let updated = sqlx::query(GUARDED_UPDATE)
        .bind(TICKET_ID)
        .execute(&mut *tx)
        .await
        .map_err(|e| LabError::in_sandbox(e, sandbox.as_str()))?
        .rows_affected();
    trace.sql(
        Actor::Service,
        GUARDED_UPDATE,
        &[TICKET_ID],
        rows(updated),
        TxState::Open,
    );
    if updated != 1 {
        // 0 rows: the ticket is not open (or missing). A business condition, not a driver
        // error: end the transaction and write no event.
        tx.rollback().await.map_err(LabError::from_sqlx)?;
        trace.sql(Actor::Service, "ROLLBACK", &[], done(), TxState::RolledBack);
        return Ok(attempted(Stop::Returned(OutcomeId::GuardRejected)));
    }

    if spec.crash == CrashPoint::AfterUpdate {
        // Forgetting the handle skips sqlx's queued ROLLBACK: the process is simply gone.
        std::mem::forget(tx);
        return Ok(attempted(Stop::Crash(OutcomeId::CrashedAfterUpdate)));
    }

    // Step 2: the outbox row, through the same tx. The payload is a bound parameter.
    let event_id = spec.event_id.as_str();
    let payload = spec.payload.as_str();
    let inserted = sqlx::query(INSERT_OUTBOX)
        .bind(event_id)
        .bind(TICKET_ID)
        .bind(payload)
        .execute(&mut *tx)
        .await;
    match inserted {
        Ok(result) => trace.sql(
            Actor::Service,
            INSERT_OUTBOX,
            &[event_id, TICKET_ID, payload],
            rows(result.rows_affected()),
            TxState::Open,
        ),
        Err(err) if matches!(err, sqlx::Error::Database(_)) => {
            let outcome = match sqlstate(&err).as_deref() {
                Some("23505") => OutcomeId::InsertConflict,
                Some(code) if code.starts_with("22") => OutcomeId::InvalidPayload,
                _ => OutcomeId::InsertFailed,
            };
            let params = [event_id, TICKET_ID, payload];
            trace.sql(
                Actor::Service,
                INSERT_OUTBOX,
                &params,
                answer_of(&err),
                TxState::Failed,
            );
            tx.rollback().await.map_err(LabError::from_sqlx)?;
            trace.sql(Actor::Service, "ROLLBACK", &[], done(), TxState::RolledBack);
            return Ok(attempted(Stop::Returned(outcome)));
        }
        Err(err) => return Err(LabError::from_sqlx(err)),
    }

    if spec.crash == CrashPoint::AfterInsert {
        std::mem::forget(tx);
        return Ok(attempted(Stop::Crash(OutcomeId::CrashedBeforeCommit)));
    }

    // Step 3: COMMIT, only because both steps succeeded.
    match tx.commit().await {
        Ok(()) => trace.sql(Actor::Service, "COMMIT", &[], done(), TxState::Committed),
        Err(err) if is_connection_failure(&err) => {
            trace.sql(
                Actor::Service,
                "COMMIT",
                &[],
                answer_of(&err),
                TxState::Unknown,
            );
            return Ok(attempted(Stop::CommitUnanswered));
        }
        Err(err) => return Err(LabError::from_sqlx(err)),
    }

    if spec.crash == CrashPoint::AfterCommit {
        return Ok(attempted(Stop::Crash(OutcomeId::CommittedThenCrashed)));
    }
    Ok(attempted(Stop::Returned(OutcomeId::Committed)))
}
