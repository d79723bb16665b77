//! The lesson's attempt as an action: the function of `ticket_function.rs` on a pooled
//! connection, or on a connection of its own when its process dies or its network fails; then
//! the retry of the mistake `new_event_id_on_retry`.

use sqlx::postgres::PgSslMode;
use sqlx::{Connection, PgConnection};

use crate::catalog::{ActionKind, CommitFate, Mistake, OutcomeId, Step};
use crate::input::AttemptSpec;
use crate::model;
use crate::prediction::Prediction;
use crate::report::Report;
use crate::sql_trace::{Actor, Answer, Sent, TxState};

use super::super::budget::Needs;
use super::super::crash;
use super::super::error::LabError;
use super::super::names::SchemaName;
use super::super::pending::{Pending, PendingAttempt};
use super::super::runner::{Lab, Locked};
use super::super::ticket_function::{self, Attempted};
use super::super::ticket_statements::{Place, Stop};
use super::super::trace::Tracer;
use super::super::wire_fault::{CommitFault, Relay, Upstream};

impl Lab {
    /// Runs the lesson's transaction with the requested crash point.
    pub async fn attempt(
        &self,
        sandbox: &SchemaName,
        spec: &AttemptSpec,
    ) -> Result<Report, LabError> {
        self.attempt_predicted(sandbox, spec, &Prediction::none())
            .await
    }

    /// Runs the attempt and judges the learner's `prediction` against the tables afterwards.
    pub async fn attempt_predicted(
        &self,
        sandbox: &SchemaName,
        spec: &AttemptSpec,
        prediction: &Prediction,
    ) -> Result<Report, LabError> {
        // PostgreSQL says what the payload becomes as the lock is taken: the model's input.
        let payloads = [spec.payload.as_str()];
        self.locked(sandbox, Needs::attempt(spec), payloads, |locked| {
            self.attempt_locked(locked, sandbox, spec, prediction)
        })
        .await
    }

    async fn attempt_locked(
        &self,
        locked: Locked<1>,
        sandbox: &SchemaName,
        spec: &AttemptSpec,
        prediction: &Prediction,
    ) -> Result<Report, LabError> {
        let Locked {
            mut lock,
            before,
            stored_payloads: [stored_payload],
        } = locked;
        let expected = model::predict_attempt(&before, spec, stored_payload.as_deref());
        let mut trace = Tracer::new();
        let place = Place {
            pool: self.pool(),
            sandbox,
        };
        let attempted = if spec.crash.kills_process() {
            self.attempt_on_own_connection(sandbox, spec, &mut trace)
                .await?
        } else {
            // The session that holds the sandbox's lock runs the lesson's transaction too: no
            // second checkout, and no second round trip to test that connection on its return.
            ticket_function::resolve_ticket(lock.conn()?, place, spec, &mut trace).await?
        };
        let outcome = match attempted.stop {
            Stop::Returned(o) | Stop::Crash(o) => o,
            Stop::CommitUnanswered if spec.mistakes.has(Mistake::NewEventIdOnRetry) => {
                self.retry_with_fresh_id(place, spec, &attempted.xid, &mut trace)
                    .await?
            }
            Stop::CommitUnanswered => OutcomeId::CommitUnknown,
        };
        let pending = PendingAttempt {
            xid: attempted.xid,
            settings: spec.settings(),
            before: before.clone(),
            writer_after: false,
        };
        self.finish(
            lock,
            sandbox,
            ActionKind::Attempt,
            Some(spec.settings()),
            before,
            trace,
            Some(outcome),
            expected,
            Pending::Set(Box::new(pending)),
            |report| report.prediction = prediction.judge(report),
        )
        .await
    }

