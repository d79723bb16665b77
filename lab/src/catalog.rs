//! The catalogue: every crash point, commit fate, outcome and failure-table row, declared once.
//!
//! The runner executes these, the reference model predicts them, the UI lists and explains
//! them (texts live in the locale files under the same ids) and the tests enumerate them.
//! Adding a crash point is one variant here plus its texts.

use serde::{Deserialize, Serialize};

/// Declares a fieldless enum whose variants have stable string ids (used in URLs, forms,
/// JSON and locale keys), with `ALL` in catalogue order and a strict parser.
macro_rules! catalogue_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $id:literal ),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $( $(#[$vmeta])* #[serde(rename = $id)] $variant ),+
        }

        impl $name {
            /// Every variant, in the order the UI lists them.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The variants' Rust names, in `ALL`'s order: the app's build script writes its
            /// text lookups from them, so a new variant needs no hand-written match arm.
            pub const VARIANTS: &'static [&'static str] = &[$(stringify!($variant)),+];

            /// The stable id used in URLs, forms, JSON and locale keys.
            pub const fn id(self) -> &'static str {
                match self { $($name::$variant => $id),+ }
            }

            /// Parses a stable id; anything else is `None`.
            pub fn parse(id: &str) -> Option<Self> {
                match id { $($id => Some($name::$variant),)+ _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.id())
            }
        }
    };
}

catalogue_enum! {
    /// Where the service process stops during the lesson's transaction.
    pub enum CrashPoint {
        /// No crash: the function runs to the end.
        None = "none",
        /// Right after BEGIN, before any statement has written.
        AfterBegin = "after_begin",
        /// After the guarded UPDATE succeeded, before the INSERT.
        AfterUpdate = "after_update",
        /// After the INSERT succeeded, before COMMIT was sent.
        AfterInsert = "after_insert",
        /// Trace A, publish first: the event is in Kafka, COMMIT was not sent yet.
        AfterPublish = "after_publish",
        /// COMMIT returned OK; the process dies before any publish.
        AfterCommit = "after_commit",
        /// COMMIT was sent but its reply never reached the process.
        CommitReplyLost = "commit_reply_lost",
    }
}

catalogue_enum! {
    /// How the service writes the status change and its event.
    pub enum Mode {
        /// Lesson 8.2: the status and the outbox row in one transaction.
        Outbox = "outbox",
        /// Trace A of lesson 8.1: COMMIT the status, then publish to Kafka.
        Naive = "naive",
        /// Trace A the other way round: publish to Kafka, then COMMIT the status.
        NaivePublishFirst = "naive_publish_first",
    }
}

catalogue_enum! {
    /// A classic mistake in writing the outbox, each a real code path (outbox mode only).
    pub enum Mistake {
        /// The INSERT goes through the pool, not through the transaction's handle.
        InsertOutsideTx = "insert_outside_tx",
        /// The UPDATE goes through the pool, not through the transaction's handle.
        UpdateOutsideTx = "update_outside_tx",
        /// `WHERE id = $1` without `AND status = 'open'`.
        UnguardedUpdate = "unguarded_update",
        /// After an unknown COMMIT the client assumes failure and retries with a fresh event_id.
        NewEventIdOnRetry = "new_event_id_on_retry",
        /// `INSERT … ON CONFLICT (event_id) DO NOTHING`, and nobody checks the row count.
        OnConflictDoNothing = "on_conflict_do_nothing",
    }
}

catalogue_enum! {
    /// A step of the service's function, as the timeline draws it and the trace groups it.
    pub enum Step {
        /// BEGIN, and the playground's plumbing that points the lesson's SQL at the sandbox.
        Begin = "begin",
        /// The (guarded) UPDATE of ticket-42.
        Update = "update",
        /// The INSERT of the outbox row.
        Insert = "insert",
        /// COMMIT.
        Commit = "commit",
        /// Trace A: the event sent straight to Kafka (and applied by History).
        Publish = "publish",
        /// Not drawn: the process has died; what PostgreSQL does about it by itself.
        Crash = "crash",
        /// Not drawn: the client's retry with a fresh event_id (a mistake).
        Retry = "retry",
        /// The publisher locks the unpublished rows (`FOR UPDATE SKIP LOCKED`).
        Claim = "claim",
        /// The publisher hands one event to the broker.
        Send = "send",
        /// The publisher marks the sent row (`published_at = now()`).
        Mark = "mark",
        /// The consumer reads the topic from its committed offset.
        Poll = "poll",
        /// The consumer applies one event (History line, inbox row) in a transaction.
        Apply = "apply",
        /// The consumer commits its offset.
        Offset = "offset",
    }
}

