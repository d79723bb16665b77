//! The texts of catalogue values (crash points, fates, outcomes, failure rows, trace words).
//!
//! Keys are checked at compile time by leptos_i18n; each match is exhaustive, so a new
//! catalogue entry without its texts does not build. The page's language is fixed for the
//! page's life, so these return plain strings for the given locale.

use leptos_i18n::td_string;
use outbox_lab::catalog::{
    ActionKind, CommitFate, ConsumerCrash, CrashPoint, Difference, FailureRow, Mistake, Mode,
    OutcomeId, PublisherCrash, Setup,
};
use outbox_lab::sql_trace::{Actor, TxState};

use crate::i18n::Locale;

pub fn crash_label(l: Locale, c: CrashPoint) -> &'static str {
    match c {
        CrashPoint::None => td_string!(l, crash.none.label),
        CrashPoint::AfterBegin => td_string!(l, crash.after_begin.label),
        CrashPoint::AfterUpdate => td_string!(l, crash.after_update.label),
        CrashPoint::AfterInsert => td_string!(l, crash.after_insert.label),
        CrashPoint::AfterPublish => td_string!(l, crash.after_publish.label),
        CrashPoint::AfterCommit => td_string!(l, crash.after_commit.label),
        CrashPoint::CommitReplyLost => td_string!(l, crash.commit_reply_lost.label),
    }
}

pub fn crash_hint(l: Locale, c: CrashPoint) -> &'static str {
    match c {
        CrashPoint::None => td_string!(l, crash.none.hint),
        CrashPoint::AfterBegin => td_string!(l, crash.after_begin.hint),
        CrashPoint::AfterUpdate => td_string!(l, crash.after_update.hint),
        CrashPoint::AfterInsert => td_string!(l, crash.after_insert.hint),
        CrashPoint::AfterPublish => td_string!(l, crash.after_publish.hint),
        CrashPoint::AfterCommit => td_string!(l, crash.after_commit.hint),
        CrashPoint::CommitReplyLost => td_string!(l, crash.commit_reply_lost.hint),
    }
}

/// A publisher crash point: its mark on the after-COMMIT strip, and its radio's label.
pub fn publisher_crash_text(l: Locale, c: PublisherCrash) -> (&'static str, &'static str) {
    match c {
        PublisherCrash::None => ("", td_string!(l, after.crash_none)),
        PublisherCrash::BeforeSend => (
            td_string!(l, after.crash_before_send),
            td_string!(l, after.crash_before_send_long),
        ),
        PublisherCrash::AfterSend => (
            td_string!(l, after.crash_after_send),
            td_string!(l, after.crash_after_send_long),
        ),
        PublisherCrash::AfterMark => (
            td_string!(l, after.crash_after_mark),
            td_string!(l, after.crash_after_mark_long),
        ),
    }
}

/// A consumer crash point: its mark on the after-COMMIT strip, and its radio's label.
pub fn consumer_crash_text(l: Locale, c: ConsumerCrash) -> (&'static str, &'static str) {
    match c {
        ConsumerCrash::None => ("", td_string!(l, after.crash_none)),
        ConsumerCrash::BeforeCommit => (
            td_string!(l, after.crash_before_commit),
            td_string!(l, after.crash_before_commit_long),
        ),
        ConsumerCrash::AfterApply => (
            td_string!(l, after.crash_after_apply),
            td_string!(l, after.crash_after_apply_long),
        ),
    }
}

pub fn fate_label(l: Locale, f: CommitFate) -> &'static str {
    match f {
        CommitFate::Applied => td_string!(l, fate.applied.label),
        CommitFate::NotApplied => td_string!(l, fate.not_applied.label),
        CommitFate::Random => td_string!(l, fate.random.label),
    }
}

pub fn fate_hint(l: Locale, f: CommitFate) -> &'static str {
    match f {
        CommitFate::Applied => td_string!(l, fate.applied.hint),
        CommitFate::NotApplied => td_string!(l, fate.not_applied.hint),
        CommitFate::Random => td_string!(l, fate.random.hint),
    }
}

pub fn mode_label(l: Locale, m: Mode) -> &'static str {
    match m {
        Mode::Outbox => td_string!(l, mode.outbox.label),
        Mode::Naive => td_string!(l, mode.naive.label),
        Mode::NaivePublishFirst => td_string!(l, mode.naive_publish_first.label),
    }
}