    /// The mistake `new_event_id_on_retry`: the client takes the unknown COMMIT for a failure
    /// and runs the function again with a fresh event_id.
    pub(in crate::pg) async fn retry_with_fresh_id(
        &self,
        place: Place<'_>,
        spec: &AttemptSpec,
        first_xid: &str,
        trace: &mut Tracer,
    ) -> Result<OutcomeId, LabError> {
        const XACT_STATUS: &str = "SELECT pg_xact_status(NULLIF($1, '')::xid8)";
        let retry = spec.fresh_id_retry();
        trace.enter(Step::Retry);
        trace.push(
            Actor::Service,
            Sent::RetryWithNewId {
                event_id: retry.event_id.as_str().to_owned(),
            },
            Answer::Nothing,
            TxState::Idle,
        );
        let mut conn = self.pool().acquire().await.map_err(LabError::from_sqlx)?;
        let again = ticket_function::resolve_ticket(&mut conn, place, &retry, trace).await?;
        drop(conn);
        // The retry ran the whole function again; what follows is the playground's question.
        trace.enter(Step::Retry);
        let outcome = match again.stop {
            Stop::Returned(o) | Stop::Crash(o) => o,
            Stop::CommitUnanswered => OutcomeId::CommitUnknown,
        };
        Ok(match outcome {
            OutcomeId::GuardRejected => OutcomeId::RetryRefused,
            OutcomeId::Committed | OutcomeId::CommittedSilently => {
                // Did the first COMMIT apply after all? The client cannot tell; the playground
                // asks PostgreSQL, to name what the retry did.
                let status: Option<String> = sqlx::query_scalar(XACT_STATUS)
                    .bind(first_xid)
                    .fetch_one(self.pool())
                    .await
                    .map_err(LabError::from_sqlx)?;
                let values = vec![status.clone().unwrap_or_else(|| "NULL".into())];
                trace.sql(
                    Actor::Playground,
                    XACT_STATUS,
                    &[first_xid],
                    Answer::Values { values },
                    TxState::Idle,
                );
                if status.as_deref() == Some("committed") {
                    OutcomeId::RetryDuplicated
                } else {
                    OutcomeId::RetryCommitted
                }
            }
            other => other,
        })
    }

    /// An attempt whose process dies (or whose network fails) gets a connection of its own,
    /// so killing it never touches the pool.
    async fn attempt_on_own_connection(
        &self,
        sandbox: &SchemaName,
        spec: &AttemptSpec,
        trace: &mut Tracer,
    ) -> Result<Attempted, LabError> {
        let _slot = self.crash_slot().await?;
        let relay = if spec.crash.needs_relay() {
            Some(self.start_relay(Some(spec.commit_fate)).await?)
        } else {
            None
        };
        let mut conn = self.connect_own(relay.as_ref()).await?;
        let place = Place {
            pool: self.pool(),
            sandbox,
        };
        let attempted = ticket_function::resolve_ticket(&mut conn, place, spec, trace).await?;
        self.settle_own_connection(conn, &attempted, relay, trace)
            .await?;
        Ok(attempted)
    }

