//! After COMMIT (lessons 8.3 and 8.4, previewed): the service restarts and its publisher runs
//! once, two publishers run at once, the History consumer runs. Each is judged against the
//! model and kept like every other action.

use sqlx::Connection;

use crate::catalog::{ActionKind, ConsumerCrash, OutcomeId, PublisherCrash};
use crate::model;
use crate::outcome::{Actor, AfterCommitRun, Answer, Report, Sent, Snapshot, TxState};

use super::super::broker;
use super::super::budget::Needs;
use super::super::crash;
use super::super::error::LabError;
use super::super::names::SchemaName;
use super::super::publisher;
use super::super::runner::{Lab, Locked, Pending};
use super::super::sandbox_lock::SandboxLock;
use super::super::trace::Tracer;

impl Lab {
    /// The service restarts; its publisher runs once, dying where `crash` says.
    pub async fn restart(
        &self,
        sandbox: &SchemaName,
        crash: PublisherCrash,
    ) -> Result<Report, LabError> {
        self.locked(sandbox, Needs::ONE, [], |locked| {
            self.restart_locked(locked, sandbox, crash)
        })
        .await
    }

    async fn restart_locked(
        &self,
        locked: Locked,
        sandbox: &SchemaName,
        crash_at: PublisherCrash,
    ) -> Result<Report, LabError> {
        let Locked { lock, before, .. } = locked;
        let expected = model::predict_restart(&before, crash_at);
        let _slot = self.crash_slot().await?;
        let conn = self.connect_own(None).await?;
        let limit = self.config().backend_exit_timeout;
        let ran = publisher::run(conn, self.pool(), sandbox, crash_at, limit).await?;
        let outcome = match crash_at {
            _ if !ran.found => OutcomeId::NothingToPublish,
            PublisherCrash::None => OutcomeId::Published,
            PublisherCrash::BeforeSend => OutcomeId::PublisherCrashedBeforeSend,
            PublisherCrash::AfterSend => OutcomeId::PublisherCrashedAfterSend,
        };
        let run = AfterCommitRun::Publisher {
            crash: crash_at,
            sent: ran.sent,
        };
        self.finish_after_commit(
            lock,
            sandbox,
            ActionKind::Restart,
            before,
            ran.trace,
            outcome,
            expected,
            run,
        )
        .await
    }

    /// Two publishers at once, with `FOR UPDATE SKIP LOCKED` or a plain `FOR UPDATE`.
    pub async fn publish_race(
        &self,
        sandbox: &SchemaName,
        skip_locked: bool,
    ) -> Result<Report, LabError> {
        self.locked(sandbox, Needs::PUBLISH_RACE, [], |locked| {
            self.publish_race_locked(locked, sandbox, skip_locked)
        })
        .await
    }

    async fn publish_race_locked(
        &self,
        locked: Locked,
        sandbox: &SchemaName,
        skip_locked: bool,
    ) -> Result<Report, LabError> {
        let Locked { lock, before, .. } = locked;
        let expected = model::predict_publish_race(&before, skip_locked);
        let limit = self.config().backend_exit_timeout;
        let raced = publisher::race(self.pool(), sandbox, skip_locked, limit).await?;
        let outcome = match (raced.a_sent.is_empty(), skip_locked) {
            (true, _) => OutcomeId::NothingToPublish,
            (false, true) => OutcomeId::PublishRaceSkipped,
            (false, false) => OutcomeId::PublishRaceWaited,
        };
        let run = AfterCommitRun::PublishRace {
            skip_locked,
            a_sent: raced.a_sent,
            b_sent: raced.b_sent,
            lock_wait: raced.lock_wait,
        };
        self.finish_after_commit(
            lock,
            sandbox,
            ActionKind::PublishRace,
            before,
            raced.trace,
            outcome,
            expected,
            run,
        )
        .await
    }

    /// The History consumer runs once, with or without its inbox, dying where `crash` says.
    pub async fn consume(
        &self,
        sandbox: &SchemaName,
        inbox: bool,
        crash: ConsumerCrash,
    ) -> Result<Report, LabError> {
        self.locked(sandbox, Needs::ONE, [], |locked| {
            self.consume_locked(locked, sandbox, inbox, crash)
        })
        .await
    }

    async fn consume_locked(
        &self,
        locked: Locked,
        sandbox: &SchemaName,
        inbox: bool,
        crash_at: ConsumerCrash,
    ) -> Result<Report, LabError> {
        let Locked { lock, before, .. } = locked;
        let expected = model::predict_consume(&before, inbox, crash_at);
        let _slot = self.crash_slot().await?;
        let mut conn = self.connect_own(None).await?;
        let mut trace = Tracer::new();
        let polled = broker::consume(&mut conn, sandbox, inbox, &mut trace).await?;
        match crash_at {
            ConsumerCrash::None => {
                conn.close().await.map_err(LabError::from_sqlx)?;
                broker::commit_offset(self.pool(), sandbox, polled.next_offset, &mut trace).await?;
            }
            ConsumerCrash::AfterApply => {
                // The projection's transactions are committed; the offset commit is never sent.
                let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
                    .fetch_one(&mut conn)
                    .await
                    .map_err(LabError::from_sqlx)?;
                crash::kill(conn).await;
                trace.push(
                    Actor::Consumer,
                    Sent::ProcessCrashed,
                    Answer::Nothing,
                    TxState::Idle,
                );
                crash::wait_until_gone(self.pool(), pid, self.config().backend_exit_timeout)
                    .await?;
                trace.push(
                    Actor::Postgres,
                    Sent::BackendGone { pid },
                    Answer::Nothing,
                    TxState::Idle,
                );
            }
        }
        let outcome = consumed_outcome(&before, &polled, inbox, crash_at);
        let run = AfterCommitRun::Consumer {
            inbox,
            crash: crash_at,
            applied: polled.applied,
            skipped: polled.skipped,
        };
        self.finish_after_commit(
            lock,
            sandbox,
            ActionKind::Consume,
            before,
            trace,
            outcome,
            expected,
            run,
        )
        .await
    }

    #[allow(clippy::too_many_arguments)]
    async fn finish_after_commit(
        &self,
        lock: SandboxLock,
        sandbox: &SchemaName,
        action: ActionKind,
        before: Snapshot,
        trace: Tracer,
        outcome: OutcomeId,
        expected: crate::outcome::Expected,
        run: AfterCommitRun,
    ) -> Result<Report, LabError> {
        self.finish(
            lock,
            sandbox,
            action,
            None,
            before,
            trace,
            Some(outcome),
            expected,
            // Reconciliation judges the tables an attempt left; these runs change them.
            Pending::Clear,
            |r| r.after_commit = Some(run),
        )
        .await
    }
}

/// What a consumer run amounted to, from what it read and did: an event applied although
/// History already had it is a double application.
fn consumed_outcome(
    before: &Snapshot,
    polled: &broker::Polled,
    inbox: bool,
    crash_at: ConsumerCrash,
) -> OutcomeId {
    let mut seen: Vec<&str> = before.history.iter().map(|h| h.event_id.as_str()).collect();
    let mut doubled = false;
    for id in &polled.applied {
        doubled |= seen.contains(&id.as_str());
        seen.push(id);
    }
    match () {
        _ if polled.records == 0 => OutcomeId::NothingToConsume,
        _ if crash_at == ConsumerCrash::AfterApply => OutcomeId::ConsumerCrashedAfterApply,
        _ if doubled && !inbox => OutcomeId::DuplicateApplied,
        _ if !polled.skipped.is_empty() => OutcomeId::DuplicateSkipped,
        _ => OutcomeId::Consumed,
    }
}
