//! What the learner expected before an attempt, and how it compares with what PostgreSQL's
//! tables and the trace show afterwards.
//!
//! The judgement reads the real report (the tables read after the action, the trace of what
//! went over the wire), never the reference model: a prediction is checked against the
//! database, as everything else on the page. This module holds the prediction and the
//! judgement as data; the judging itself, the one part that reads a report, is in
//! `prediction_judge`.

use serde::{Deserialize, Serialize};

use crate::catalog::{OutcomeId, names};
use crate::input::InputError;

catalogue_enum! {
    /// The four things a learner may predict.
    pub enum Item {
        /// ticket-42's status afterwards.
        Ticket = "ticket",
        /// Whether an outbox row exists for this attempt's event_id.
        Outbox = "outbox",
        /// Whether this attempt put an event in Kafka.
        Kafka = "kafka",
        /// What the service's caller was told.
        Client = "client",
        /// After COMMIT: how many events this run put into Kafka.
        Sends = "sends",
        /// After COMMIT: what `published_at` of the outbox rows says afterwards.
        Mark = "mark",
        /// After COMMIT: how often History holds the lesson's event afterwards.
        History = "history",
    }
}

impl Item {
    /// What a learner predicts for the ticket function.
    pub const TICKET: &'static [Item] = &[Item::Ticket, Item::Outbox, Item::Kafka, Item::Client];
    /// ...for the publisher after a restart.
    pub const PUBLISHER: &'static [Item] = &[Item::Sends, Item::Mark];
    /// ...for the History consumer.
    pub const CONSUMER: &'static [Item] = &[Item::History];

    /// The form field that carries this item.
    pub const fn field(self) -> &'static str {
        match self {
            Item::Ticket => "predict_ticket",
            Item::Outbox => "predict_outbox",
            Item::Kafka => "predict_kafka",
            Item::Client => "predict_client",
            Item::Sends => "predict_sends",
            Item::Mark => "predict_mark",
            Item::History => "predict_history",
        }
    }

    /// The values a learner may choose, in the order the form lists them.
    pub const fn values(self) -> &'static [&'static str] {
        match self {
            Item::Ticket => &[names::STATUS_OPEN, names::STATUS_RESOLVED],
            Item::Outbox => &["none", "row"],
            Item::Kafka => &["none", "event"],
            Item::Client => &["ok", "error", "unknown"],
            Item::Sends => &["none", "one", "more"],
            Item::Mark => &["null", "set"],
            Item::History => &["none", "once", "twice"],
        }
    }
}

/// A learner's prediction: any of the four items, each one of its allowed values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prediction {
    /// `(item, value)` in catalogue order; the value is one of `item.values()`.
    pub(crate) guesses: Vec<(Item, &'static str)>,
}

/// The raw form fields of a prediction; `None` or an empty string means "not predicted".
#[derive(Clone, Copy, Debug, Default)]
pub struct PredictionFields<'a> {
    pub ticket: Option<&'a str>,
    pub outbox: Option<&'a str>,
    pub kafka: Option<&'a str>,
    pub client: Option<&'a str>,
    pub sends: Option<&'a str>,
    pub mark: Option<&'a str>,
    pub history: Option<&'a str>,
}

impl Prediction {
    pub fn none() -> Self {
        Prediction::default()
    }

    pub fn parse(fields: PredictionFields<'_>) -> Result<Self, InputError> {
        let raw = [
            (Item::Ticket, fields.ticket),
            (Item::Outbox, fields.outbox),
            (Item::Kafka, fields.kafka),
            (Item::Client, fields.client),
            (Item::Sends, fields.sends),
            (Item::Mark, fields.mark),
            (Item::History, fields.history),
        ];
        let mut guesses = Vec::new();
        for (item, value) in raw {
            let Some(value) = value.filter(|v| !v.is_empty()) else {
                continue;
            };
            let Some(known) = item.values().iter().find(|v| **v == value) else {
                return Err(InputError::UnknownPrediction {
                    field: item.field(),
                    value: value.chars().take(40).collect(),
                });
            };
            guesses.push((item, *known));
        }
        Ok(Prediction { guesses })
    }

    pub fn is_empty(&self) -> bool {
        self.guesses.is_empty()
    }

    pub fn get(&self, item: Item) -> Option<&'static str> {
        self.guesses
            .iter()
            .find(|(i, _)| *i == item)
            .map(|(_, v)| *v)
    }
}

/// One predicted item, judged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Judged {
    pub item: Item,
    pub predicted: String,
    /// What PostgreSQL's tables (or the trace, for the caller's answer) show; `None` when the
    /// report cannot tell (an action without this attempt's tables).
    pub actual: Option<String>,
    pub right: bool,
    /// For a wrong prediction: the id of the sentence that names the misunderstanding
    /// (texts under `prediction.why.<id>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// The prediction of one attempt, item by item.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Judgement {
    pub items: Vec<Judged>,
}

