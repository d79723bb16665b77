//! The simulated Kafka topic, the outbox publisher and the History consumer, as pure
//! functions: what a publish appends, what a publisher run sends and marks, and what the
//! consumer applies. The runner does the same on PostgreSQL through
//! connections of their own; the model uses these to predict it.

use serde::Deserialize;

use crate::catalog::{ConsumerCrash, OutcomeId, PublisherCrash};
use crate::snapshot::{HistoryEntry, KafkaRecord, OutboxRow, Snapshot};

/// The fields the consumer needs from an event; anything else in the JSON is ignored.
#[derive(Deserialize)]
struct EventFields {
    event_id: String,
    ticket_id: String,
    to_status: String,
}

/// What the History consumer applies for a record's value, or `None` when the value is not
/// an event it can read (it skips such a record rather than stop the partition).
pub fn parse_event(value: &str) -> Option<HistoryEntry> {
    let e: EventFields = serde_json::from_str(value).ok()?;
    Some(HistoryEntry {
        event_id: e.event_id,
        ticket_id: e.ticket_id,
        to_status: e.to_status,
    })
}

/// The offset the next record gets: one past the highest, from 0.
pub fn next_offset(log: &[KafkaRecord]) -> i64 {
    log.iter().map(|r| r.offset).max().map_or(0, |m| m + 1)
}

/// How many rows one publisher run takes at most (`LIMIT` in its SELECT).
pub const PUBLISH_BATCH: usize = 100;

/// Appends a record to the topic.
pub fn append(state: &mut Snapshot, key: &str, value: &str) {
    state.kafka.push(KafkaRecord {
        offset: next_offset(&state.kafka),
        key: key.to_owned(),
        value: value.to_owned(),
    });
}

/// A publish to the topic followed by the consumer's run with its inbox, as Trace A's
/// service does it.
pub fn publish_and_consume(state: &mut Snapshot, key: &str, value: &str) {
    append(state, key, value);
    *state = consume(state, true, ConsumerCrash::None).state;
}

/// The outbox rows a publisher's SELECT returns, in its order (`ORDER BY event_id`, byte
/// order), skipping the first `skip` (taken by another publisher).
fn unpublished(state: &Snapshot, skip: usize) -> Vec<OutboxRow> {
    let mut rows: Vec<OutboxRow> = state
        .outbox
        .iter()
        .filter(|r| r.published_at.is_none())
        .cloned()
        .collect();
    rows.sort_by(|a, b| a.event_id.cmp(&b.event_id));
    rows.into_iter().skip(skip).take(PUBLISH_BATCH).collect()
}

/// What a publisher run does to the tables, and which events it sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Publication {
    pub outcome: OutcomeId,
    pub state: Snapshot,
    pub sent: Vec<String>,
}

/// Sends `rows` and marks them (the mark's moment is unknowable: "now" stands for it).
fn send_and_mark(state: &mut Snapshot, rows: &[OutboxRow], mark: bool) -> Vec<String> {
    for row in rows {
        append(state, &row.aggregate_id, &row.payload);
        if mark && let Some(r) = state.outbox.iter_mut().find(|r| r.event_id == row.event_id) {
            r.published_at = Some(MARKED.to_owned());
        }
    }
    rows.iter().map(|r| r.event_id.clone()).collect()
}

/// The stand-in for `now()` in a predicted mark; snapshots compare marks by presence only.
pub const MARKED: &str = "now()";

/// "The service restarts; its publisher runs once" (lesson 8.3, previewed).
pub fn publish(before: &Snapshot, crash: PublisherCrash) -> Publication {
    publish_until(before, crash, 0)
}

/// A publisher run that stops at `crash` after row `row` (counted from 0; a one-shot run dies
/// at the first row). Every send committed on its own in the broker; every mark was the
/// transaction's, so a run that dies leaves none.
pub fn publish_until(before: &Snapshot, crash: PublisherCrash, row: usize) -> Publication {
    let rows = unpublished(before, 0);
    let mut state = before.clone();
    let row = row.min(rows.len().saturating_sub(1));
    let (outcome, sent) = if rows.is_empty() {
        (OutcomeId::NothingToPublish, Vec::new())
    } else {
        // Every send committed on its own in the broker; a mark only with the COMMIT.
        let sent = match crash {
            PublisherCrash::BeforeSend => Vec::new(),
            PublisherCrash::None => send_and_mark(&mut state, &rows, true),
            _ => send_and_mark(&mut state, &rows[..=row], false),
        };
        (crash.outcome(), sent)
    };
    Publication {
        outcome,
        state,
        sent,
    }
}

