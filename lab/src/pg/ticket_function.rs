//! The lesson's transaction: BEGIN → guarded UPDATE → INSERT outbox → COMMIT, all through one
//! transaction handle (`tx`), with the crash points as named stops between the steps. The
//! classic mistakes are real code paths here too: a statement through the pool instead of
//! `tx`, a missing guard, `ON CONFLICT DO NOTHING`. Trace A lives in `naive`; the
//! statements both share in `ticket_statements`, the pause hook in `pauses`.

use sqlx::{Connection, PgConnection, Postgres, Transaction};

use crate::catalog::{CrashPoint, Mistake, Mode, OutcomeId, PausePoint, Step, names::TICKET_ID};
use crate::input::AttemptSpec;
use crate::sql_trace::{Actor, Answer, TxState};

use super::error::{LabError, sqlstate};
use super::naive::naive_steps;
use super::names::SchemaName;
use super::pauses::{Go, Here, Pauses, Planned};
use super::sandbox_tx;
use super::ticket_statements::{
    GUARDED_UPDATE, INSERT_OUTBOX, INSERT_OUTBOX_DO_NOTHING, Place, Stop, UNGUARDED_UPDATE, commit,
    statement,
};
use super::trace::{Tracer, done};

/// The playground's plumbing inside the transaction: point the lesson's unqualified table
/// names at the learner's sandbox, and note the backend and transaction ids (the first to
/// prove a crash's backend is gone, the second for reconciliation).
pub const ENTER_SANDBOX: &str =
    "SELECT set_config('search_path', $1, true), pg_backend_pid(), pg_current_xact_id()::text";
/// The same for a stepped transaction, which must show when PostgreSQL really assigns its id
/// (at the first write), so it does not force one.
pub const ENTER_SANDBOX_LAZY_XID: &str = "SELECT set_config('search_path', $1, true), pg_backend_pid(), COALESCE(pg_current_xact_id_if_assigned()::text, '')";

/// The stop, plus the ids noted inside the transaction.
#[derive(Debug, Clone)]
pub struct Attempted {
    pub stop: Stop,
    pub backend_pid: i32,
    pub xid: String,
}

/// Runs the attempt's function on `conn`, dying where `spec.crash` says, and records every
/// step in `trace`.
pub async fn resolve_ticket(
    conn: &mut PgConnection,
    place: Place<'_>,
    spec: &AttemptSpec,
    trace: &mut Tracer,
) -> Result<Attempted, LabError> {
    let mut planned = Planned(PausePoint::Ticket(spec.crash));
    run_function(conn, place, spec, &mut planned, trace).await
}

/// Runs the attempt's function on `conn`, held at each pause by `pauses`.
pub async fn run_function<P: Pauses>(
    conn: &mut PgConnection,
    place: Place<'_>,
    spec: &AttemptSpec,
    pauses: &mut P,
    trace: &mut Tracer,
) -> Result<Attempted, LabError> {
    let enter = if pauses.forces_xid() {
        ENTER_SANDBOX
    } else {
        ENTER_SANDBOX_LAZY_XID
    };
    let (mut tx, backend_pid, xid) = begin_with(conn, place.sandbox, enter, trace).await?;
    if pauses
        .at(
            Here::ticket(spec.mode, CrashPoint::AfterBegin),
            Some(&mut *tx),
            trace,
        )
        .await?
        == Go::Die
    {
        std::mem::forget(tx);
        return Ok(Attempted {
            stop: Stop::Crash(OutcomeId::CrashedAfterBegin),
            backend_pid,
            xid,
        });
    }
    let stop = match spec.mode {
        Mode::Outbox => outbox_steps(tx, place, spec, pauses, trace).await?,
        Mode::Naive | Mode::NaivePublishFirst => {
            naive_steps(tx, place, spec, pauses, trace).await?
        }
    };
    Ok(Attempted {
        stop,
        backend_pid,
        xid,
    })
}

/// BEGIN, then the sandbox on the search_path; notes the backend's pid and the transaction id.
pub async fn begin_in_sandbox<'c>(
    conn: &'c mut PgConnection,
    sandbox: &SchemaName,
    trace: &mut Tracer,
) -> Result<(Transaction<'c, Postgres>, i32, String), LabError> {
    begin_with(conn, sandbox, ENTER_SANDBOX, trace).await
}

