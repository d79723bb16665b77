//! The simulated Kafka topic and History consumer, as pure functions: what a publish appends
//! and what the consumer makes of a record. The runner does the same on PostgreSQL through
//! connections of their own; the model uses these to predict it.

use serde::Deserialize;

use crate::outcome::{HistoryEntry, KafkaRecord, Snapshot};

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

/// A publish to the topic followed by the consumer's apply, as the model sees it.
pub fn publish_and_consume(state: &mut Snapshot, key: &str, value: &str) {
    state.kafka.push(KafkaRecord {
        offset: next_offset(&state.kafka),
        key: key.to_owned(),
        value: value.to_owned(),
    });
    if let Some(entry) = parse_event(value) {
        // The consumer keeps one entry per event_id (its inbox): a redelivery changes nothing.
        if !state.history.iter().any(|h| h.event_id == entry.event_id) {
            state.history.push(entry);
            state.history.sort_by(|a, b| a.event_id.cmp(&b.event_id));
        }
    }
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
    }
}
