//! The reference model: what the lesson says each action must do, as a pure function of the
//! state before it. The runner's real outcome is compared with this on every action.

use crate::catalog::{CommitFate, CrashPoint, OutcomeId, names};
use crate::input::AttemptSpec;
use crate::jsonb;
use crate::outcome::{Expected, OutboxRow, Snapshot, TicketRow};

/// The lesson's initial state: ticket-42 open, no outbox rows, nothing sent.
pub fn initial_state() -> Snapshot {
    Snapshot {
        tickets: vec![TicketRow {
            id: names::TICKET_ID.to_owned(),
            status: names::STATUS_OPEN.to_owned(),
        }],
        ..Snapshot::default()
    }
}

/// "Support reopens ticket-42": a separate committed UPDATE; outbox rows stay.
pub fn reopened(before: &Snapshot) -> Snapshot {
    let mut after = before.clone();
    for t in &mut after.tickets {
        if t.id == names::TICKET_ID {
            t.status = names::STATUS_OPEN.to_owned();
        }
    }
    after
}

/// The state after the lesson's transaction committed.
pub fn committed(before: &Snapshot, spec: &AttemptSpec, stored_payload: String) -> Snapshot {
    let mut after = before.clone();
    for t in &mut after.tickets {
        if t.id == names::TICKET_ID {
            t.status = names::STATUS_RESOLVED.to_owned();
        }
    }
    after.outbox.push(OutboxRow {
        event_id: spec.event_id.as_str().to_owned(),
        aggregate_id: names::TICKET_ID.to_owned(),
        payload: stored_payload,
        published_at: None,
    });
    normalise(&mut after);
    after
}

/// Orders rows the way snapshots are read (by primary key), so states compare by value.
pub fn normalise(s: &mut Snapshot) {
    s.tickets.sort_by(|a, b| a.id.cmp(&b.id));
    s.outbox.sort_by(|a, b| a.event_id.cmp(&b.event_id));
}

/// Predicts a resolve attempt from the state before it.
///
/// The order of the checks is the order of the lesson's function: the guard right after the
/// UPDATE, then the `after_update` stop, then the INSERT, the `after_insert` stop, COMMIT.
pub fn predict_attempt(before: &Snapshot, spec: &AttemptSpec) -> Expected {
    let unchanged = |outcome| Expected {
        outcome: Some(outcome),
        states: vec![before.clone()],
    };
    let open = before
        .ticket(names::TICKET_ID)
        .is_some_and(|t| t.status == names::STATUS_OPEN);
    if !open {
        return unchanged(OutcomeId::GuardRejected);
    }
    if spec.crash == CrashPoint::AfterUpdate {
        return unchanged(OutcomeId::CrashedAfterUpdate);
    }
    // PostgreSQL casts `$3::jsonb` while it builds the row, before the primary key's index
    // is checked: a bad payload fails first.
    let stored_payload = match jsonb::to_jsonb_text(spec.payload.as_str()) {
        Ok(text) => text,
        Err(_) => return unchanged(OutcomeId::InvalidPayload),
    };
    if before.outbox_row(spec.event_id.as_str()).is_some() {
        return unchanged(OutcomeId::InsertConflict);
    }
    let applied = committed(before, spec, stored_payload);
    match spec.crash {
        CrashPoint::None => Expected {
            outcome: Some(OutcomeId::Committed),
            states: vec![applied],
        },
        CrashPoint::AfterCommit => Expected {
            outcome: Some(OutcomeId::CommittedThenCrashed),
            states: vec![applied],
        },
        CrashPoint::AfterInsert => unchanged(OutcomeId::CrashedBeforeCommit),
        CrashPoint::CommitReplyLost => Expected {
            outcome: Some(OutcomeId::CommitUnknown),
            states: match spec.commit_fate {
                CommitFate::Applied => vec![applied],
                CommitFate::NotApplied => vec![before.clone()],
                CommitFate::Random => vec![applied, before.clone()],
            },
        },
        CrashPoint::AfterUpdate => unreachable!("handled before the INSERT"),
    }
}

/// Predicts reconciliation of an attempt from the state before that attempt. Reconciliation
/// only reads, so the tables must be what the attempt left. The model knows every outcome
/// but one: a lost COMMIT reply's fate, which it takes from PostgreSQL (`pg_committed`).
pub fn predict_reconcile(before: &Snapshot, spec: &AttemptSpec, pg_committed: bool) -> Expected {
    let mut spec = spec.clone();
    if spec.crash == CrashPoint::CommitReplyLost {
        spec.commit_fate = if pg_committed {
            CommitFate::Applied
        } else {
            CommitFate::NotApplied
        };
    }
    let attempt = predict_attempt(before, &spec);
    let committed = match attempt.outcome {
        Some(OutcomeId::CommitUnknown) => pg_committed,
        Some(outcome) => outcome.committed() == Some(true),
        None => false,
    };
    Expected {
        outcome: Some(if committed {
            OutcomeId::ReconciledCommitted
        } else {
            OutcomeId::ReconciledNotCommitted
        }),
        states: attempt.states,
    }
}

