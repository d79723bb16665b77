//! The SQL trace: who sent what to PostgreSQL, what it answered, and the state of the
//! ticket transaction after each step. Plain data shared by the runner, the report, the
//! stepper and the browser.

use serde::{Deserialize, Serialize};

use crate::catalog::Step;

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
