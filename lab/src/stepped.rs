//! How a stepped run ended, as its report carries it: where the learner stopped, and the
//! other writer (or second publisher) they sent while the transaction was held. Plain data;
//! the messages around it are in the module `step`.

use serde::{Deserialize, Serialize};

use crate::catalog::{ConsumerCrash, CrashPoint, PausePoint, PublisherCrash};

/// The other writer: the lesson's guarded UPDATE on a second connection.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waiter {
    pub pid: i32,
    /// `pg_blocking_pids(pid)` while it waits.
    pub blocked_by: Vec<i32>,
    pub state: WaiterState,
    /// Rows its UPDATE changed, once it has finished.
    pub rows: Option<u64>,
    /// PostgreSQL's refusal, e.g. `55P03` when `lock_timeout` cancelled the wait.
    pub sqlstate: Option<String>,
    /// The backends PostgreSQL last showed it waiting behind (`pg_blocking_pids`), kept after
    /// it finished: the evidence that it waited at all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waited_behind: Vec<i32>,
    /// A second publisher (rather than another writer): whether its SELECT skipped locked
    /// rows. `rows` is then the rows it took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_locked: Option<bool>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaiterState {
    /// Queued behind the held transaction's row lock.
    Waiting,
    /// Its UPDATE finished and committed.
    Done,
    /// PostgreSQL refused it (lock_timeout).
    Failed,
}

/// What a stepped run adds to its report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stepped {
    /// The scenario, and where the learner ended it (`none` when it ran to the end):
    /// `"scenario"` and `"ended_at"` in JSON.
    #[serde(flatten, with = "ended_at")]
    pub ended_at: PausePoint,
    /// The publisher's row or the consumer's event it ended at, from 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub index: usize,
    /// PostgreSQL ended the idle transaction itself (`idle_in_transaction_session_timeout`).
    pub idle_timeout: bool,
    pub waiter: Option<Waiter>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// `Stepped`'s end as `"scenario"` and `"ended_at"` beside its other fields.
mod ended_at {
    use super::{ConsumerCrash, CrashPoint, PausePoint, PublisherCrash};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(tag = "scenario", content = "ended_at", rename_all = "snake_case")]
    enum Tagged {
        Ticket(CrashPoint),
        Publisher(PublisherCrash),
        Consumer(ConsumerCrash),
    }

    pub fn serialize<S: Serializer>(point: &PausePoint, s: S) -> Result<S::Ok, S::Error> {
        match *point {
            PausePoint::Ticket(c) => Tagged::Ticket(c),
            PausePoint::Publisher(c) => Tagged::Publisher(c),
            PausePoint::Consumer(c) => Tagged::Consumer(c),
        }
        .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PausePoint, D::Error> {
        Ok(match Tagged::deserialize(d)? {
            Tagged::Ticket(c) => PausePoint::Ticket(c),
            Tagged::Publisher(c) => PausePoint::Publisher(c),
            Tagged::Consumer(c) => PausePoint::Consumer(c),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_and_a_stepped_end_name_their_scenario_beside_the_point() {
        let stepped = Stepped {
            ended_at: PausePoint::Publisher(PublisherCrash::AfterSend),
            index: 1,
            idle_timeout: false,
            waiter: None,
        };
        let json = serde_json::to_value(&stepped).unwrap();
        assert_eq!(json["scenario"], "publisher");
        assert_eq!(json["ended_at"], "after_send");
        assert_eq!(serde_json::from_value::<Stepped>(json).unwrap(), stepped);
        let ticket = serde_json::json!({"scenario": "ticket", "ended_at": "after_update",
            "idle_timeout": true, "waiter": null});
        let back: Stepped = serde_json::from_value(ticket).unwrap();
        assert_eq!(back.ended_at, PausePoint::Ticket(CrashPoint::AfterUpdate));
        let wrong = serde_json::json!({"scenario": "consumer", "ended_at": "after_update",
            "idle_timeout": true, "waiter": null});
        assert!(serde_json::from_value::<Stepped>(wrong).is_err());
    }
}