catalogue_enum! {
    /// What a run is: the ticket function of 8.2, or what runs after its COMMIT — the
    /// publisher of 8.3 or the History consumer of 8.4, each previewed.
    pub enum Scenario {
        Ticket = "ticket",
        Publisher = "publisher",
        Consumer = "consumer",
    }
}

catalogue_enum! {
    /// Where an event goes after the ticket function's COMMIT, in order: the after-COMMIT
    /// strip's places.
    pub enum Stage {
        /// The service starts again: the outbox holds all that is left of its intentions.
        Restart = "restart",
        /// The publisher locks unpublished rows, sends them and marks them.
        Publisher = "publisher",
        /// The topic, tickets.status.v1.
        Kafka = "kafka",
        /// The History consumer applies each event and commits its offset.
        Consumer = "consumer",
        /// The History projection.
        History = "history",
    }
}

impl Stage {
    /// The scenario whose code runs at this stage, and so can die there.
    pub const fn runs(self) -> Option<Scenario> {
        match self {
            Stage::Publisher => Some(Scenario::Publisher),
            Stage::Consumer => Some(Scenario::Consumer),
            Stage::Restart | Stage::Kafka | Stage::History => None,
        }
    }
}

impl Scenario {
    /// The stages a run of this scenario passes through (the ticket function's run ends at
    /// its COMMIT, before any of them).
    pub const fn stages(self) -> &'static [Stage] {
        match self {
            Scenario::Ticket => &[],
            Scenario::Publisher => &[Stage::Restart, Stage::Publisher, Stage::Kafka],
            Scenario::Consumer => &[Stage::Kafka, Stage::Consumer, Stage::History],
        }
    }

    /// The places this scenario's code may die, in the order it reaches them ("no crash",
    /// where a run ends, is not one).
    pub fn crash_points(self) -> Vec<PausePoint> {
        let end = PausePoint::end_of(self);
        let all: Vec<PausePoint> = match self {
            Scenario::Ticket => CrashPoint::ALL
                .iter()
                .map(|&c| PausePoint::Ticket(c))
                .collect(),
            Scenario::Publisher => PublisherCrash::ALL
                .iter()
                .map(|&c| PausePoint::Publisher(c))
                .collect(),
            Scenario::Consumer => ConsumerCrash::ALL
                .iter()
                .map(|&c| PausePoint::Consumer(c))
                .collect(),
        };
        all.into_iter().filter(|&p| p != end).collect()
    }
}

/// A pause of a scenario: one of its crash points, where a one-shot run may die and a stepped
/// run waits for the learner. In JSON: `"scenario": "publisher", "at": "after_send"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "scenario", content = "at", rename_all = "snake_case")]
pub enum PausePoint {
    Ticket(CrashPoint),
    Publisher(PublisherCrash),
    Consumer(ConsumerCrash),
}

impl PausePoint {
    pub const fn scenario(self) -> Scenario {
        match self {
            PausePoint::Ticket(_) => Scenario::Ticket,
            PausePoint::Publisher(_) => Scenario::Publisher,
            PausePoint::Consumer(_) => Scenario::Consumer,
        }
    }

    /// The crash point's id within its scenario.
    pub const fn id(self) -> &'static str {
        match self {
            PausePoint::Ticket(c) => c.id(),
            PausePoint::Publisher(c) => c.id(),
            PausePoint::Consumer(c) => c.id(),
        }
    }

    /// "No crash": where a run that was never stopped ends.
    pub const fn end_of(scenario: Scenario) -> PausePoint {
        match scenario {
            Scenario::Ticket => PausePoint::Ticket(CrashPoint::None),
            Scenario::Publisher => PausePoint::Publisher(PublisherCrash::None),
            Scenario::Consumer => PausePoint::Consumer(ConsumerCrash::None),
        }
    }
}

/// A place on a mode's timeline: a step of the function, or the gap after a step where the
/// process may die.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    Step(Step),
    Crash(CrashPoint),
}

