//! The stepper's messages: a real transaction held open between two statements, and what
//! the learner sees at each pause. Plain data shared with the browser; the runner is in
//! `pg::stepper`, the transport (a WebSocket) in the server.

use serde::{Deserialize, Serialize};

use crate::catalog::{CommitFate, PausePoint, Step};
use crate::report::Report;
use crate::snapshot::Snapshot;
use crate::sql_trace::TraceStep;
use crate::stepped::Waiter;

/// What the learner (or course tooling) sends, one JSON text frame each.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case", deny_unknown_fields)]
// A command lives for one hop through a bounded channel; boxing `begin` would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum Command {
    /// Opens the transaction; the fields are `/api/attempt`'s (no crash point: the learner
    /// chooses it as they go). `scenario` chooses what runs: `ticket` (the default), or after
    /// COMMIT the `publisher` or the `consumer` (with `inbox`, `on` by default, as
    /// `/api/consume` takes it); those take none of the ticket's fields.
    Begin {
        #[serde(default)]
        scenario: Option<String>,
        #[serde(default)]
        inbox: Option<String>,
        #[serde(default)]
        mode: Option<String>,
        #[serde(default)]
        mistakes: Option<String>,
        #[serde(default)]
        event_id: Option<String>,
        #[serde(default)]
        payload: Option<String>,
        /// The learner's prediction, as `/api/attempt` takes it; judged on the final report.
        #[serde(default)]
        predict_ticket: Option<String>,
        #[serde(default)]
        predict_outbox: Option<String>,
        #[serde(default)]
        predict_kafka: Option<String>,
        #[serde(default)]
        predict_client: Option<String>,
        /// The publisher's and the consumer's predictions, as `/api/restart` and
        /// `/api/consume` take them.
        #[serde(default)]
        predict_sends: Option<String>,
        #[serde(default)]
        predict_mark: Option<String>,
        #[serde(default)]
        predict_history: Option<String>,
    },
    /// The next statement runs.
    Next,
    /// The process dies here.
    Crash,
    /// At the COMMIT step: COMMIT is sent and its reply is lost.
    CommitReplyLost { commit_fate: String },
    /// A second connection runs the lesson's guarded UPDATE of ticket-42 now.
    OtherWriter,
    /// A second publisher starts now: its SELECT with `SKIP LOCKED` (the default) takes what
    /// nobody holds; without it, it waits for the held publisher's row locks.
    OtherPublisher {
        #[serde(default = "skip_locked_by_default")]
        skip_locked: bool,
    },
}

fn skip_locked_by_default() -> bool {
    true
}

/// What the server sends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Message {
    /// The transaction is held here.
    Pause(Box<Pause>),
    /// The run has ended: the same report as `/api/attempt`.
    Report(Box<Report>),
    /// A command was refused; the session goes on where it can.
    Error(StepError),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepError {
    pub code: String,
    pub message: String,
}

/// One pause: the function between two statements, seen from inside and from outside.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pause {
    /// The scenario and the crash point it is held at (`"scenario"` and `"at"` in JSON).
    #[serde(flatten)]
    pub point: PausePoint,
    /// The step that "next" runs (`None` when the function would simply return).
    pub next: Option<Step>,
    /// The tables through the held connection (its own uncommitted changes visible);
    /// `None` once no transaction is open (after COMMIT).
    pub inside: Option<Snapshot>,
    /// The same tables through another session: committed data only.
    pub outside: Snapshot,
    /// The held backend as `pg_stat_activity` shows it.
    pub backend: Backend,
    /// The locks it holds, from `pg_locks`.
    pub locks: Vec<LockRow>,
    /// Another writer, once the learner has sent one.
    pub waiter: Option<Waiter>,
    /// The trace so far.
    pub trace: Vec<TraceStep>,
    /// Both views are what the reference model predicts for this pause.
    pub matches_model: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Backend {
    pub pid: i32,
    /// `pg_stat_activity.state`, e.g. `idle in transaction`.
    pub state: String,
    /// `pg_current_xact_id_if_assigned()`: none until the transaction first writes.
    pub xid: Option<String>,
}

/// A lock the held backend holds (or waits for).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockRow {
    /// `relation` or `transactionid` (a row lock shows as the holder's transaction id,
    /// which a waiter queues on).
    pub locktype: String,
    /// The table, for a relation lock.
    pub relation: Option<String>,
    pub mode: String,
    pub granted: bool,
}

/// The fate a `commit_reply_lost` command names.
pub fn parse_fate(raw: &str) -> Option<CommitFate> {
    CommitFate::parse(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_publisher_skips_locked_rows_unless_told_otherwise() {
        let c: Command = serde_json::from_str(r#"{"cmd":"other_publisher"}"#).unwrap();
        assert_eq!(c, Command::OtherPublisher { skip_locked: true });
        let c: Command =
            serde_json::from_str(r#"{"cmd":"other_publisher","skip_locked":false}"#).unwrap();
        assert_eq!(c, Command::OtherPublisher { skip_locked: false });
    }
}
