//! What an action answers: the report, with the tables as PostgreSQL holds them afterwards,
//! the SQL trace and the outcome. These types travel to the browser, so they stay plain data.

use serde::{Deserialize, Serialize};

use crate::catalog::{
    ActionKind, CommitFate, ConsumerCrash, CrashPoint, Difference, Mode, OutcomeId, PublisherCrash,
    Setup, Step,
};
use crate::input::Mistakes;

/// A row of `tickets`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TicketRow {
    pub id: String,
    pub status: String,
}

/// A row of `outbox`. `payload` is PostgreSQL's own text of the stored jsonb (it normalises
/// spacing and key order), `published_at` its text or `None` for NULL.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutboxRow {
    pub event_id: String,
    pub aggregate_id: String,
    pub payload: String,
    pub published_at: Option<String>,
}

/// A record in the simulated Kafka topic.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KafkaRecord {
    pub offset: i64,
    pub key: String,
    pub value: String,
}

/// An event the History projection applied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryEntry {
    pub event_id: String,
    pub ticket_id: String,
    pub to_status: String,
}

/// The sandbox's tables, read in one consistent snapshot: the lesson's two, the simulated
/// topic, and the History projection with its inbox and committed offset.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    pub tickets: Vec<TicketRow>,
    pub outbox: Vec<OutboxRow>,
    pub kafka: Vec<KafkaRecord>,
    /// In the order the consumer applied them; an event applied twice is here twice.
    pub history: Vec<HistoryEntry>,
    /// The consumer's inbox: event ids it has applied, in byte order.
    #[serde(default)]
    pub inbox: Vec<String>,
    /// The History consumer's committed offset: the next record it will read.
    #[serde(default)]
    pub consumer_offset: i64,
}

impl Snapshot {
    pub fn ticket(&self, id: &str) -> Option<&TicketRow> {
        self.tickets.iter().find(|t| t.id == id)
    }

    pub fn outbox_row(&self, event_id: &str) -> Option<&OutboxRow> {
        self.outbox.iter().find(|r| r.event_id == event_id)
    }

    /// Equal but for the moments in `published_at`, which nobody can predict: only whether
    /// a row is marked counts.
    pub fn same_as(&self, other: &Snapshot) -> bool {
        let marks = |s: &Snapshot| -> Vec<bool> {
            s.outbox.iter().map(|r| r.published_at.is_some()).collect()
        };
        let unmarked = |s: &Snapshot| -> Vec<OutboxRow> {
            s.outbox
                .iter()
                .map(|r| OutboxRow {
                    published_at: None,
                    ..r.clone()
                })
                .collect()
        };
        self.tickets == other.tickets
            && self.kafka == other.kafka
            && self.history == other.history
            && self.inbox == other.inbox
            && self.consumer_offset == other.consumer_offset
            && marks(self) == marks(other)
            && unmarked(self) == unmarked(other)
    }
}

/// Who did a step of the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    /// The ticket service running the lesson's function.
    Service,
    /// The network between the service and PostgreSQL.
    Network,
    /// PostgreSQL itself, observed from another session.
    Postgres,
    /// A support agent (the reopen action).
    Support,
    /// The playground's own plumbing (choosing the sandbox, resetting it): not the lesson.
    Playground,
    /// The ticket service, but through another pooled connection: outside its transaction.
    ServicePool,
    /// The simulated Kafka broker, on a connection and commit of its own.
    Broker,
    /// The History consumer, on a connection and commit of its own.
    Consumer,
    /// The outbox publisher (lesson 8.3's preview), on a connection of its own.
    Publisher,
    /// Another writer on ticket-42 (the stepper's second session).
    OtherWriter,
}

/// What a step sent or what happened at that point.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
// Externally tagged: internally tagged enums cost a lot of WASM to deserialise.
#[serde(rename_all = "snake_case")]
pub enum Sent {
    /// A statement (BEGIN, COMMIT and ROLLBACK included) with its bound parameters.
    Sql { sql: String, params: Vec<String> },
    /// The service process died here: no ROLLBACK, no goodbye, the socket just closes.
    ProcessCrashed,
    /// The connection was cut between the service and PostgreSQL.
    ConnectionCut,
    /// PostgreSQL's backend for the dead connection has exited.
    BackendGone { pid: i32 },
    /// Seen from another session: backend `pid` waits for a lock held by `blocked_by`.
    LockWait { pid: i32, blocked_by: Vec<i32> },
    /// The client gave up on an unknown COMMIT and retries with a fresh event_id.
    RetryWithNewId { event_id: String },
    /// The consumer could not read the record as an event and skipped it.
    ConsumerSkipped { offset: i64 },
}

/// Which of a race's two requests a step belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Lane {
    A,
    B,
}

/// PostgreSQL's answer to a step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
// Externally tagged: internally tagged enums cost a lot of WASM to deserialise.
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// The statement completed; `rows` is the affected row count where it has one.
    Ok { rows: Option<u64> },
    /// The statement returned values (shown as text).
    Values { values: Vec<String> },
    /// PostgreSQL refused the statement.
    Error { sqlstate: String, message: String },
    /// No answer came: the connection failed.
    Io { message: String },
    /// Nothing was asked, nothing answered.
    Nothing,
}

/// The state of the ticket transaction after a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TxState {
    /// No transaction is open.
    Idle,
    /// A transaction is open; its changes are visible only to itself.
    Open,
    /// A statement failed: the transaction can only be rolled back.
    Failed,
    /// Committed: durable and visible to everyone.
    Committed,
    /// Rolled back by the client.
    RolledBack,
    /// The client vanished while the transaction was open; PostgreSQL rolls it back.
    Abandoned,
    /// The client cannot tell whether COMMIT happened.
    Unknown,
}