catalogue_enum! {
    /// What the network does to a COMMIT whose reply is lost (`commit_reply_lost` only).
    pub enum CommitFate {
        /// COMMIT reaches PostgreSQL and is applied; only the reply is lost.
        Applied = "applied",
        /// COMMIT never reaches PostgreSQL; the open transaction is rolled back.
        NotApplied = "not_applied",
        /// The server draws one of the two; the learner finds out by reconciling.
        Random = "random",
    }
}

catalogue_enum! {
    /// A stable id for what an action did: one per failure-table row and the lesson's notes.
    pub enum OutcomeId {
        /// COMMIT returned OK and the process lives on (no publisher runs in 8.2).
        Committed = "committed",
        /// The process died right after BEGIN: nothing was written, nothing stays.
        CrashedAfterBegin = "crashed_after_begin",
        /// The process died after the UPDATE; PostgreSQL rolled back.
        CrashedAfterUpdate = "crashed_after_update",
        /// The process died after the INSERT, before COMMIT; PostgreSQL rolled back.
        CrashedBeforeCommit = "crashed_before_commit",
        /// COMMIT returned OK, then the process died before any publish.
        CommittedThenCrashed = "committed_then_crashed",
        /// The guarded UPDATE changed 0 rows: not open (or missing), so no event.
        GuardRejected = "guard_rejected",
        /// The INSERT hit the outbox primary key (23505); the transaction rolled back.
        InsertConflict = "insert_conflict",
        /// PostgreSQL refused the payload as jsonb (a data exception); rolled back.
        InvalidPayload = "invalid_payload",
        /// The INSERT failed for another reason; rolled back.
        InsertFailed = "insert_failed",
        /// COMMIT was sent, no reply came: the client cannot know what happened.
        CommitUnknown = "commit_unknown",
        /// Reconciliation found the transaction committed.
        ReconciledCommitted = "reconciled_committed",
        /// Reconciliation found the transaction not committed.
        ReconciledNotCommitted = "reconciled_not_committed",
        /// Trace A: the status committed, the event reached Kafka and History.
        NaivePublished = "naive_published",
        /// Trace A: the status committed, the process died before publishing: the event is
        /// lost and nothing durable says it is owed.
        NaiveEventLost = "naive_event_lost",
        /// Trace A, publish first: the event is in Kafka (and History), the status never
        /// committed.
        NaivePhantomEvent = "naive_phantom_event",
        /// The UPDATE committed on its own (outside the transaction); the event was not written.
        ChangeWithoutIntent = "change_without_intent",
        /// The outbox row committed on its own (outside the transaction); the status did not.
        OrphanIntent = "orphan_intent",
        /// COMMIT returned OK, but `ON CONFLICT DO NOTHING` wrote no outbox row.
        CommittedSilently = "committed_silently",
        /// The retry with a fresh event_id was refused by the guard: the first COMMIT had
        /// applied.
        RetryRefused = "retry_refused",
        /// The retry with a fresh event_id committed; the first COMMIT had not applied.
        RetryCommitted = "retry_committed",
        /// The retry with a fresh event_id committed although the first COMMIT had applied:
        /// two events for one transition.
        RetryDuplicated = "retry_duplicated",
        /// Race: exactly one of the two attempts committed.
        RaceOneWinner = "race_one_winner",
        /// Race: both attempts committed: two events.
        RaceTwoWinners = "race_two_winners",
        /// Race: neither attempt committed.
        RaceNoWinner = "race_no_winner",
        /// Publisher (8.3): every unpublished row was sent and marked in one COMMIT.
        Published = "published",
        /// Publisher: no row had `published_at IS NULL`; nothing was sent.
        NothingToPublish = "nothing_to_publish",
        /// Publisher died holding the rows' locks, before sending: nothing sent, rows wait.
        PublisherCrashedBeforeSend = "publisher_crashed_before_send",
        /// Publisher died after the broker took the event, before the mark committed: the
        /// event is in Kafka and the row still says NULL, so the next run sends it again.
        PublisherCrashedAfterSend = "publisher_crashed_after_send",
        /// Publisher died after marking a row, before COMMIT: the mark rolled back with its
        /// transaction, the event is in Kafka, and the next run sends it again.
        PublisherCrashedAfterMark = "publisher_crashed_after_mark",
        /// Two publishers with SKIP LOCKED: each row taken by one of them, nobody waited.
        PublishRaceSkipped = "publish_race_skipped",
        /// Two publishers with a plain FOR UPDATE: the second waited, then found the rows marked.
        PublishRaceWaited = "publish_race_waited",
        /// Consumer (8.4): new events applied, offset committed.
        Consumed = "consumed",
        /// Consumer: nothing past the committed offset.
        NothingToConsume = "nothing_to_consume",
        /// Consumer with its inbox: an event it had already applied came again and was skipped.
        DuplicateSkipped = "duplicate_skipped",
        /// Consumer without an inbox: an event it had already applied was applied again.
        DuplicateApplied = "duplicate_applied",
        /// Consumer died after applying, before committing its offset: the events come back.
        ConsumerCrashedAfterApply = "consumer_crashed_after_apply",
        /// Consumer died inside an event's transaction: PostgreSQL rolled back its History line
        /// and inbox row; the offset still points at the event, so it comes again.
        ConsumerCrashedBeforeCommit = "consumer_crashed_before_commit",
    }
}