/// What a publisher held at `at` after row `row` sees through its own connection (`inside`:
/// its uncommitted marks too) and what another session sees (`outside`: committed sends only).
pub fn publisher_pause(before: &Snapshot, at: PublisherCrash, row: usize) -> (Snapshot, Snapshot) {
    let outside = publish_until(before, at, row).state;
    let marked = match at {
        PublisherCrash::BeforeSend | PublisherCrash::None => 0,
        PublisherCrash::AfterSend => row,
        PublisherCrash::AfterMark => row + 1,
    };
    let mut inside = outside.clone();
    for taken in unpublished(before, 0).iter().take(marked) {
        if let Some(r) = inside
            .outbox
            .iter_mut()
            .find(|r| r.event_id == taken.event_id)
        {
            r.published_at = Some(MARKED.to_owned());
        }
    }
    (inside, outside)
}

/// Two publishers at once: A takes its batch first; B takes the rows A did not (after
/// waiting for A's locks without SKIP LOCKED, and re-checking them), then A sends before B.
pub fn publish_race(before: &Snapshot, skip_locked: bool) -> (Publication, Vec<String>) {
    let a_rows = unpublished(before, 0);
    let b_rows = unpublished(before, a_rows.len());
    let mut state = before.clone();
    let a_sent = send_and_mark(&mut state, &a_rows, true);
    let b_sent = send_and_mark(&mut state, &b_rows, true);
    let outcome = match (a_rows.is_empty(), skip_locked) {
        (true, _) => OutcomeId::NothingToPublish,
        (false, true) => OutcomeId::PublishRaceSkipped,
        (false, false) => OutcomeId::PublishRaceWaited,
    };
    (
        Publication {
            outcome,
            state,
            sent: a_sent,
        },
        b_sent,
    )
}

/// What a consumer run does to the tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Consumption {
    pub outcome: OutcomeId,
    pub state: Snapshot,
    pub applied: Vec<String>,
    pub skipped: Vec<String>,
}

/// The History consumer reads the topic from its committed offset and applies each event,
/// with or without its inbox (lesson 8.4, previewed).
pub fn consume(before: &Snapshot, inbox: bool, crash: ConsumerCrash) -> Consumption {
    consume_until(before, inbox, crash, 0)
}

/// What the consumer does with each record past its offset, in order.
enum Handling {
    Apply(HistoryEntry),
    /// Its inbox says it was applied before.
    Skip(String),
}

/// The consumer's decisions for the records past its committed offset (an event that comes
/// twice in one poll is skipped the second time when there is an inbox).
fn handle(before: &Snapshot, inbox: bool) -> (usize, Vec<Handling>) {
    let records: Vec<&KafkaRecord> = before
        .kafka
        .iter()
        .filter(|r| r.offset >= before.consumer_offset)
        .collect();
    let mut seen = before.inbox.clone();
    let mut handling = Vec::new();
    for record in &records {
        let Some(entry) = parse_event(&record.value) else {
            continue;
        };
        if inbox && seen.contains(&entry.event_id) {
            handling.push(Handling::Skip(entry.event_id));
            continue;
        }
        seen.push(entry.event_id.clone());
        handling.push(Handling::Apply(entry));
    }
    (records.len(), handling)
}

/// Applies one event to `state`: History's line, and the inbox row when there is an inbox.
fn apply(state: &mut Snapshot, entry: &HistoryEntry, inbox: bool) {
    if inbox {
        state.inbox.push(entry.event_id.clone());
        state.inbox.sort();
    }
    state.history.push(entry.clone());
}

/// A consumer run that stops at `crash`; `before_commit` dies inside the transaction of the
/// `event`-th event it applies (from 0; a one-shot run dies at the first).
pub fn consume_until(
    before: &Snapshot,
    inbox: bool,
    crash: ConsumerCrash,
    event: usize,
) -> Consumption {
    let (records, handling) = handle(before, inbox);
    let mut state = before.clone();
    let (mut applied, mut skipped, mut doubled, mut died) = (Vec::new(), Vec::new(), false, false);
    for h in handling {
        match h {
            Handling::Skip(id) => skipped.push(id),
            Handling::Apply(_)
                if crash == ConsumerCrash::BeforeCommit && applied.len() == event =>
            {
                died = true;
                break;
            }
            Handling::Apply(entry) => {
                doubled |= state.history.iter().any(|h| h.event_id == entry.event_id);
                apply(&mut state, &entry, inbox);
                applied.push(entry.event_id);
            }
        }
    }
    died |= crash == ConsumerCrash::AfterApply;
    if !died {
        state.consumer_offset = next_offset(&before.kafka).max(before.consumer_offset);
    }
    let outcome = if records == 0 {
        OutcomeId::NothingToConsume
    } else if let Some(died) = crash.outcome().filter(|_| died) {
        died
    } else if doubled {
        OutcomeId::DuplicateApplied
    } else if !skipped.is_empty() {
        OutcomeId::DuplicateSkipped
    } else {
        OutcomeId::Consumed
    };
    Consumption {
        outcome,
        state,
        applied,
        skipped,
    }
}