impl Judgement {
    /// Every predicted item was right.
    pub fn all_right(&self) -> bool {
        self.items.iter().all(|j| j.right)
    }
}

/// The sentence for a wrong prediction: why `item` ended up `actual` in this outcome.
pub(crate) fn why(item: Item, actual: &str, outcome: Option<OutcomeId>) -> Option<&'static str> {
    use OutcomeId as O;
    let outcome = outcome?;
    let rolled_back = match outcome {
        O::InsertConflict | O::InvalidPayload | O::InsertFailed => "rolled_back_on_error",
        O::CommitUnknown => "commit_not_applied",
        O::GuardRejected | O::RetryRefused => "guard_changed_nothing",
        _ => "unfinished_rolled_back",
    };
    Some(match (item, actual) {
        (Item::Ticket, names::STATUS_OPEN) => rolled_back,
        (Item::Ticket, _) => match outcome {
            O::GuardRejected | O::RetryRefused => "guard_changed_nothing",
            O::CommitUnknown => "commit_applied_reply_lost",
            O::ChangeWithoutIntent => "update_outside_committed",
            _ => "commit_is_durable",
        },
        (Item::Outbox, "none") => match outcome {
            O::GuardRejected => "guard_no_event",
            O::NaivePublished | O::NaiveEventLost | O::NaivePhantomEvent => "naive_has_no_outbox",
            O::CommittedSilently => "do_nothing_hid_conflict",
            _ => rolled_back,
        },
        (Item::Outbox, _) => match outcome {
            O::InsertConflict | O::CommittedSilently | O::GuardRejected => "earlier_row_stays",
            O::CommitUnknown => "commit_applied_reply_lost",
            O::OrphanIntent => "insert_outside_committed",
            _ => "intent_commits_with_status",
        },
        (Item::Kafka, "none") => match outcome {
            O::NaiveEventLost => "died_before_publish",
            O::NaivePublished | O::NaivePhantomEvent => return None,
            _ => "outbox_does_not_publish",
        },
        (Item::Kafka, _) => match outcome {
            O::NaivePhantomEvent => "published_before_commit",
            _ => "naive_publishes_directly",
        },
        (Item::Client, "unknown") => match outcome {
            O::CommitUnknown => "reply_lost_unknown",
            _ => "process_died_no_reply",
        },
        (Item::Client, "ok") => match outcome {
            O::CommittedSilently => "do_nothing_reports_ok",
            _ => "commit_ok_answer",
        },
        (Item::Client, _) => "refusal_answers_error",
        (Item::Sends, "none") => "died_before_send",
        (Item::Sends, _) => "send_commits_in_broker",
        (Item::Mark, "null") => "mark_needs_commit",
        (Item::Mark, _) => "mark_committed",
        (Item::History, "none") => "apply_needs_commit",
        (Item::History, "once") => "inbox_applies_once",
        (Item::History, _) => "applied_again_without_inbox",
    })
}

/// Every sentence id [`Judgement`] can name, for the test that each has its texts.
pub const WHY_IDS: &[&str] = &[
    "rolled_back_on_error",
    "commit_not_applied",
    "guard_changed_nothing",
    "unfinished_rolled_back",
    "commit_applied_reply_lost",
    "update_outside_committed",
    "commit_is_durable",
    "guard_no_event",
    "naive_has_no_outbox",
    "do_nothing_hid_conflict",
    "earlier_row_stays",
    "insert_outside_committed",
    "intent_commits_with_status",
    "died_before_publish",
    "outbox_does_not_publish",
    "published_before_commit",
    "naive_publishes_directly",
    "reply_lost_unknown",
    "process_died_no_reply",
    "do_nothing_reports_ok",
    "commit_ok_answer",
    "refusal_answers_error",
    "died_before_send",
    "send_commits_in_broker",
    "mark_needs_commit",
    "mark_committed",
    "apply_needs_commit",
    "inbox_applies_once",
    "applied_again_without_inbox",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sentence_named_is_listed_for_its_texts() {
        for &item in Item::ALL {
            for actual in item.values() {
                for &o in OutcomeId::ALL {
                    if let Some(id) = why(item, actual, Some(o)) {
                        assert!(WHY_IDS.contains(&id), "{id} is not in WHY_IDS");
                    }
                }
            }
        }
    }

    #[test]
    fn empty_fields_predict_nothing_and_unknown_values_are_refused() {
        let p = Prediction::parse(PredictionFields {
            ticket: Some(""),
            ..Default::default()
        })
        .unwrap();
        assert!(p.is_empty());
        let err = Prediction::parse(PredictionFields {
            client: Some("maybe"),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(err.code(), "unknown_prediction");
        let p = Prediction::parse(PredictionFields {
            ticket: Some("resolved"),
            kafka: Some("none"),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(p.get(Item::Ticket), Some("resolved"));
        assert_eq!(p.get(Item::Kafka), Some("none"));
        assert_eq!(p.get(Item::Client), None);
    }
}