pub fn mode_hint(l: Locale, m: Mode) -> &'static str {
    match m {
        Mode::Outbox => td_string!(l, mode.outbox.hint),
        Mode::Naive => td_string!(l, mode.naive.hint),
        Mode::NaivePublishFirst => td_string!(l, mode.naive_publish_first.hint),
    }
}

pub fn mistake_label(l: Locale, m: Mistake) -> &'static str {
    match m {
        Mistake::InsertOutsideTx => td_string!(l, mistake.insert_outside_tx.label),
        Mistake::UpdateOutsideTx => td_string!(l, mistake.update_outside_tx.label),
        Mistake::UnguardedUpdate => td_string!(l, mistake.unguarded_update.label),
        Mistake::NewEventIdOnRetry => td_string!(l, mistake.new_event_id_on_retry.label),
        Mistake::OnConflictDoNothing => td_string!(l, mistake.on_conflict_do_nothing.label),
    }
}

pub fn mistake_hint(l: Locale, m: Mistake) -> &'static str {
    match m {
        Mistake::InsertOutsideTx => td_string!(l, mistake.insert_outside_tx.hint),
        Mistake::UpdateOutsideTx => td_string!(l, mistake.update_outside_tx.hint),
        Mistake::UnguardedUpdate => td_string!(l, mistake.unguarded_update.hint),
        Mistake::NewEventIdOnRetry => td_string!(l, mistake.new_event_id_on_retry.hint),
        Mistake::OnConflictDoNothing => td_string!(l, mistake.on_conflict_do_nothing.hint),
    }
}

/// A wrong way's name: a mode, or its mistakes joined.
pub fn way_label(l: Locale, mode: Mode, mistakes: &[Mistake]) -> String {
    if mistakes.is_empty() {
        return mode_label(l, mode).to_owned();
    }
    mistakes
        .iter()
        .map(|&m| mistake_label(l, m))
        .collect::<Vec<_>>()
        .join(" + ")
}

pub fn difference(l: Locale, d: Difference) -> &'static str {
    match d {
        Difference::Same => td_string!(l, compare.difference.same),
        Difference::StatusWithoutEvent => td_string!(l, compare.difference.status_without_event),
        Difference::IntentWithoutStatus => {
            td_string!(l, compare.difference.intent_without_status)
        }
        Difference::PhantomEvent => td_string!(l, compare.difference.phantom_event),
        Difference::ExtraEvent => td_string!(l, compare.difference.extra_event),
        Difference::HiddenReplay => td_string!(l, compare.difference.hidden_replay),
        Difference::PublishedDirectly => td_string!(l, compare.difference.published_directly),
        Difference::Other => td_string!(l, compare.difference.other),
    }
}

pub fn setup(l: Locale, s: Setup) -> &'static str {
    match s {
        Setup::Fresh => td_string!(l, compare.setup.fresh),
        Setup::Resolved => td_string!(l, compare.setup.resolved),
        Setup::ResolvedThenReopened => td_string!(l, compare.setup.resolved_then_reopened),
    }
}