/// Predicts an action that moves the tables to one known state and has no outcome id.
pub fn predict_state(state: Snapshot) -> Expected {
    Expected {
        outcome: None,
        states: vec![state],
    }
}

/// Whether a real outcome and state are among the model's predictions.
pub fn matches(expected: &Expected, outcome: Option<OutcomeId>, actual: &Snapshot) -> bool {
    expected.outcome == outcome && expected.states.iter().any(|s| s == actual)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{EventId, Payload};

    fn attempt(crash: CrashPoint) -> AttemptSpec {
        AttemptSpec::lesson(crash)
    }

    #[test]
    fn the_lessons_failure_table_from_the_initial_state() {
        let s0 = initial_state();
        let cases = [
            (
                CrashPoint::AfterUpdate,
                OutcomeId::CrashedAfterUpdate,
                "open",
                0,
            ),
            (
                CrashPoint::AfterInsert,
                OutcomeId::CrashedBeforeCommit,
                "open",
                0,
            ),
            (
                CrashPoint::AfterCommit,
                OutcomeId::CommittedThenCrashed,
                "resolved",
                1,
            ),
            (CrashPoint::None, OutcomeId::Committed, "resolved", 1),
        ];
        for (crash, outcome, status, rows) in cases {
            let e = predict_attempt(&s0, &attempt(crash));
            assert_eq!(e.outcome, Some(outcome), "{crash}");
            assert_eq!(e.states.len(), 1);
            assert_eq!(e.states[0].ticket(names::TICKET_ID).unwrap().status, status);
            assert_eq!(e.states[0].outbox.len(), rows);
            if rows == 1 {
                assert_eq!(e.states[0].outbox[0].published_at, None);
                assert_eq!(e.states[0].outbox[0].event_id, names::EVENT_ID);
            }
        }
    }

    #[test]
    fn a_resolved_ticket_is_refused_by_the_guard_whatever_the_crash_point() {
        let resolved =
            predict_attempt(&initial_state(), &attempt(CrashPoint::None)).states[0].clone();
        for &crash in CrashPoint::ALL {
            let e = predict_attempt(&resolved, &attempt(crash));
            assert_eq!(e.outcome.unwrap(), OutcomeId::GuardRejected, "{crash}");
            assert_eq!(e.states, vec![resolved.clone()]);
        }
    }

    #[test]
    fn a_reopened_ticket_with_its_event_already_written_hits_the_primary_key() {
        let resolved =
            predict_attempt(&initial_state(), &attempt(CrashPoint::None)).states[0].clone();
        let reopened = reopened(&resolved);
        let e = predict_attempt(&reopened, &attempt(CrashPoint::None));
        assert_eq!(e.outcome.unwrap(), OutcomeId::InsertConflict);
        assert_eq!(e.states, vec![reopened.clone()]);
        // A crash after the UPDATE comes before the INSERT, so no conflict is reached.
        let e = predict_attempt(&reopened, &attempt(CrashPoint::AfterUpdate));
        assert_eq!(e.outcome.unwrap(), OutcomeId::CrashedAfterUpdate);
    }

    #[test]
    fn an_invalid_payload_is_refused_at_the_insert() {
        let mut spec = attempt(CrashPoint::None);
        spec.payload = Payload::parse("{not json").unwrap();
        let e = predict_attempt(&initial_state(), &spec);
        assert_eq!(e.outcome.unwrap(), OutcomeId::InvalidPayload);
        assert_eq!(e.states, vec![initial_state()]);
    }

    #[test]
    fn a_lost_commit_reply_allows_both_states_until_the_fate_is_known() {
        let mut spec = attempt(CrashPoint::CommitReplyLost);
        let e = predict_attempt(&initial_state(), &spec);
        assert_eq!(e.outcome.unwrap(), OutcomeId::CommitUnknown);
        assert_eq!(e.states.len(), 2);
        spec.commit_fate = CommitFate::NotApplied;
        assert_eq!(
            predict_attempt(&initial_state(), &spec).states,
            vec![initial_state()]
        );
    }

    #[test]
    fn a_new_event_id_after_a_reopen_writes_a_second_row() {
        let resolved =
            predict_attempt(&initial_state(), &attempt(CrashPoint::None)).states[0].clone();
        let mut spec = attempt(CrashPoint::None);
        spec.event_id = EventId::parse("event-ticket-901").unwrap();
        let e = predict_attempt(&reopened(&resolved), &spec);
        assert_eq!(e.outcome.unwrap(), OutcomeId::Committed);
        assert_eq!(e.states[0].outbox.len(), 2);
    }
}
