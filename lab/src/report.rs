//! What an action answers: the report, with the tables as PostgreSQL holds them afterwards,
//! the SQL trace and the outcome. These types travel to the browser, so they stay plain data.

use serde::{Deserialize, Serialize};

use crate::catalog::{
    ActionKind, ConsumerCrash, Difference, OutcomeId, PausePoint, PublisherCrash, Scenario, Setup,
};
use crate::input::AttemptSettings;
use crate::prediction::Judgement;
use crate::quest::seen::QuestSeen;
use crate::snapshot::Snapshot;
use crate::sql_trace::TraceStep;
use crate::stepped::Stepped;

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

impl AfterCommitRun {
    /// The scenario that ran.
    pub const fn scenario(&self) -> Scenario {
        match self {
            AfterCommitRun::Publisher { .. } | AfterCommitRun::PublishRace { .. } => {
                Scenario::Publisher
            }
            AfterCommitRun::Consumer { .. } => Scenario::Consumer,
        }
    }

    /// Where the run died: its crash point, when the run's `outcome` is that crash's (a crash
    /// point the run never reached, e.g. with nothing to publish, did not fire).
    pub fn died_at(&self, outcome: Option<OutcomeId>) -> Option<PausePoint> {
        let (point, died) = match *self {
            AfterCommitRun::Publisher { crash, .. } => {
                (PausePoint::Publisher(crash), Some(crash.outcome()))
            }
            AfterCommitRun::Consumer { crash, .. } => {
                (PausePoint::Consumer(crash), crash.outcome())
            }
            AfterCommitRun::PublishRace { .. } => return None,
        };
        (point != PausePoint::end_of(self.scenario()) && died.is_some() && died == outcome)
            .then_some(point)
    }
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
    pub stepped: Option<Stepped>,
    /// What the learner predicted before the attempt, judged against the tables afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prediction: Option<Judgement>,
    /// A publisher or consumer run after COMMIT (lessons 8.3 and 8.4, previewed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_commit: Option<AfterCommitRun>,
    /// What this action did for each quest it concerns (see `quest::judge`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quests: Vec<QuestSeen>,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_died_only_where_its_outcome_says_so() {
        let run = AfterCommitRun::Publisher {
            crash: PublisherCrash::AfterSend,
            sent: vec![],
        };
        assert_eq!(
            run.died_at(Some(OutcomeId::PublisherCrashedAfterSend)),
            Some(PausePoint::Publisher(PublisherCrash::AfterSend))
        );
        // Nothing to publish: the crash point was never reached.
        assert_eq!(run.died_at(Some(OutcomeId::NothingToPublish)), None);
        let consumed = AfterCommitRun::Consumer {
            inbox: true,
            crash: ConsumerCrash::None,
            applied: vec![],
            skipped: vec![],
        };
        assert_eq!(consumed.died_at(Some(OutcomeId::Consumed)), None);
        assert_eq!(consumed.scenario(), Scenario::Consumer);
    }
}