/// Title and explanation of an outcome.
pub fn outcome_text(l: Locale, o: OutcomeId) -> (&'static str, &'static str) {
    match o {
        OutcomeId::Committed => (
            td_string!(l, outcome.committed.title),
            td_string!(l, outcome.committed.body),
        ),
        OutcomeId::CrashedAfterBegin => (
            td_string!(l, outcome.crashed_after_begin.title),
            td_string!(l, outcome.crashed_after_begin.body),
        ),
        OutcomeId::CrashedAfterUpdate => (
            td_string!(l, outcome.crashed_after_update.title),
            td_string!(l, outcome.crashed_after_update.body),
        ),
        OutcomeId::CrashedBeforeCommit => (
            td_string!(l, outcome.crashed_before_commit.title),
            td_string!(l, outcome.crashed_before_commit.body),
        ),
        OutcomeId::CommittedThenCrashed => (
            td_string!(l, outcome.committed_then_crashed.title),
            td_string!(l, outcome.committed_then_crashed.body),
        ),
        OutcomeId::GuardRejected => (
            td_string!(l, outcome.guard_rejected.title),
            td_string!(l, outcome.guard_rejected.body),
        ),
        OutcomeId::InsertConflict => (
            td_string!(l, outcome.insert_conflict.title),
            td_string!(l, outcome.insert_conflict.body),
        ),
        OutcomeId::InvalidPayload => (
            td_string!(l, outcome.invalid_payload.title),
            td_string!(l, outcome.invalid_payload.body),
        ),
        OutcomeId::InsertFailed => (
            td_string!(l, outcome.insert_failed.title),
            td_string!(l, outcome.insert_failed.body),
        ),
        OutcomeId::CommitUnknown => (
            td_string!(l, outcome.commit_unknown.title),
            td_string!(l, outcome.commit_unknown.body),
        ),
        OutcomeId::ReconciledCommitted => (
            td_string!(l, outcome.reconciled_committed.title),
            td_string!(l, outcome.reconciled_committed.body),
        ),
        OutcomeId::ReconciledNotCommitted => (
            td_string!(l, outcome.reconciled_not_committed.title),
            td_string!(l, outcome.reconciled_not_committed.body),
        ),
        OutcomeId::NaivePublished => (
            td_string!(l, outcome.naive_published.title),
            td_string!(l, outcome.naive_published.body),
        ),
        OutcomeId::NaiveEventLost => (
            td_string!(l, outcome.naive_event_lost.title),
            td_string!(l, outcome.naive_event_lost.body),
        ),
        OutcomeId::NaivePhantomEvent => (
            td_string!(l, outcome.naive_phantom_event.title),
            td_string!(l, outcome.naive_phantom_event.body),
        ),
        OutcomeId::ChangeWithoutIntent => (
            td_string!(l, outcome.change_without_intent.title),
            td_string!(l, outcome.change_without_intent.body),
        ),
        OutcomeId::OrphanIntent => (
            td_string!(l, outcome.orphan_intent.title),
            td_string!(l, outcome.orphan_intent.body),
        ),
        OutcomeId::CommittedSilently => (
            td_string!(l, outcome.committed_silently.title),
            td_string!(l, outcome.committed_silently.body),
        ),
        OutcomeId::RetryRefused => (
            td_string!(l, outcome.retry_refused.title),
            td_string!(l, outcome.retry_refused.body),
        ),
        OutcomeId::RetryCommitted => (
            td_string!(l, outcome.retry_committed.title),
            td_string!(l, outcome.retry_committed.body),
        ),
        OutcomeId::RetryDuplicated => (
            td_string!(l, outcome.retry_duplicated.title),
            td_string!(l, outcome.retry_duplicated.body),
        ),
        OutcomeId::RaceOneWinner => (
            td_string!(l, outcome.race_one_winner.title),
            td_string!(l, outcome.race_one_winner.body),
        ),
        OutcomeId::RaceTwoWinners => (
            td_string!(l, outcome.race_two_winners.title),
            td_string!(l, outcome.race_two_winners.body),
        ),
        OutcomeId::RaceNoWinner => (
            td_string!(l, outcome.race_no_winner.title),
            td_string!(l, outcome.race_no_winner.body),
        ),
        OutcomeId::Published => (
            td_string!(l, outcome.published.title),
            td_string!(l, outcome.published.body),
        ),
        OutcomeId::NothingToPublish => (
            td_string!(l, outcome.nothing_to_publish.title),
            td_string!(l, outcome.nothing_to_publish.body),
        ),
        OutcomeId::PublisherCrashedBeforeSend => (
            td_string!(l, outcome.publisher_crashed_before_send.title),
            td_string!(l, outcome.publisher_crashed_before_send.body),
        ),
        OutcomeId::PublisherCrashedAfterSend => (
            td_string!(l, outcome.publisher_crashed_after_send.title),
            td_string!(l, outcome.publisher_crashed_after_send.body),
        ),
        OutcomeId::PublisherCrashedAfterMark => (
            td_string!(l, outcome.publisher_crashed_after_mark.title),
            td_string!(l, outcome.publisher_crashed_after_mark.body),
        ),
        OutcomeId::ConsumerCrashedBeforeCommit => (
            td_string!(l, outcome.consumer_crashed_before_commit.title),
            td_string!(l, outcome.consumer_crashed_before_commit.body),
        ),
        OutcomeId::PublishRaceSkipped => (
            td_string!(l, outcome.publish_race_skipped.title),
            td_string!(l, outcome.publish_race_skipped.body),
        ),
        OutcomeId::PublishRaceWaited => (
            td_string!(l, outcome.publish_race_waited.title),
            td_string!(l, outcome.publish_race_waited.body),
        ),
        OutcomeId::Consumed => (
            td_string!(l, outcome.consumed.title),
            td_string!(l, outcome.consumed.body),
        ),
        OutcomeId::NothingToConsume => (
            td_string!(l, outcome.nothing_to_consume.title),
            td_string!(l, outcome.nothing_to_consume.body),
        ),
        OutcomeId::DuplicateSkipped => (
            td_string!(l, outcome.duplicate_skipped.title),
            td_string!(l, outcome.duplicate_skipped.body),
        ),
        OutcomeId::DuplicateApplied => (
            td_string!(l, outcome.duplicate_applied.title),
            td_string!(l, outcome.duplicate_applied.body),
        ),
        OutcomeId::ConsumerCrashedAfterApply => (
            td_string!(l, outcome.consumer_crashed_after_apply.title),
            td_string!(l, outcome.consumer_crashed_after_apply.body),
        ),
    }
}