async fn begin_with<'c>(
    conn: &'c mut PgConnection,
    sandbox: &SchemaName,
    enter: &'static str,
    trace: &mut Tracer,
) -> Result<(Transaction<'c, Postgres>, i32, String), LabError> {
    trace.enter(Step::Begin);
    let mut tx = conn.begin().await.map_err(LabError::from_sqlx)?;
    trace.sql(Actor::Service, "BEGIN", &[], done(), TxState::Open);
    let (_, backend_pid, xid): (String, i32, String) = sqlx::query_as(enter)
        .bind(sandbox.as_str())
        .fetch_one(&mut *tx)
        .await
        .map_err(LabError::from_sqlx)?;
    let values = vec![sandbox.to_string(), backend_pid.to_string(), xid.clone()];
    trace.sql(
        Actor::Playground,
        enter,
        &[sandbox.as_str()],
        Answer::Values { values },
        TxState::Open,
    );
    Ok((tx, backend_pid, xid))
}

/// What a refused INSERT means for the lesson: a duplicate event, a payload PostgreSQL will
/// not cast to jsonb, or another failure.
pub fn insert_refusal(err: &sqlx::Error) -> OutcomeId {
    match sqlstate(err).as_deref() {
        Some("23505") => OutcomeId::InsertConflict,
        Some(code) if code.starts_with("22") => OutcomeId::InvalidPayload,
        _ => OutcomeId::InsertFailed,
    }
}

/// Lesson 8.2's function, with the chosen mistakes.
async fn outbox_steps<P: Pauses>(
    mut tx: Transaction<'_, Postgres>,
    place: Place<'_>,
    spec: &AttemptSpec,
    pauses: &mut P,
    trace: &mut Tracer,
) -> Result<Stop, LabError> {
    let m = &spec.mistakes;
    let update_outside = m.has(Mistake::UpdateOutsideTx);
    // After an UPDATE that committed on its own, no rollback undoes the status.
    let lost = |o| {
        if update_outside {
            OutcomeId::ChangeWithoutIntent
        } else {
            o
        }
    };

    // Step 1: the UPDATE.
    trace.enter(Step::Update);
    let update = if m.has(Mistake::UnguardedUpdate) {
        UNGUARDED_UPDATE
    } else {
        GUARDED_UPDATE
    };
    let updated = statement(&mut tx, update_outside, place, update, &[TICKET_ID], trace)
        .await?
        .map_err(|e| LabError::in_sandbox(e, place.sandbox.as_str()))?;
    if updated != 1 {
        // 0 rows: the ticket is not open (or missing). A business condition, not a driver
        // error: end the transaction and write no event.
        sandbox_tx::rollback(tx, Actor::Service, trace).await?;
        return Ok(Stop::Returned(OutcomeId::GuardRejected));
    }

    if pauses
        .at(
            Here::ticket(spec.mode, CrashPoint::AfterUpdate),
            Some(&mut *tx),
            trace,
        )
        .await?
        == Go::Die
    {
        // Forgetting the handle skips sqlx's queued ROLLBACK: the process is simply gone.
        std::mem::forget(tx);
        return Ok(Stop::Crash(lost(OutcomeId::CrashedAfterUpdate)));
    }

    // Step 2: the outbox row. The payload is a bound parameter.
    trace.enter(Step::Insert);
    let insert_outside = m.has(Mistake::InsertOutsideTx);
    let insert = if m.has(Mistake::OnConflictDoNothing) {
        INSERT_OUTBOX_DO_NOTHING
    } else {
        INSERT_OUTBOX
    };
    let params = [spec.event_id.as_str(), TICKET_ID, spec.payload.as_str()];
    let inserted = match statement(&mut tx, insert_outside, place, insert, &params, trace).await? {
        Ok(n) => n == 1,
        Err(err) => {
            sandbox_tx::rollback(tx, Actor::Service, trace).await?;
            return Ok(Stop::Returned(lost(insert_refusal(&err))));
        }
    };

    if pauses
        .at(
            Here::ticket(spec.mode, CrashPoint::AfterInsert),
            Some(&mut *tx),
            trace,
        )
        .await?
        == Go::Die
    {
        std::mem::forget(tx);
        let outcome = if insert_outside && inserted {
            OutcomeId::OrphanIntent
        } else {
            lost(OutcomeId::CrashedBeforeCommit)
        };
        return Ok(Stop::Crash(outcome));
    }

    // Step 3: COMMIT, only because both steps succeeded.
    if let Some(stop) = commit(tx, trace).await? {
        return Ok(stop);
    }
    if pauses
        .at(
            Here::ticket(spec.mode, CrashPoint::AfterCommit),
            None,
            trace,
        )
        .await?
        == Go::Die
    {
        return Ok(Stop::Crash(OutcomeId::CommittedThenCrashed));
    }
    // Nobody checked the INSERT's row count: the function reports success either way.
    Ok(Stop::Returned(if inserted {
        OutcomeId::Committed
    } else {
        OutcomeId::CommittedSilently
    }))
}