catalogue_enum! {
    /// Where the publisher (lesson 8.3's preview) dies during its run.
    pub enum PublisherCrash {
        /// It runs to its COMMIT.
        None = "none",
        /// After locking the rows, before sending anything.
        BeforeSend = "before_send",
        /// After the broker accepted an event, before its row is marked.
        AfterSend = "after_send",
        /// After a row is marked, before COMMIT: the mark is the transaction's, and dies with it.
        AfterMark = "after_mark",
    }
}

catalogue_enum! {
    /// Where the History consumer (lesson 8.4's preview) dies during its run.
    pub enum ConsumerCrash {
        /// It applies and commits its offset.
        None = "none",
        /// Inside an event's transaction: History's line and the inbox row written, not
        /// committed.
        BeforeCommit = "before_commit",
        /// After the projection's transactions committed, before the offset was committed.
        AfterApply = "after_apply",
    }
}

catalogue_enum! {
    /// The publisher's own failure table: where it dies, and what that leaves.
    pub enum PublisherRow {
        /// Dies after locking, before sending: nothing lost, nothing doubled.
        CrashBeforeSend = "crash_before_send",
        /// Dies after the send, before the mark: the event is sent again (a duplicate).
        CrashAfterSend = "crash_after_send",
        /// Dies after the mark committed (or does not die): sent once, marked.
        CrashAfterMark = "crash_after_mark",
    }
}

catalogue_enum! {
    /// The guarantee ladder: what each part of the pattern adds, from 8.2 to 8.4.
    pub enum Rung {
        /// 8.2: the status change and the outbox row committed together.
        IntentStored = "intent_stored",
        /// 8.3: the publisher delivered every stored event at least once.
        DeliveredAtLeastOnce = "delivered_at_least_once",
        /// 8.4: the consumer applied every delivered event exactly once.
        AppliedOnce = "applied_once",
    }
}

catalogue_enum! {
    /// The rows of the lesson's failure table, plus the two cases its notes discuss.
    pub enum FailureRow {
        /// Process dies after UPDATE, before INSERT or COMMIT.
        CrashAfterUpdate = "crash_after_update",
        /// INSERT returns an error, Rollback is called.
        InsertError = "insert_error",
        /// UPDATE and INSERT succeed, process dies before COMMIT.
        CrashBeforeCommit = "crash_before_commit",
        /// COMMIT returned OK, then the process dies before any Publish.
        CommittedBeforePublish = "committed_before_publish",
        /// The guard refuses: the ticket is not open.
        GuardZeroRows = "guard_zero_rows",
        /// The reply to COMMIT is lost: outcome unknown until reconciled.
        CommitReplyLost = "commit_reply_lost",
    }
}

catalogue_enum! {
    /// What a report answers.
    pub enum ActionKind {
        Snapshot = "snapshot",
        Reset = "reset",
        Reopen = "reopen",
        Attempt = "attempt",
        Reconcile = "reconcile",
        Race = "race",
        Restart = "restart",
        PublishRace = "publish_race",
        Consume = "consume",
    }
}

catalogue_enum! {
    /// The state a comparison starts from, chosen by the mistake it shows.
    pub enum Setup {
        /// The lesson's initial state.
        Fresh = "fresh",
        /// An earlier request already resolved ticket-42 with its own event.
        Resolved = "resolved",
        /// ticket-42 was resolved with this event_id, then support reopened it.
        ResolvedThenReopened = "resolved_then_reopened",
    }
}