/// Title and explanation of an action that has no outcome id.
pub fn action_text(l: Locale, a: ActionKind) -> (&'static str, &'static str) {
    match a {
        ActionKind::Reset => (
            td_string!(l, outcome.reset.title),
            td_string!(l, outcome.reset.body),
        ),
        ActionKind::Reopen => (
            td_string!(l, outcome.reopen.title),
            td_string!(l, outcome.reopen.body),
        ),
        ActionKind::Snapshot
        | ActionKind::Attempt
        | ActionKind::Reconcile
        | ActionKind::Race
        | ActionKind::Restart
        | ActionKind::PublishRace
        | ActionKind::Consume => (
            td_string!(l, outcome.snapshot.title),
            td_string!(l, outcome.snapshot.body),
        ),
    }
}

/// The four cells of a failure-table row: point, tickets, outbox, Kafka/History.
pub fn failure_row(l: Locale, r: FailureRow) -> [&'static str; 4] {
    match r {
        FailureRow::CrashAfterUpdate => [
            td_string!(l, failures.crash_after_update.point),
            td_string!(l, failures.crash_after_update.tickets),
            td_string!(l, failures.crash_after_update.outbox),
            td_string!(l, failures.crash_after_update.kafka),
        ],
        FailureRow::InsertError => [
            td_string!(l, failures.insert_error.point),
            td_string!(l, failures.insert_error.tickets),
            td_string!(l, failures.insert_error.outbox),
            td_string!(l, failures.insert_error.kafka),
        ],
        FailureRow::CrashBeforeCommit => [
            td_string!(l, failures.crash_before_commit.point),
            td_string!(l, failures.crash_before_commit.tickets),
            td_string!(l, failures.crash_before_commit.outbox),
            td_string!(l, failures.crash_before_commit.kafka),
        ],
        FailureRow::CommittedBeforePublish => [
            td_string!(l, failures.committed_before_publish.point),
            td_string!(l, failures.committed_before_publish.tickets),
            td_string!(l, failures.committed_before_publish.outbox),
            td_string!(l, failures.committed_before_publish.kafka),
        ],
        FailureRow::GuardZeroRows => [
            td_string!(l, failures.guard_zero_rows.point),
            td_string!(l, failures.guard_zero_rows.tickets),
            td_string!(l, failures.guard_zero_rows.outbox),
            td_string!(l, failures.guard_zero_rows.kafka),
        ],
        FailureRow::CommitReplyLost => [
            td_string!(l, failures.commit_reply_lost.point),
            td_string!(l, failures.commit_reply_lost.tickets),
            td_string!(l, failures.commit_reply_lost.outbox),
            td_string!(l, failures.commit_reply_lost.kafka),
        ],
    }
}

pub fn actor(l: Locale, a: Actor) -> &'static str {
    match a {
        Actor::Service => td_string!(l, trace.actor.service),
        Actor::Network => td_string!(l, trace.actor.network),
        Actor::Postgres => td_string!(l, trace.actor.postgres),
        Actor::Support => td_string!(l, trace.actor.support),
        Actor::Playground => td_string!(l, trace.actor.playground),
        Actor::ServicePool => td_string!(l, trace.actor.service_pool),
        Actor::Broker => td_string!(l, trace.actor.broker),
        Actor::Consumer => td_string!(l, trace.actor.consumer),
        Actor::Publisher => td_string!(l, trace.actor.publisher),
        Actor::OtherWriter => td_string!(l, trace.actor.other_writer),
    }
}

