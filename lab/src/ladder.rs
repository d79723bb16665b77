//! The guarantee ladder: what the tables show each part of the pattern has achieved, rung by
//! rung — the intent stored (8.2), delivered at least once (8.3), applied once (8.4).

use crate::broker::parse_event;
use crate::catalog::Rung;
use crate::snapshot::Snapshot;

/// Whether the sandbox's tables stand on each rung, lowest first. A rung counts only when the
/// one below it does: delivery means nothing without a stored intent.
pub fn climbed(s: &Snapshot) -> Vec<(Rung, bool)> {
    let intent = !s.outbox.is_empty();
    // What the publisher sends is the stored payload itself.
    let delivered = intent
        && s.outbox
            .iter()
            .all(|row| s.kafka.iter().any(|k| k.value == row.payload));
    let applied_once = delivered
        && s.outbox.iter().all(|row| {
            parse_event(&row.payload).is_some_and(|e| {
                s.history
                    .iter()
                    .filter(|h| h.event_id == e.event_id)
                    .count()
                    == 1
            })
        });
    vec![
        (Rung::IntentStored, intent),
        (Rung::DeliveredAtLeastOnce, delivered),
        (Rung::AppliedOnce, applied_once),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broker::{consume, publish};
    use crate::catalog::{ConsumerCrash, CrashPoint, PublisherCrash};
    use crate::input::AttemptSpec;
    use crate::model;

    fn reached(s: &Snapshot) -> Vec<bool> {
        climbed(s).into_iter().map(|(_, r)| r).collect()
    }

    #[test]
    fn each_part_of_the_pattern_climbs_one_rung_and_a_double_apply_falls_off_the_top() {
        let s0 = model::initial_state();
        assert_eq!(reached(&s0), [false, false, false]);
        // The rungs read the event in the stored text, not its layout: the lesson's payload as
        // written stands for PostgreSQL's text of it.
        let stored = Some(crate::catalog::names::PAYLOAD);
        let committed = model::predict_attempt(&s0, &AttemptSpec::lesson(CrashPoint::None), stored)
            .possible[0]
            .state
            .clone();
        assert_eq!(reached(&committed), [true, false, false]);
        let sent_twice = publish(
            &publish(&committed, PublisherCrash::AfterSend).state,
            PublisherCrash::None,
        )
        .state;
        assert_eq!(reached(&sent_twice), [true, true, false]);
        let once = consume(&sent_twice, true, ConsumerCrash::None).state;
        assert_eq!(reached(&once), [true, true, true]);
        let twice = consume(&sent_twice, false, ConsumerCrash::None).state;
        assert_eq!(reached(&twice), [true, true, false]);
    }
}
