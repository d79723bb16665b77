//! The stepper: the lesson's function run on a connection of its own and held at each pause
//! (its crash points) until the learner says what happens next. It is the same function as the
//! one-shot attempt ([`ticket_function::run_function`]); only the [`Pauses`] differ.
//!
//! At each pause the learner sees the tables through the held connection and through another
//! session, the backend as `pg_stat_activity` and `pg_locks` show it, and — if they sent one —
//! another writer queued behind the held row lock. The transaction's real limits apply: left
//! idle, PostgreSQL ends it (`idle_in_transaction_session_timeout`); a closed socket is the
//! process dying.

mod held;
mod writer;

use tokio::sync::mpsc;

use crate::catalog::{
    ActionKind, ConsumerCrash, CrashPoint, Mistake, OutcomeId, PausePoint, PublisherCrash,
};
use crate::input::AttemptSpec;
use crate::model;
use crate::report::{AfterCommitRun, Expected};
use crate::step::{Command, Message, StepError};
use crate::stepped::{Stepped, WaiterState};

use super::budget::Needs;
use super::consumer;
use super::error::LabError;
use super::names::SchemaName;
use super::pending::{Pending, PendingAttempt};
use super::publisher;
use super::runner::Lab;
use super::sandbox_lock::{self, SandboxLock};
use super::stepping::{APPLICATION_PREFIX, Claim};
use super::ticket_function;
use super::ticket_statements::{Place, Stop};
use super::trace::Tracer;
use held::{Held, Run};

/// A command the current pause cannot take, by stable code (the server words it).
fn refused(code: &str) -> Message {
    Message::Error(StepError {
        code: code.to_owned(),
        message: String::new(),
    })
}

/// What a run after COMMIT steps through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterCommitStep {
    /// The service restarts and its publisher runs (8.3).
    Publisher,
    /// The History consumer runs, with or without its inbox (8.4).
    Consumer { inbox: bool },
}

/// A stepped run's hold on its sandbox: the process's slot and claim, the local lock, and
/// the held connection (which holds the sandbox's lock in PostgreSQL too).
struct Hold<'a, const N: usize> {
    _claim: Claim<'a>,
    local: sandbox_lock::LocalGuard,
    conn: sqlx::PgConnection,
    before: crate::snapshot::Snapshot,
    /// PostgreSQL's text of each payload passed in (`None`: it refuses the cast).
    stored_payloads: [Option<String>; N],
}