catalogue_enum! {
    /// What differs between the outbox way and the wrong way, in one sentence.
    pub enum Difference {
        /// Both left the same tables.
        Same = "same",
        /// The wrong way: status changed, no outbox row and nothing in Kafka.
        StatusWithoutEvent = "status_without_event",
        /// The wrong way: an outbox row for a change that did not happen.
        IntentWithoutStatus = "intent_without_status",
        /// The wrong way: Kafka (and History) hold an event the ticket DB never committed.
        PhantomEvent = "phantom_event",
        /// The wrong way wrote more events than the outbox way.
        ExtraEvent = "extra_event",
        /// The wrong way changed the status again without a new event.
        HiddenReplay = "hidden_replay",
        /// The wrong way published directly; the outbox way left a row for the publisher.
        PublishedDirectly = "published_directly",
        /// Something else differs: see the tables.
        Other = "other",
    }
}

impl CrashPoint {
    /// Whether the connection has to go through the fault-injecting relay.
    pub const fn needs_relay(self) -> bool {
        matches!(self, CrashPoint::CommitReplyLost)
    }

    /// Whether the attempt's process dies (so its connection must be killed, not reused).
    pub const fn kills_process(self) -> bool {
        !matches!(self, CrashPoint::None)
    }
}

impl OutcomeId {
    /// The failure-table row this outcome lights up; none for the wrong ways, which the
    /// lesson's table does not describe.
    pub const fn failure_row(self) -> Option<FailureRow> {
        Some(match self {
            OutcomeId::CrashedAfterUpdate => FailureRow::CrashAfterUpdate,
            OutcomeId::InsertConflict | OutcomeId::InvalidPayload | OutcomeId::InsertFailed => {
                FailureRow::InsertError
            }
            OutcomeId::CrashedBeforeCommit => FailureRow::CrashBeforeCommit,
            // Without a publisher (8.3) a plain commit leaves the same tables as the lesson's
            // fourth row: the row waits, nothing is sent.
            OutcomeId::Committed | OutcomeId::CommittedThenCrashed => {
                FailureRow::CommittedBeforePublish
            }
            OutcomeId::GuardRejected => FailureRow::GuardZeroRows,
            OutcomeId::CommitUnknown
            | OutcomeId::ReconciledCommitted
            | OutcomeId::ReconciledNotCommitted => FailureRow::CommitReplyLost,
            _ => return None,
        })
    }

    /// True when the (first) ticket transaction is known to have committed.
    pub const fn committed(self) -> Option<bool> {
        match self {
            OutcomeId::Committed
            | OutcomeId::CommittedThenCrashed
            | OutcomeId::ReconciledCommitted
            | OutcomeId::NaivePublished
            | OutcomeId::NaiveEventLost
            | OutcomeId::CommittedSilently
            // The guard refused the retry only because the first COMMIT had applied.
            | OutcomeId::RetryRefused
            | OutcomeId::RetryDuplicated => Some(true),
            OutcomeId::CommitUnknown
            | OutcomeId::RaceOneWinner
            | OutcomeId::RaceTwoWinners
            | OutcomeId::RaceNoWinner => None,
            // After COMMIT: the publisher and the consumer run no ticket transaction.
            _ if self.after_commit() => None,
            _ => Some(false),
        }
    }
}

impl OutcomeId {
    /// True for what the publisher or the consumer did (after COMMIT, 8.3 and 8.4).
    pub const fn after_commit(self) -> bool {
        matches!(
            self,
            OutcomeId::Published
                | OutcomeId::NothingToPublish
                | OutcomeId::PublisherCrashedBeforeSend
                | OutcomeId::PublisherCrashedAfterSend
                | OutcomeId::PublisherCrashedAfterMark
                | OutcomeId::PublishRaceSkipped
                | OutcomeId::PublishRaceWaited
                | OutcomeId::Consumed
                | OutcomeId::NothingToConsume
                | OutcomeId::DuplicateSkipped
                | OutcomeId::DuplicateApplied
                | OutcomeId::ConsumerCrashedAfterApply
                | OutcomeId::ConsumerCrashedBeforeCommit
        )
    }

    /// The publisher's failure-table row this outcome lights up.
    pub const fn publisher_row(self) -> Option<PublisherRow> {
        Some(match self {
            OutcomeId::PublisherCrashedBeforeSend => PublisherRow::CrashBeforeSend,
            // A mark that never committed is no mark: the event goes out again.
            OutcomeId::PublisherCrashedAfterSend | OutcomeId::PublisherCrashedAfterMark => {
                PublisherRow::CrashAfterSend
            }
            OutcomeId::Published | OutcomeId::PublishRaceSkipped | OutcomeId::PublishRaceWaited => {
                PublisherRow::CrashAfterMark
            }
            _ => return None,
        })
    }
}