pub fn tx_state(l: Locale, t: TxState) -> &'static str {
    match t {
        TxState::Idle => td_string!(l, trace.state.idle),
        TxState::Open => td_string!(l, trace.state.open),
        TxState::Failed => td_string!(l, trace.state.failed),
        TxState::Committed => td_string!(l, trace.state.committed),
        TxState::RolledBack => td_string!(l, trace.state.rolled_back),
        TxState::Abandoned => td_string!(l, trace.state.abandoned),
        TxState::Unknown => td_string!(l, trace.state.unknown),
    }
}

/// How an outcome reads at a glance; drives the banner's colour *and* its icon.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Committed,
    RolledBack,
    Refused,
    Unknown,
    /// The tables disagree with each other: the harm a wrong way does.
    Broken,
    Neutral,
}

impl Tone {
    pub fn of(outcome: Option<OutcomeId>) -> Tone {
        match outcome {
            None => Tone::Neutral,
            Some(o) => match o {
                OutcomeId::Committed
                | OutcomeId::CommittedThenCrashed
                | OutcomeId::ReconciledCommitted
                | OutcomeId::NaivePublished
                | OutcomeId::RetryCommitted
                | OutcomeId::RaceOneWinner
                | OutcomeId::Published
                | OutcomeId::PublishRaceSkipped
                | OutcomeId::PublishRaceWaited
                | OutcomeId::Consumed
                | OutcomeId::DuplicateSkipped => Tone::Committed,
                OutcomeId::NothingToPublish | OutcomeId::NothingToConsume => Tone::Neutral,
                OutcomeId::PublisherCrashedBeforeSend | OutcomeId::ConsumerCrashedBeforeCommit => {
                    Tone::RolledBack
                }
                OutcomeId::PublisherCrashedAfterSend
                | OutcomeId::PublisherCrashedAfterMark
                | OutcomeId::ConsumerCrashedAfterApply => Tone::Unknown,
                OutcomeId::CrashedAfterBegin
                | OutcomeId::CrashedAfterUpdate
                | OutcomeId::CrashedBeforeCommit
                | OutcomeId::ReconciledNotCommitted => Tone::RolledBack,
                OutcomeId::GuardRejected
                | OutcomeId::InsertConflict
                | OutcomeId::InvalidPayload
                | OutcomeId::InsertFailed
                | OutcomeId::RetryRefused
                | OutcomeId::RaceNoWinner => Tone::Refused,
                OutcomeId::CommitUnknown => Tone::Unknown,
                OutcomeId::NaiveEventLost
                | OutcomeId::NaivePhantomEvent
                | OutcomeId::ChangeWithoutIntent
                | OutcomeId::OrphanIntent
                | OutcomeId::CommittedSilently
                | OutcomeId::RetryDuplicated
                | OutcomeId::RaceTwoWinners
                | OutcomeId::DuplicateApplied => Tone::Broken,
            },
        }
    }

    pub fn attr(self) -> &'static str {
        match self {
            Tone::Committed => "ok",
            Tone::RolledBack => "rolled-back",
            Tone::Refused => "refused",
            Tone::Unknown => "unknown",
            Tone::Broken => "broken",
            Tone::Neutral => "neutral",
        }
    }

    /// A shape that carries the meaning without colour.
    pub fn icon(self) -> &'static str {
        match self {
            Tone::Committed => "✓",
            Tone::RolledBack => "↺",
            Tone::Refused => "✗",
            Tone::Unknown => "?",
            Tone::Broken => "⚠",
            Tone::Neutral => "•",
        }
    }

    /// What the local transaction's guarantee meant in this attempt.
    pub fn guarantee_here(self, l: Locale) -> &'static str {
        match self {
            Tone::Committed => td_string!(l, guarantee.here_committed),
            Tone::RolledBack => td_string!(l, guarantee.here_rolled_back),
            Tone::Refused => td_string!(l, guarantee.here_refused),
            Tone::Unknown => td_string!(l, guarantee.here_unknown),
            Tone::Broken => td_string!(l, guarantee.here_broken),
            Tone::Neutral => td_string!(l, guarantee.here_none),
        }
    }
}