    /// One of the few connections of their own that may be open at once (each may be killed).
    pub(in crate::pg) async fn crash_slot(
        &self,
    ) -> Result<tokio::sync::SemaphorePermit<'_>, LabError> {
        self.inner
            .crash_slots
            .acquire()
            .await
            .map_err(|_| LabError::Config("the runner is shutting down".into()))
    }

    /// A connection of its own, through `relay` if there is one.
    pub(in crate::pg) async fn connect_own(
        &self,
        relay: Option<&Relay>,
    ) -> Result<PgConnection, LabError> {
        let options = match relay {
            Some(relay) => self
                .inner
                .connect
                .clone()
                .host("127.0.0.1")
                .port(relay.port())
                .ssl_mode(PgSslMode::Disable),
            None => self.inner.connect.clone(),
        };
        PgConnection::connect_with(&options)
            .await
            .map_err(LabError::from_sqlx)
    }

    /// Ends an own connection the way its function stopped: closed politely when the function
    /// returned, killed without a word when the process died, dropped when COMMIT's reply was
    /// lost; then waits until PostgreSQL's backend is gone.
    pub(in crate::pg) async fn settle_own_connection(
        &self,
        conn: PgConnection,
        attempted: &Attempted,
        relay: Option<Relay>,
        trace: &mut Tracer,
    ) -> Result<(), LabError> {
        match attempted.stop {
            Stop::Returned(_) => {
                // The function returned before its crash point: the process lives on.
                conn.close().await.map_err(LabError::from_sqlx)?;
            }
            Stop::Crash(_) => {
                let tx = trace_tx_after_crash(trace);
                trace.enter(Step::Crash);
                crash::kill(conn).await;
                trace.push(Actor::Service, Sent::ProcessCrashed, Answer::Nothing, tx);
                self.observe_backend_exit(attempted.backend_pid, &attempted.xid, tx, trace)
                    .await?;
            }
            Stop::CommitUnanswered => {
                drop(conn);
                if let Some(relay) = relay {
                    let seen = relay
                        .finish(self.config().backend_exit_timeout)
                        .await
                        .map_err(LabError::Relay)?;
                    tracing::debug!(?seen, "relay finished");
                }
                trace.push(
                    Actor::Network,
                    Sent::ConnectionCut,
                    Answer::Nothing,
                    TxState::Unknown,
                );
                trace.enter(Step::Crash);
                // The client still does not know; the trace must not tell either.
                self.observe_backend_exit(
                    attempted.backend_pid,
                    &attempted.xid,
                    TxState::Unknown,
                    trace,
                )
                .await?;
            }
        }
        Ok(())
    }

    /// A relay for a lost COMMIT reply: armed with `fate` now, or later (`None`, the stepper).
    pub(in crate::pg) async fn start_relay(
        &self,
        fate: Option<CommitFate>,
    ) -> Result<Relay, LabError> {
        let c = &self.inner.connect;
        if c.get_socket().is_some()
            || matches!(
                c.get_ssl_mode(),
                PgSslMode::Require | PgSslMode::VerifyCa | PgSslMode::VerifyFull
            )
        {
            return Err(LabError::RelayUnsupported);
        }
        let upstream = Upstream {
            host: c.get_host().to_owned(),
            port: c.get_port(),
        };
        let relay = Relay::start_unarmed(upstream)
            .await
            .map_err(LabError::Relay)?;
        if let Some(fate) = fate {
            relay.arm(fault_of(fate));
        }
        Ok(relay)
    }

    /// Waits until PostgreSQL's backend of a dead connection exits, and records it.
    async fn observe_backend_exit(
        &self,
        pid: i32,
        xid: &str,
        tx_before: TxState,
        trace: &mut Tracer,
    ) -> Result<(), LabError> {
        crash::wait_until_gone(self.pool(), pid, self.config().backend_exit_timeout).await?;
        // An abandoned transaction is not assumed rolled back: PostgreSQL is asked what became
        // of its id. After a lost reply the client still does not know, so nothing is asked.
        let (tx, answer) = match tx_before {
            // A transaction that never wrote has no id to ask about: it ended with its backend.
            TxState::Abandoned if xid.is_empty() => (TxState::RolledBack, Answer::Nothing),
            TxState::Abandoned => {
                let status = crash::xact_status(self.pool(), xid).await?;
                let tx = match status.as_deref() {
                    Some("aborted") => TxState::RolledBack,
                    Some("committed") => TxState::Committed,
                    _ => TxState::Abandoned,
                };
                let shown = status.unwrap_or_else(|| "NULL".to_owned());
                let values = vec![format!("pg_xact_status({xid}) = {shown}")];
                (tx, Answer::Values { values })
            }
            other => (other, Answer::Nothing),
        };
        trace.push(Actor::Postgres, Sent::BackendGone { pid }, answer, tx);
        Ok(())
    }
}

/// What the relay does for a fate; `random` is drawn here, so the learner finds out only by
/// reconciling.
pub(in crate::pg) fn fault_of(fate: CommitFate) -> CommitFault {
    match fate {
        CommitFate::Applied => CommitFault::DropReply,
        CommitFate::NotApplied => CommitFault::DropCommit,
        CommitFate::Random if rand::random::<bool>() => CommitFault::DropReply,
        CommitFate::Random => CommitFault::DropCommit,
    }
}

/// What the transaction was doing when the process died: open, or already committed.
fn trace_tx_after_crash(trace: &Tracer) -> TxState {
    match trace.last_tx() {
        Some(TxState::Committed) | Some(TxState::Idle) => TxState::Idle,
        _ => TxState::Abandoned,
    }
}
