//! The sandbox's tables as one consistent read: the lesson's two tables, the simulated topic
//! and the History projection. Plain data: the model predicts it, the runner reads it, the
//! report and the stepper carry it to the browser.

use serde::{Deserialize, Serialize};

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
