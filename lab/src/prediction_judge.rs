//! A prediction judged against a finished report: what the tables read afterwards and the
//! trace show for each predicted item. Only this judging reads the report; the prediction and
//! its judgement are plain data in [`crate::prediction`].

use crate::catalog::names;
use crate::prediction::{Item, Judged, Judgement, Prediction, why};
use crate::report::Report;
use crate::sql_trace::{Actor, Sent, TxState};

impl Prediction {
    /// Compares the prediction with a finished attempt's report; `None` when nothing was
    /// predicted.
    pub fn judge(&self, report: &Report) -> Option<Judgement> {
        if self.is_empty() {
            return None;
        }
        let seen = Seen::of(report);
        let items = self
            .guesses
            .iter()
            .map(|&(item, predicted)| {
                let actual = seen.value(item);
                let right = actual == Some(predicted);
                Judged {
                    item,
                    predicted: predicted.to_owned(),
                    actual: actual.map(str::to_owned),
                    right,
                    why: (!right)
                        .then(|| actual.and_then(|a| why(item, a, report.outcome)))
                        .flatten()
                        .map(str::to_owned),
                }
            })
            .collect();
        Some(Judgement { items })
    }
}

/// What the report shows for each item.
struct Seen {
    ticket: Option<&'static str>,
    outbox: Option<&'static str>,
    kafka: Option<&'static str>,
    client: Option<&'static str>,
    sends: Option<&'static str>,
    mark: Option<&'static str>,
    history: &'static str,
}

impl Seen {
    fn of(report: &Report) -> Self {
        let after = &report.snapshot;
        let ticket = after
            .ticket(names::TICKET_ID)
            .and_then(|t| match t.status.as_str() {
                names::STATUS_OPEN => Some(names::STATUS_OPEN),
                names::STATUS_RESOLVED => Some(names::STATUS_RESOLVED),
                _ => None,
            });
        // The retry of the mistake `new_event_id_on_retry` is part of the same attempt.
        let outbox = report.attempt.as_ref().map(|a| {
            let retry_id = format!("{}{}", a.event_id, names::RETRY_SUFFIX);
            if after.outbox_row(&a.event_id).is_some() || after.outbox_row(&retry_id).is_some() {
                "row"
            } else {
                "none"
            }
        });
        let kafka = report.before.as_ref().map(|before| {
            let new = after
                .kafka
                .iter()
                .any(|r| !before.kafka.iter().any(|b| b.offset == r.offset));
            if new { "event" } else { "none" }
        });
        let sends = report.before.as_ref().map(|before| {
            let new = after
                .kafka
                .iter()
                .filter(|r| !before.kafka.iter().any(|b| b.offset == r.offset))
                .count();
            match new {
                0 => "none",
                1 => "one",
                _ => "more",
            }
        });
        // The lesson's row: marked only once the publisher's COMMIT made the mark durable.
        let mark = after.outbox_row(names::EVENT_ID).map(|r| {
            if r.published_at.is_some() {
                "set"
            } else {
                "null"
            }
        });
        let history = match after
            .history
            .iter()
            .filter(|h| h.event_id == names::EVENT_ID)
            .count()
        {
            0 => "none",
            1 => "once",
            _ => "twice",
        };
        Seen {
            ticket,
            outbox,
            kafka,
            client: caller_was_told(report),
            sends,
            mark,
            history,
        }
    }

    fn value(&self, item: Item) -> Option<&'static str> {
        match item {
            Item::Ticket => self.ticket,
            Item::Outbox => self.outbox,
            Item::Kafka => self.kafka,
            Item::Client => self.client,
            Item::Sends => self.sends,
            Item::Mark => self.mark,
            Item::History => Some(self.history),
        }
    }
}

/// What the service's caller heard, from the trace: the last thing the service's function did
/// decides. A COMMIT answered OK is a success; a ROLLBACK is an error answer; a process that
/// died, or a COMMIT with no reply, leaves the caller without an answer it can trust.
fn caller_was_told(report: &Report) -> Option<&'static str> {
    report
        .trace
        .iter()
        .rev()
        .find_map(|step| match (&step.actor, &step.sent) {
            (Actor::Service, Sent::ProcessCrashed) => Some("unknown"),
            (Actor::Service, Sent::Sql { sql, .. }) if sql == "COMMIT" => match step.tx {
                TxState::Committed => Some("ok"),
                TxState::Unknown => Some("unknown"),
                _ => None,
            },
            (Actor::Service, Sent::Sql { sql, .. }) if sql == "ROLLBACK" => Some("error"),
            _ => None,
        })
}