catalogue_enum! {
    /// How an outcome reads at a glance: what the learner's banner says first.
    pub enum Reading {
        /// The change is durable and everything that depends on it agrees.
        Committed = "committed",
        /// Nothing of it is left: the transaction rolled back.
        RolledBack = "rolled_back",
        /// PostgreSQL or the guard refused it.
        Refused = "refused",
        /// Nobody knows yet what happened (a lost reply, a send without its mark).
        Unknown = "unknown",
        /// The tables disagree with each other: the harm a wrong way does.
        Broken = "broken",
        /// Nothing ran.
        Neutral = "neutral",
    }
}

impl OutcomeId {
    /// How this outcome reads at a glance.
    pub const fn reading(self) -> Reading {
        match self {
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
            | OutcomeId::DuplicateSkipped => Reading::Committed,
            OutcomeId::NothingToPublish | OutcomeId::NothingToConsume => Reading::Neutral,
            OutcomeId::PublisherCrashedBeforeSend | OutcomeId::ConsumerCrashedBeforeCommit => {
                Reading::RolledBack
            }
            OutcomeId::PublisherCrashedAfterSend
            | OutcomeId::PublisherCrashedAfterMark
            | OutcomeId::ConsumerCrashedAfterApply => Reading::Unknown,
            OutcomeId::CrashedAfterBegin
            | OutcomeId::CrashedAfterUpdate
            | OutcomeId::CrashedBeforeCommit
            | OutcomeId::ReconciledNotCommitted => Reading::RolledBack,
            OutcomeId::GuardRejected
            | OutcomeId::InsertConflict
            | OutcomeId::InvalidPayload
            | OutcomeId::InsertFailed
            | OutcomeId::RetryRefused
            | OutcomeId::RaceNoWinner => Reading::Refused,
            OutcomeId::CommitUnknown => Reading::Unknown,
            OutcomeId::NaiveEventLost
            | OutcomeId::NaivePhantomEvent
            | OutcomeId::ChangeWithoutIntent
            | OutcomeId::OrphanIntent
            | OutcomeId::CommittedSilently
            | OutcomeId::RetryDuplicated
            | OutcomeId::RaceTwoWinners
            | OutcomeId::DuplicateApplied => Reading::Broken,
        }
    }
}

impl PublisherCrash {
    /// What a publisher run that found rows amounts to when it dies here.
    pub const fn outcome(self) -> OutcomeId {
        match self {
            PublisherCrash::None => OutcomeId::Published,
            PublisherCrash::BeforeSend => OutcomeId::PublisherCrashedBeforeSend,
            PublisherCrash::AfterSend => OutcomeId::PublisherCrashedAfterSend,
            PublisherCrash::AfterMark => OutcomeId::PublisherCrashedAfterMark,
        }
    }
}

impl ConsumerCrash {
    /// What a consumer run that read records amounts to when it dies here (`None`: whatever
    /// it applied or skipped says).
    pub const fn outcome(self) -> Option<OutcomeId> {
        match self {
            ConsumerCrash::None => None,
            ConsumerCrash::BeforeCommit => Some(OutcomeId::ConsumerCrashedBeforeCommit),
            ConsumerCrash::AfterApply => Some(OutcomeId::ConsumerCrashedAfterApply),
        }
    }
}