impl Lab {
    /// Takes a stepping slot, the sandbox, and a connection of its own (through `relay` when
    /// there is one) that holds the sandbox's lock while the learner thinks.
    async fn hold<const N: usize>(
        &self,
        sandbox: &SchemaName,
        relay: Option<&super::wire_fault::Relay>,
        payloads: [&str; N],
    ) -> Result<Hold<'_, N>, LabError> {
        let claim = self.inner.stepping.claim(sandbox)?;
        // While the learner thinks, the run holds one connection: the held one, which also
        // holds the sandbox's lock (no connection of the lock pool waits beside it).
        let local = self.local_lock(sandbox).await;
        let mut conn = self.connect_own(relay).await?;
        let idle = self.config().step_idle;
        sqlx::query(
            "SELECT set_config('idle_in_transaction_session_timeout', $1, false), \
             set_config('application_name', $2, false)",
        )
        .bind(format!("{}ms", idle.as_millis()))
        .bind(format!("{APPLICATION_PREFIX}{sandbox}"))
        .execute(&mut conn)
        .await
        .map_err(LabError::from_sqlx)?;
        // PostgreSQL says what the payloads become as the lock is taken: the model's input.
        let entered = match sandbox_lock::enter(&mut conn, sandbox, true, payloads).await {
            Err(LabError::StepInProgress) => return Err(LabError::StepBusy),
            other => other?,
        };
        let sandbox_lock::Entered {
            tables,
            stored_payloads,
        } = entered;
        let before = tables.ok_or_else(|| LabError::SandboxGone(sandbox.to_string()))?;
        Ok(Hold {
            _claim: claim,
            local,
            conn,
            before,
            stored_payloads,
        })
    }

    /// Runs one attempt step by step: pauses go to `out`, the learner's commands come from
    /// `commands` (closed = the learner is gone = the process dies). Returns the report, which
    /// is also kept as the sandbox's last report, like `/api/attempt`'s.
    pub async fn step(
        &self,
        sandbox: &SchemaName,
        spec: &AttemptSpec,
        prediction: &crate::prediction::Prediction,
        commands: &mut mpsc::Receiver<Command>,
        out: &mpsc::Sender<Message>,
    ) -> Result<crate::report::Report, LabError> {
        let relay = match self.start_relay(None).await {
            Ok(relay) => Some(relay),
            Err(LabError::RelayUnsupported) => None,
            Err(e) => return Err(e),
        };
        let hold = self
            .hold(sandbox, relay.as_ref(), [spec.payload.as_str()])
            .await?;
        let Hold {
            _claim,
            local,
            conn,
            before,
            stored_payloads: [stored_payload],
        } = hold;
        self.step_held(
            conn,
            relay,
            local,
            before,
            stored_payload.as_deref(),
            sandbox,
            spec,
            prediction,
            commands,
            out,
        )
        .await
    }

    /// Runs the publisher or the consumer step by step, like [`Lab::step`]; the report is
    /// `/api/restart`'s or `/api/consume`'s, with what the stepper adds.
    pub async fn step_after_commit(
        &self,
        sandbox: &SchemaName,
        what: AfterCommitStep,
        prediction: &crate::prediction::Prediction,
        commands: &mut mpsc::Receiver<Command>,
        out: &mpsc::Sender<Message>,
    ) -> Result<crate::report::Report, LabError> {
        let Hold {
            _claim,
            local,
            conn,
            before,
            stored_payloads: [],
        } = self.hold(sandbox, None, []).await?;
        let run = match what {
            AfterCommitStep::Publisher => Run::Publisher,
            AfterCommitStep::Consumer { inbox } => Run::Consumer { inbox },
        };
        let mut trace = Tracer::new();
        let mut held = Held::new(self, sandbox, run, before.clone(), commands, out);
        let pool = self.pool();
        let limit = self.config().backend_exit_timeout;
        let (kind, outcome, modelled, expected, after_commit) = match what {
            AfterCommitStep::Publisher => {
                let ran = publisher::run(conn, pool, sandbox, &mut held, limit, &mut trace).await?;
                let outcome = super::actions::publisher_outcome(&ran);
                let (point, row) = ran.died.unwrap_or((PublisherCrash::None, 0));
                let p = crate::broker::publish_until(&before, point, row);
                let run = AfterCommitRun::Publisher {
                    crash: point,
                    sent: ran.sent,
                };
                (ActionKind::Restart, outcome, p.outcome, p.state, run)
            }
            AfterCommitStep::Consumer { inbox } => {
                let consumed =
                    consumer::run(conn, pool, sandbox, inbox, &mut held, limit, &mut trace).await?;
                let outcome = super::actions::consumed_outcome(&before, &consumed, inbox);
                let (point, event) = consumed.died.unwrap_or((ConsumerCrash::None, 0));
                let c = crate::broker::consume_until(&before, inbox, point, event);
                let run = consumed.into_run(inbox, point);
                (ActionKind::Consume, outcome, c.outcome, c.state, run)
            }
        };
        let (ended_at, index) = held.ended();
        let idle_timeout = held.idle_timeout;
        let waiter = match held.waiter.take() {
            Some(task) => Some(task.finish(&mut trace).await?),
            None => None,
        };
        drop(held);
        // A second publisher that took rows (the held one died and let them go) sent and
        // marked them after it.
        let expected = match &waiter {
            Some(w) if w.state == WaiterState::Done && w.rows.unwrap_or(0) > 0 => {
                crate::broker::publish(&expected, PublisherCrash::None).state
            }
            _ => expected,
        };
        let _reserved = self.reserve(Needs::ONE).await?;
        let (lock, _) =
            SandboxLock::enter(local, &self.inner.lock_pool, sandbox, false, []).await?;
        let stepped = Stepped {
            ended_at,
            index,
            idle_timeout,
            waiter,
        };
        self.finish(
            lock,
            sandbox,
            kind,
            None,
            before,
            trace,
            Some(outcome),
            Expected::one(Some(modelled), expected),
            // Reconciliation judges the tables an attempt left; these runs change them.
            Pending::Clear,
            |report| {
                report.after_commit = Some(after_commit);
                report.stepped = Some(stepped);
                report.prediction = prediction.judge(report);
            },
        )
        .await
    }

    #[allow(clippy::too_many_arguments)]
    async fn step_held(
        &self,
        mut conn: sqlx::PgConnection,
        relay: Option<super::wire_fault::Relay>,
        local: sandbox_lock::LocalGuard,
        before: crate::snapshot::Snapshot,
        stored_payload: Option<&str>,
        sandbox: &SchemaName,
        spec: &AttemptSpec,
        prediction: &crate::prediction::Prediction,
        commands: &mut mpsc::Receiver<Command>,
        out: &mpsc::Sender<Message>,
    ) -> Result<crate::report::Report, LabError> {
        let mut trace = Tracer::new();
        let mut held = Held::new(
            self,
            sandbox,
            Run::Ticket(spec),
            before.clone(),
            commands,
            out,
        );
        held.relay = relay.as_ref();
        held.stored_payload = stored_payload.map(str::to_owned);
        let place = Place {
            pool: self.pool(),
            sandbox,
        };
        let mut attempted =
            ticket_function::run_function(&mut conn, place, spec, &mut held, &mut trace).await?;
        let (ended, _) = held.ended();
        let ended_at = match ended {
            PausePoint::Ticket(point) => point,
            PausePoint::Publisher(_) | PausePoint::Consumer(_) => CrashPoint::None,
        };
        let Held {
            base,
            waiter: writer,
            xid,
            lost_reply,
            idle_timeout,
            base_has_writer,
            ..
        } = held;
        if attempted.xid.is_empty() {
            attempted.xid = xid;
        }
        // Ending the held session lets its lock go; the lock pool takes it again for the
        // report. This process's own lock stays held throughout, so no action here slips in;
        // another server process's action could, in the moment between (it would then be
        // judged on its own; this report shows the tables after both).
        self.settle_own_connection(conn, &attempted, relay, &mut trace)
            .await?;
        let _reserved = self.reserve(Needs::ONE).await?;
        let (lock, _) =
            SandboxLock::enter(local, &self.inner.lock_pool, sandbox, false, []).await?;

        let final_spec = AttemptSpec {
            crash: lost_reply.map_or(ended_at, |_| CrashPoint::CommitReplyLost),
            commit_fate: lost_reply.unwrap_or(spec.commit_fate),
            ..spec.clone()
        };
        let outcome = match attempted.stop {
            Stop::Returned(o) | Stop::Crash(o) => o,
            Stop::CommitUnanswered if spec.mistakes.has(Mistake::NewEventIdOnRetry) => {
                self.retry_with_fresh_id(place, &final_spec, &attempted.xid, &mut trace)
                    .await?
            }
            Stop::CommitUnanswered => OutcomeId::CommitUnknown,
        };
        let mut expected = model::predict_attempt(&base, &final_spec, stored_payload);
        let waiter = match writer {
            Some(task) => Some(task.finish(&mut trace).await?),
            None => None,
        };
        // A writer that was still queued when the run ended goes on now: the model says what
        // it finds.
        let mut waiter_as_modelled = true;
        let waiter_went_on = waiter
            .as_ref()
            .is_some_and(|w| !base_has_writer && w.state != WaiterState::Failed);
        if let Some(w) = waiter.as_ref().filter(|_| waiter_went_on) {
            let mut modelled = Expected { possible: vec![] };
            for p in &expected.possible {
                let (rows, state) = model::other_writer(&p.state);
                if Some(rows) == w.rows {
                    modelled.possible.push(crate::report::Possible {
                        outcome: p.outcome,
                        state,
                    });
                }
            }
            waiter_as_modelled = !modelled.possible.is_empty();
            if waiter_as_modelled {
                expected = modelled;
            }
        }
        let stepped = Stepped {
            ended_at: PausePoint::Ticket(final_spec.crash),
            index: 0,
            idle_timeout,
            waiter,
        };
        // Reconciliation judges from where this run really started (with a writer's change
        // that came first) and knows of a writer that went on after it.
        let pending = PendingAttempt {
            xid: attempted.xid,
            settings: final_spec.settings(),
            before: base.clone(),
            writer_after: waiter_went_on,
        };
        self.finish(
            lock,
            sandbox,
            ActionKind::Attempt,
            Some(final_spec.settings()),
            before,
            trace,
            Some(outcome),
            expected,
            Pending::Set(Box::new(pending)),
            |report| {
                if !waiter_as_modelled {
                    report.matches_model = Some(false);
                }
                report.stepped = Some(stepped);
                report.prediction = prediction.judge(report);
            },
        )
        .await
    }
}
