//! Side by side: the same attempt the outbox way and a wrong way, and what differs, in one
//! sentence (the sentence's id; its words live in the locale files).

use crate::catalog::{CrashPoint, Difference, Mistake, OutcomeId, Setup, names};
use crate::input::{AttemptSpec, Mistakes};
use crate::report::Report;
use crate::snapshot::Snapshot;

/// Where a comparison starts, so that the mistake has something to show: a missing guard
/// needs a ticket that is already resolved, `ON CONFLICT DO NOTHING` needs an event_id that
/// is already taken.
pub fn setup_for(mistakes: &Mistakes) -> Setup {
    if mistakes.has(Mistake::OnConflictDoNothing) {
        Setup::ResolvedThenReopened
    } else if mistakes.has(Mistake::UnguardedUpdate) && !mistakes.has(Mistake::NewEventIdOnRetry) {
        Setup::Resolved
    } else {
        Setup::Fresh
    }
}

/// The committed attempt that brings a fresh sandbox to `setup` (then a reopen, for
/// [`Setup::ResolvedThenReopened`]); none for a fresh start.
pub fn setup_attempt(setup: Setup, spec: &AttemptSpec) -> Option<AttemptSpec> {
    let mut earlier = AttemptSpec::lesson(CrashPoint::None);
    match setup {
        Setup::Fresh => None,
        Setup::Resolved => {
            earlier.event_id = crate::input::EventId::constant(names::EARLIER_EVENT_ID);
            earlier.payload = crate::input::Payload::constant(names::EARLIER_PAYLOAD);
            Some(earlier)
        }
        Setup::ResolvedThenReopened => {
            earlier.event_id = spec.event_id.clone();
            earlier.payload = spec.payload.clone();
            Some(earlier)
        }
    }
}

fn status(s: &Snapshot) -> Option<&str> {
    s.ticket(names::TICKET_ID).map(|t| t.status.as_str())
}

/// New outbox rows plus new Kafka records: the events an attempt added.
fn new_events(report: &Report) -> usize {
    let before = report.before.clone().unwrap_or_default();
    let s = &report.snapshot;
    s.outbox.len().saturating_sub(before.outbox.len())
        + s.kafka.len().saturating_sub(before.kafka.len())
}

/// What the wrong way left that the outbox way did not.
pub fn difference(outbox: &Report, wrong: &Report) -> Difference {
    let w = &wrong.snapshot;
    if outbox.snapshot == *w {
        return Difference::Same;
    }
    let w_before = wrong.before.clone().unwrap_or_default();
    let w_open = status(w) == Some(names::STATUS_OPEN);
    let new_kafka = w.kafka.len() > w_before.kafka.len();
    let new_rows = w.outbox.len() > w_before.outbox.len();
    let (events_w, events_o) = (new_events(wrong), new_events(outbox));
    let resolved_now =
        status(w) == Some(names::STATUS_RESOLVED) && status(&w_before) == Some(names::STATUS_OPEN);
    if w_open && new_kafka {
        Difference::PhantomEvent
    } else if w_open && new_rows {
        Difference::IntentWithoutStatus
    } else if resolved_now && events_w == 0 {
        if wrong.outcome == Some(OutcomeId::CommittedSilently) {
            Difference::HiddenReplay
        } else {
            Difference::StatusWithoutEvent
        }
    } else if events_w > events_o {
        Difference::ExtraEvent
    } else if new_kafka && events_w == events_o {
        Difference::PublishedDirectly
    } else {
        Difference::Other
    }
}
