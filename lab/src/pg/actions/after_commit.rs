//! After COMMIT (lessons 8.3 and 8.4, previewed): the service restarts and its publisher runs
//! once, two publishers run at once, the History consumer runs. Each is judged against the
//! model and kept like every other action.

use crate::catalog::{ActionKind, ConsumerCrash, OutcomeId, PausePoint, PublisherCrash};
use crate::model;
use crate::prediction::Prediction;
use crate::report::{AfterCommitRun, Report};
use crate::snapshot::Snapshot;

use super::super::budget::Needs;
use super::super::consumer;
use super::super::error::LabError;
use super::super::names::SchemaName;
use super::super::pauses::Planned;
use super::super::pending::Pending;
use super::super::publisher;
use super::super::runner::{Lab, Locked};
use super::super::sandbox_lock::SandboxLock;
use super::super::trace::Tracer;

impl Lab {
    /// The service restarts; its publisher runs once, dying where `crash` says.
    pub async fn restart(
        &self,
        sandbox: &SchemaName,
        crash: PublisherCrash,
        prediction: &Prediction,
    ) -> Result<Report, LabError> {
        self.locked(sandbox, Needs::ONE, [], |locked| {
            self.restart_locked(locked, sandbox, crash, prediction)
        })
        .await
    }

    async fn restart_locked(
        &self,
        locked: Locked,
        sandbox: &SchemaName,
        crash_at: PublisherCrash,
        prediction: &Prediction,
    ) -> Result<Report, LabError> {
        let Locked { lock, before, .. } = locked;
        let expected = model::predict_restart(&before, crash_at);
        let _slot = self.crash_slot().await?;
        let conn = self.connect_own(None).await?;
        let limit = self.config().backend_exit_timeout;
        let mut trace = Tracer::new();
        let mut planned = Planned(PausePoint::Publisher(crash_at));
        let ran =
            publisher::run(conn, self.pool(), sandbox, &mut planned, limit, &mut trace).await?;
        let outcome = publisher_outcome(&ran);
        let run = AfterCommitRun::Publisher {
            crash: crash_at,
            sent: ran.sent,
        };
        self.finish_after_commit(
            lock,
            sandbox,
            ActionKind::Restart,
            before,
            trace,
            outcome,
            expected,
            run,
            prediction,
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
            &Prediction::none(),
        )
        .await
    }

    /// The History consumer runs once, with or without its inbox, dying where `crash` says.
    pub async fn consume(
        &self,
        sandbox: &SchemaName,
        inbox: bool,
        crash: ConsumerCrash,
        prediction: &Prediction,
    ) -> Result<Report, LabError> {
        self.locked(sandbox, Needs::ONE, [], |locked| {
            self.consume_locked(locked, sandbox, inbox, crash, prediction)
        })
        .await
    }

    async fn consume_locked(
        &self,
        locked: Locked,
        sandbox: &SchemaName,
        inbox: bool,
        crash_at: ConsumerCrash,
        prediction: &Prediction,
    ) -> Result<Report, LabError> {
        let Locked { lock, before, .. } = locked;
        let expected = model::predict_consume(&before, inbox, crash_at);
        let _slot = self.crash_slot().await?;
        let conn = self.connect_own(None).await?;
        let mut trace = Tracer::new();
        let limit = self.config().backend_exit_timeout;
        let mut planned = Planned(PausePoint::Consumer(crash_at));
        let consumed = consumer::run(
            conn,
            self.pool(),
            sandbox,
            inbox,
            &mut planned,
            limit,
            &mut trace,
        )
        .await?;
        let outcome = consumed_outcome(&before, &consumed, inbox);
        let run = consumed.into_run(inbox, crash_at);
        self.finish_after_commit(
            lock,
            sandbox,
            ActionKind::Consume,
            before,
            trace,
            outcome,
            expected,
            run,
            prediction,
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
        expected: crate::report::Expected,
        run: AfterCommitRun,
        prediction: &Prediction,
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
            |r| {
                r.after_commit = Some(run);
                r.prediction = prediction.judge(r);
            },
        )
        .await
    }
}

/// What a publisher run amounted to, from what it found and where it died.
pub(crate) fn publisher_outcome(ran: &publisher::Ran) -> OutcomeId {
    match ran.died {
        _ if !ran.found => OutcomeId::NothingToPublish,
        None => OutcomeId::Published,
        Some((point, _)) => point.outcome(),
    }
}

/// What a consumer run amounted to, from what it read and did: an event applied although
/// History already had it is a double application.
pub(crate) fn consumed_outcome(
    before: &Snapshot,
    consumed: &consumer::Consumed,
    inbox: bool,
) -> OutcomeId {
    let polled = &consumed.polled;
    let mut seen: Vec<&str> = before.history.iter().map(|h| h.event_id.as_str()).collect();
    let mut doubled = false;
    for id in &polled.applied {
        doubled |= seen.contains(&id.as_str());
        seen.push(id);
    }
    match consumed.died.and_then(|(point, _)| point.outcome()) {
        _ if polled.records == 0 => OutcomeId::NothingToConsume,
        Some(died) => died,
        None if doubled && !inbox => OutcomeId::DuplicateApplied,
        None if !polled.skipped.is_empty() => OutcomeId::DuplicateSkipped,
        None => OutcomeId::Consumed,
    }
}