/// What a consumer held at `at` sees through its own connection (`inside`, while an event's
/// transaction is open: that event's History line and inbox row too) and what another session
/// sees (`outside`).
pub fn consumer_pause(
    before: &Snapshot,
    inbox: bool,
    at: ConsumerCrash,
    event: usize,
) -> (Option<Snapshot>, Snapshot) {
    let outside = consume_until(before, inbox, at, event).state;
    if at != ConsumerCrash::BeforeCommit {
        return (None, outside);
    }
    let (_, handling) = handle(before, inbox);
    let held = handling
        .iter()
        .filter_map(|h| match h {
            Handling::Apply(entry) => Some(entry),
            Handling::Skip(_) => None,
        })
        .nth(event);
    let mut inside = outside.clone();
    if let Some(entry) = held {
        apply(&mut inside, entry, inbox);
    }
    (Some(inside), outside)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::names;

    #[test]
    fn the_lessons_payload_is_an_event_the_consumer_reads() {
        let e = parse_event(names::PAYLOAD).unwrap();
        assert_eq!(e.event_id, names::EVENT_ID);
        assert_eq!(e.to_status, names::STATUS_RESOLVED);
        assert!(parse_event("{not json").is_none());
        assert!(parse_event(r#"{"event_id":"x"}"#).is_none());
    }

    #[test]
    fn offsets_continue_and_history_ignores_a_redelivery() {
        let mut s = Snapshot::default();
        publish_and_consume(&mut s, names::TICKET_ID, names::PAYLOAD);
        publish_and_consume(&mut s, names::TICKET_ID, names::PAYLOAD);
        assert_eq!(s.kafka.iter().map(|r| r.offset).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(s.history.len(), 1);
        assert_eq!(s.consumer_offset, 2);
    }

    fn with_row() -> Snapshot {
        let mut s = Snapshot::default();
        s.outbox.push(OutboxRow {
            event_id: names::EVENT_ID.into(),
            aggregate_id: names::TICKET_ID.into(),
            payload: names::PAYLOAD.into(),
            published_at: None,
        });
        s
    }

    #[test]
    fn a_send_without_its_mark_is_sent_again_and_applied_once_with_the_inbox() {
        let crashed = publish(&with_row(), PublisherCrash::AfterSend);
        assert_eq!(crashed.outcome, OutcomeId::PublisherCrashedAfterSend);
        assert_eq!(crashed.state.outbox[0].published_at, None);
        let again = publish(&crashed.state, PublisherCrash::None);
        assert_eq!(again.outcome, OutcomeId::Published);
        assert_eq!(again.state.kafka.len(), 2);
        assert_eq!(again.state.kafka[0].value, again.state.kafka[1].value);
        assert_eq!(
            publish(&again.state, PublisherCrash::None).outcome,
            OutcomeId::NothingToPublish
        );

        let with_inbox = consume(&again.state, true, ConsumerCrash::None);
        assert_eq!(with_inbox.outcome, OutcomeId::DuplicateSkipped);
        assert_eq!(with_inbox.state.history.len(), 1);
        let without = consume(&again.state, false, ConsumerCrash::None);
        assert_eq!(without.outcome, OutcomeId::DuplicateApplied);
        assert_eq!(without.state.history.len(), 2);
    }

    #[test]
    fn a_consumer_that_dies_before_its_offset_reads_the_same_records_again() {
        let published = publish(&with_row(), PublisherCrash::None).state;
        let crashed = consume(&published, false, ConsumerCrash::AfterApply);
        assert_eq!(crashed.outcome, OutcomeId::ConsumerCrashedAfterApply);
        assert_eq!(crashed.state.consumer_offset, 0);
        let replay = consume(&crashed.state, false, ConsumerCrash::None);
        assert_eq!(replay.outcome, OutcomeId::DuplicateApplied);
        assert_eq!(replay.state.consumer_offset, 1);
        assert_eq!(
            consume(&replay.state, true, ConsumerCrash::None).outcome,
            OutcomeId::NothingToConsume
        );
    }

    #[test]
    fn two_publishers_send_each_row_once() {
        for skip_locked in [true, false] {
            let (a, b_sent) = publish_race(&with_row(), skip_locked);
            assert_eq!(a.sent, [names::EVENT_ID]);
            assert!(b_sent.is_empty());
            assert_eq!(a.state.kafka.len(), 1);
        }
    }
}