impl Mode {
    /// The crash points this mode's code has.
    pub fn crash_points(self) -> &'static [CrashPoint] {
        use CrashPoint::*;
        match self {
            Mode::Outbox => &[
                None,
                AfterBegin,
                AfterUpdate,
                AfterInsert,
                AfterCommit,
                CommitReplyLost,
            ],
            Mode::Naive => &[None, AfterBegin, AfterUpdate, AfterCommit],
            Mode::NaivePublishFirst => &[None, AfterBegin, AfterUpdate, AfterPublish, AfterCommit],
        }
    }

    pub fn has_crash_point(self, crash: CrashPoint) -> bool {
        self.crash_points().contains(&crash)
    }

    /// The function of this mode as the timeline draws it, in the order the code runs: its
    /// steps, and between them the gaps where the process can die. "No crash" sits after
    /// the last slot; a lost COMMIT reply is drawn on the COMMIT step ([`Mode::mark_on`]).
    pub fn timeline(self) -> &'static [Slot] {
        use CrashPoint as C;
        use Slot::{Crash, Step as S};
        match self {
            Mode::Outbox => &[
                S(Step::Begin),
                Crash(C::AfterBegin),
                S(Step::Update),
                Crash(C::AfterUpdate),
                S(Step::Insert),
                Crash(C::AfterInsert),
                S(Step::Commit),
                Crash(C::AfterCommit),
            ],
            Mode::Naive => &[
                S(Step::Begin),
                Crash(C::AfterBegin),
                S(Step::Update),
                Crash(C::AfterUpdate),
                S(Step::Commit),
                Crash(C::AfterCommit),
                S(Step::Publish),
            ],
            Mode::NaivePublishFirst => &[
                S(Step::Begin),
                Crash(C::AfterBegin),
                S(Step::Update),
                Crash(C::AfterUpdate),
                S(Step::Publish),
                Crash(C::AfterPublish),
                S(Step::Commit),
                Crash(C::AfterCommit),
            ],
        }
    }

    /// The step that runs after crash point `point` in this mode, if any.
    pub fn step_after(self, point: CrashPoint) -> Option<Step> {
        let timeline = self.timeline();
        let at = timeline.iter().position(|s| *s == Slot::Crash(point))?;
        timeline[at + 1..].iter().find_map(|s| match s {
            Slot::Step(step) => Some(*step),
            Slot::Crash(_) => None,
        })
    }

    /// The crash point drawn on a step itself: the COMMIT whose reply is lost.
    pub fn mark_on(self, step: Step) -> Option<CrashPoint> {
        (step == Step::Commit && self.has_crash_point(CrashPoint::CommitReplyLost))
            .then_some(CrashPoint::CommitReplyLost)
    }

    /// The steps of this mode's function, in order.
    pub fn steps(self) -> impl Iterator<Item = Step> {
        self.timeline().iter().filter_map(|slot| match slot {
            Slot::Step(step) => Some(*step),
            Slot::Crash(_) => None,
        })
    }

    /// Whether the service writes Kafka itself (Trace A) rather than an outbox row.
    pub const fn publishes_directly(self) -> bool {
        !matches!(self, Mode::Outbox)
    }
}

/// Every mode's timeline merged into one strip, as the page draws it: each slot with the modes
/// that have it. The page hides the other modes' slots, so every crash point is one radio
/// button, whichever mode is chosen.
pub const STRIP: &[(Slot, &[Mode])] = {
    use CrashPoint as C;
    use Mode::{Naive as N, NaivePublishFirst as P, Outbox as O};
    use Slot::{Crash, Step as S};
    &[
        (S(Step::Begin), &[O, N, P]),
        (Crash(C::AfterBegin), &[O, N, P]),
        (S(Step::Update), &[O, N, P]),
        (Crash(C::AfterUpdate), &[O, N, P]),
        (S(Step::Insert), &[O]),
        (Crash(C::AfterInsert), &[O]),
        (S(Step::Publish), &[P]),
        (Crash(C::AfterPublish), &[P]),
        (S(Step::Commit), &[O, N, P]),
        (Crash(C::AfterCommit), &[O, N, P]),
        (S(Step::Publish), &[N]),
    ]
};

/// The wrong ways a comparison offers: each a mode or a set of mistakes.
pub const WRONG_WAYS: &[(Mode, &[Mistake])] = &[
    (Mode::Naive, &[]),
    (Mode::NaivePublishFirst, &[]),
    (Mode::Outbox, &[Mistake::InsertOutsideTx]),
    (Mode::Outbox, &[Mistake::UpdateOutsideTx]),
    (Mode::Outbox, &[Mistake::UnguardedUpdate]),
    (Mode::Outbox, &[Mistake::NewEventIdOnRetry]),
    (
        Mode::Outbox,
        &[Mistake::UnguardedUpdate, Mistake::NewEventIdOnRetry],
    ),
    (Mode::Outbox, &[Mistake::OnConflictDoNothing]),
];

impl FailureRow {
    /// The four rows of the lesson's own table (the rest come from its notes).
    pub const fn from_lesson_table(self) -> bool {
        matches!(
            self,
            FailureRow::CrashAfterUpdate
                | FailureRow::InsertError
                | FailureRow::CrashBeforeCommit
                | FailureRow::CommittedBeforePublish
        )
    }
}