/// One line of the SQL trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceStep {
    pub actor: Actor,
    pub sent: Sent,
    pub answer: Answer,
    pub tx: TxState,
    /// Microseconds since the action started.
    pub at_us: u64,
    /// The race lane, for a race's steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lane: Option<Lane>,
    /// When the answer came, for a statement that waited (`at_us` is when it was sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_us: Option<u64>,
    /// The step of the service's function this belongs to (for the timeline and the trace's
    /// grouping); none outside the function (reset, reconcile…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<Step>,
}

/// The settings of one resolve attempt, echoed in its report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptSettings {
    #[serde(default = "outbox_mode")]
    pub mode: Mode,
    #[serde(default)]
    pub mistakes: Mistakes,
    pub crash: CrashPoint,
    pub commit_fate: CommitFate,
    pub event_id: String,
    pub payload: String,
}

fn outbox_mode() -> Mode {
    Mode::Outbox
}

/// One outcome the reference model allows, with the tables it leaves.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Possible {
    /// The outcome id (none for actions without one: reset, reopen).
    pub outcome: Option<OutcomeId>,
    pub state: Snapshot,
}

/// What the reference model predicted for an action from the state before it: one
/// possibility, or two when the result depends on a fate the client cannot see (a lost
/// COMMIT reply).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expected {
    pub possible: Vec<Possible>,
}

impl Expected {
    pub fn one(outcome: Option<OutcomeId>, state: Snapshot) -> Self {
        Expected {
            possible: vec![Possible { outcome, state }],
        }
    }

    /// Whether a real outcome and state are among the predictions.
    pub fn allows(&self, outcome: Option<OutcomeId>, state: &Snapshot) -> bool {
        self.possible
            .iter()
            .any(|p| p.outcome == outcome && p.state.same_as(state))
    }
}

/// What a race's two requests did, and the lock wait seen between them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RaceReport {
    pub a: OutcomeId,
    pub b: OutcomeId,
    pub a_event_id: String,
    pub b_event_id: String,
    /// B's backend as seen waiting in `pg_stat_activity`, blocked by A's backend.
    pub lock_wait: Option<LockWaitSeen>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockWaitSeen {
    pub waiting_pid: i32,
    pub blocked_by: Vec<i32>,
    pub wait_event: String,
    pub at_us: u64,
}

/// What a run after COMMIT did: the publisher, two publishers at once, or the consumer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AfterCommitRun {
    Publisher {
        crash: PublisherCrash,
        /// The event ids the broker accepted, in order.
        sent: Vec<String>,
    },
    PublishRace {
        skip_locked: bool,
        a_sent: Vec<String>,
        b_sent: Vec<String>,
        /// Publisher B seen waiting for A's row lock (plain `FOR UPDATE` only).
        lock_wait: Option<LockWaitSeen>,
    },
    Consumer {
        inbox: bool,
        crash: ConsumerCrash,
        /// Event ids applied to History, in order (twice when applied twice).
        applied: Vec<String>,
        /// Event ids the inbox refused as already applied.
        skipped: Vec<String>,
    },
}

/// The same crash point the outbox way and a wrong way, in two sandboxes of their own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompareReport {
    pub setup: Setup,
    pub outbox: Report,
    pub wrong: Report,
    pub difference: Difference,
}

/// How reconciliation decided, from the database alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reconciliation {
    pub event_id: String,
    /// The transaction id captured inside the attempt (`pg_current_xact_id()`).
    pub xid: String,
    /// `pg_xact_status(xid)`: committed, aborted, in progress, or none when too old to know.
    pub xact_status: Option<String>,
    /// By the stable ids: ticket-42 is resolved and the outbox holds the event.
    pub ticket_status: Option<String>,
    pub outbox_row_present: bool,
    /// The answer from the stable ids alone.
    pub by_ids_committed: bool,
    /// The answer from the transaction id alone (None when PostgreSQL no longer knows).
    pub by_xid_committed: Option<bool>,
}

/// Everything an action answers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// The sandbox's schema name.
    pub sandbox: String,
    pub action: ActionKind,
    pub attempt: Option<AttemptSettings>,
    /// The tables before the action (for marking what changed).
    pub before: Option<Snapshot>,
    /// The tables after the action, read from PostgreSQL.
    pub snapshot: Snapshot,
    pub trace: Vec<TraceStep>,
    pub outcome: Option<OutcomeId>,
    /// The page shows only the verdict; without the runner (the browser build) the prediction
    /// is not read, which keeps its decoder out of the WebAssembly.
    #[cfg_attr(not(feature = "postgres"), serde(skip))]
    pub expected: Option<Expected>,
    pub matches_model: Option<bool>,
    pub reconciliation: Option<Reconciliation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub race: Option<RaceReport>,
    /// A run driven step by step (the stepper).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stepped: Option<crate::step::Stepped>,
    /// What the learner predicted before the attempt, judged against the tables afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prediction: Option<crate::prediction::Judgement>,
    /// A publisher or consumer run after COMMIT (lessons 8.3 and 8.4, previewed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_commit: Option<AfterCommitRun>,
    /// What this action did for each quest it concerns (see [`crate::quest::judge`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quests: Vec<crate::quest::judge::QuestSeen>,
}

impl Report {
    /// A report of the tables alone.
    pub fn of_snapshot(sandbox: String, action: ActionKind, snapshot: Snapshot) -> Self {
        Report {
            sandbox,
            action,
            attempt: None,
            before: None,
            snapshot,
            trace: Vec::new(),
            outcome: None,
            expected: None,
            matches_model: None,
            reconciliation: None,
            race: None,
            stepped: None,
            prediction: None,
            after_commit: None,
            quests: Vec::new(),
        }
    }
}
