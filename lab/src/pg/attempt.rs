//! The lesson's transaction: BEGIN → guarded UPDATE → INSERT outbox → COMMIT, all through one
//! transaction handle (`tx`), with the crash points as named stops between the steps. The
//! classic mistakes are real code paths here too: a statement through the pool instead of
//! `tx`, a missing guard, `ON CONFLICT DO NOTHING`. Trace A lives in [`super::naive`].

use sqlx::{Connection, PgConnection, PgPool, Postgres, Transaction};

use crate::catalog::{CrashPoint, Mistake, Mode, OutcomeId, PausePoint, Step, names::TICKET_ID};
use crate::input::AttemptSpec;
use crate::outcome::{Actor, Answer, TxState};

use super::error::{LabError, is_connection_failure, sqlstate};
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
/// The playground's plumbing inside the transaction: point the lesson's unqualified table
/// names at the learner's sandbox, and note the backend and transaction ids (the first to
/// prove a crash's backend is gone, the second for reconciliation).
pub const ENTER_SANDBOX: &str =
    "SELECT set_config('search_path', $1, true), pg_backend_pid(), pg_current_xact_id()::text";
/// The same for a stepped transaction, which must show when PostgreSQL really assigns its id
/// (at the first write), so it does not force one.
pub const ENTER_SANDBOX_LAZY_XID: &str = "SELECT set_config('search_path', $1, true), pg_backend_pid(), COALESCE(pg_current_xact_id_if_assigned()::text, '')";

/// What happens at a pause of the function (a crash point of its mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Go {
    /// The next statement runs.
    On,
    /// The process dies here.
    Die,
}

/// A pause as a scenario's code reaches it: the crash point, and the step that runs next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Here {
    pub point: PausePoint,
    /// `None` when the code would simply return.
    pub next: Option<Step>,
}

impl Here {
    /// A pause of the ticket function in `mode`.
    pub fn ticket(mode: Mode, point: CrashPoint) -> Here {
        Here {
            point: PausePoint::Ticket(point),
            next: mode.step_after(point),
        }
    }
}

/// Holds a scenario's code at its pauses — the ticket function's, the publisher's and the
/// consumer's alike. The one-shot run decides up front ([`Planned`]); the stepper asks the
/// learner.
pub trait Pauses: Send {
    /// Called at each crash point the code reaches, in order (the publisher's and the
    /// consumer's once per row or event). `conn` is the scenario's connection while its
    /// transaction is open (`None` otherwise).
    fn at(
        &mut self,
        here: Here,
        conn: Option<&mut PgConnection>,
        trace: &mut Tracer,
    ) -> impl std::future::Future<Output = Result<Go, LabError>> + Send;

    /// Whether BEGIN forces a transaction id at once (the one-shot run notes it for
    /// reconciliation); the stepper lets PostgreSQL assign it at the first write.
    fn forces_xid(&self) -> bool {
        true
    }
}

/// The one-shot run: the process dies the first time it reaches the chosen crash point,
/// nowhere else.
pub struct Planned(pub PausePoint);

impl Pauses for Planned {
    async fn at(
        &mut self,
        here: Here,
        _conn: Option<&mut PgConnection>,
        _trace: &mut Tracer,
    ) -> Result<Go, LabError> {
        Ok(if here.point == self.0 {
            Go::Die
        } else {
            Go::On
        })
    }
}

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

/// Where an attempt runs: the learner's sandbox, and the pool that statements outside the
/// transaction (the mistakes, the simulated broker) go through.
#[derive(Clone, Copy)]
pub struct Place<'a> {
    pub pool: &'a PgPool,
    pub sandbox: &'a SchemaName,
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
            super::naive::naive_steps(tx, place, spec, pauses, trace).await?
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