/// The lesson's fixed names. Changing one of these changes the lesson.
pub mod names {
    pub const TICKET_ID: &str = "ticket-42";
    pub const EVENT_ID: &str = "event-ticket-900";
    pub const STATUS_OPEN: &str = "open";
    pub const STATUS_RESOLVED: &str = "resolved";
    pub const KAFKA_TOPIC: &str = "tickets.status.v1";
    /// The payload of the transition, serialised before the transaction, exactly as the lesson
    /// writes it.
    pub const PAYLOAD: &str = r#"{"event_id":"event-ticket-900","ticket_id":"ticket-42","from_status":"open","to_status":"resolved","changed_at":"2026-10-03T08:00:00Z"}"#;
    /// An earlier request's event, for comparisons that start from a resolved ticket.
    pub const EARLIER_EVENT_ID: &str = "event-ticket-899";
    pub const EARLIER_PAYLOAD: &str = r#"{"event_id":"event-ticket-899","ticket_id":"ticket-42","from_status":"open","to_status":"resolved","changed_at":"2026-10-03T07:59:00Z"}"#;
    /// The second request of a race: its own event, generated before its transaction.
    pub const RACE_B_EVENT_ID: &str = "event-ticket-901";
    pub const RACE_B_PAYLOAD: &str = r#"{"event_id":"event-ticket-901","ticket_id":"ticket-42","from_status":"open","to_status":"resolved","changed_at":"2026-10-03T08:00:00Z"}"#;
    /// What a retry with a fresh event_id appends to the first id.
    pub const RETRY_SUFFIX: &str = "-retry";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_parses_back_to_its_variant() {
        for &c in CrashPoint::ALL {
            assert_eq!(CrashPoint::parse(c.id()), Some(c));
        }
        for &f in CommitFate::ALL {
            assert_eq!(CommitFate::parse(f.id()), Some(f));
        }
        for &o in OutcomeId::ALL {
            assert_eq!(OutcomeId::parse(o.id()), Some(o));
        }
        for &r in FailureRow::ALL {
            assert_eq!(FailureRow::parse(r.id()), Some(r));
        }
        for &m in Mistake::ALL {
            assert_eq!(Mistake::parse(m.id()), Some(m));
        }
        for &m in Mode::ALL {
            assert_eq!(Mode::parse(m.id()), Some(m));
        }
    }

    #[test]
    fn unknown_ids_are_refused() {
        assert_eq!(CrashPoint::parse("after_everything"), None);
        assert_eq!(CrashPoint::parse("AFTER_UPDATE"), None);
        assert_eq!(CommitFate::parse(""), None);
    }

    #[test]
    fn serde_uses_the_stable_ids() {
        let json = serde_json::to_string(&CrashPoint::CommitReplyLost).unwrap();
        assert_eq!(json, "\"commit_reply_lost\"");
    }

    #[test]
    fn every_crash_point_of_a_mode_is_drawn_once_on_its_timeline() {
        for &mode in Mode::ALL {
            let mut drawn = vec![CrashPoint::None];
            for slot in mode.timeline() {
                match *slot {
                    Slot::Crash(c) => drawn.push(c),
                    Slot::Step(step) => drawn.extend(mode.mark_on(step)),
                }
            }
            drawn.sort_by_key(|c| c.id());
            let mut offered = mode.crash_points().to_vec();
            offered.sort_by_key(|c| c.id());
            assert_eq!(drawn, offered, "{mode}");
        }
        let steps: Vec<_> = Mode::Naive.steps().collect();
        assert_eq!(
            steps,
            [Step::Begin, Step::Update, Step::Commit, Step::Publish]
        );
    }

    #[test]
    fn the_strip_filtered_by_a_mode_is_that_modes_timeline() {
        for &mode in Mode::ALL {
            let drawn: Vec<Slot> = STRIP
                .iter()
                .filter(|(_, modes)| modes.contains(&mode))
                .map(|(slot, _)| *slot)
                .collect();
            assert_eq!(drawn, mode.timeline(), "{mode}");
        }
    }

    #[test]
    fn every_lesson_row_is_reached_by_some_outcome() {
        for &row in FailureRow::ALL {
            assert!(
                OutcomeId::ALL.iter().any(|o| o.failure_row() == Some(row)),
                "no outcome lights {row}"
            );
        }
    }
}
