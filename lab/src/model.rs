//! The reference model: what the lesson says each action must do, as a pure function of the
//! state before it. The runner's real outcome is compared with this on every action.

use crate::broker;
use crate::catalog::{
    CommitFate, ConsumerCrash, CrashPoint, Mistake, Mode, OutcomeId, PublisherCrash, names,
};
use crate::input::{AttemptSpec, EventId, Mistakes, Payload};
use crate::report::{Expected, Possible};
use crate::snapshot::{OutboxRow, Snapshot, TicketRow};

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
    with_status(before, names::STATUS_OPEN)
}

/// The ticket's status changed to `status`.
fn with_status(before: &Snapshot, status: &str) -> Snapshot {
    let mut after = before.clone();
    for t in &mut after.tickets {
        if t.id == names::TICKET_ID {
            t.status = status.to_owned();
        }
    }
    after
}

/// The state with the attempt's outbox row added.
fn with_outbox_row(before: &Snapshot, spec: &AttemptSpec, stored_payload: &str) -> Snapshot {
    let mut after = before.clone();
    after.outbox.push(OutboxRow {
        event_id: spec.event_id.as_str().to_owned(),
        aggregate_id: names::TICKET_ID.to_owned(),
        payload: stored_payload.to_owned(),
        published_at: None,
    });
    normalise(&mut after);
    after
}

/// The state after the lesson's transaction committed.
pub fn committed(before: &Snapshot, spec: &AttemptSpec, stored_payload: String) -> Snapshot {
    with_outbox_row(
        &with_status(before, names::STATUS_RESOLVED),
        spec,
        &stored_payload,
    )
}

/// Orders rows the way snapshots are read (by primary key), so states compare by value.
pub fn normalise(s: &mut Snapshot) {
    s.tickets.sort_by(|a, b| a.id.cmp(&b.id));
    s.outbox.sort_by(|a, b| a.event_id.cmp(&b.event_id));
    // History keeps the order the consumer applied in, as the snapshot reads it.
    s.inbox.sort();
    s.kafka.sort_by_key(|r| r.offset);
}

fn is_open(s: &Snapshot) -> bool {
    s.ticket(names::TICKET_ID)
        .is_some_and(|t| t.status == names::STATUS_OPEN)
}

type Outcomes = Vec<(OutcomeId, Snapshot)>;

fn expected(outcomes: Outcomes) -> Expected {
    Expected {
        possible: outcomes
            .into_iter()
            .map(|(o, state)| Possible {
                outcome: Some(o),
                state,
            })
            .collect(),
    }
}

/// Predicts a resolve attempt from the state before it.
///
/// `stored_payload` is PostgreSQL's own answer for the attempt's payload (`lab.jsonb_text`,
/// asked as the action took the sandbox's lock): the text `payload::jsonb` stores and prints,
/// or `None` when PostgreSQL refuses the cast. The model does not imitate the cast: it takes
/// the answer as input and stays a function of its arguments.
///
/// The order of the checks is the order of the code: the guard right after the UPDATE, then
/// the `after_update` stop, then the INSERT (or the publish), its stop, COMMIT.
pub fn predict_attempt(
    before: &Snapshot,
    spec: &AttemptSpec,
    stored_payload: Option<&str>,
) -> Expected {
    expected(attempt_outcomes(before, spec, stored_payload))
}

fn attempt_outcomes(
    before: &Snapshot,
    spec: &AttemptSpec,
    stored_payload: Option<&str>,
) -> Outcomes {
    match spec.mode {
        Mode::Outbox => outbox_attempt(before, spec, stored_payload),
        Mode::Naive | Mode::NaivePublishFirst => naive_attempt(before, spec),
    }
}

/// Lesson 8.2's function, with the chosen mistakes.
fn outbox_attempt(before: &Snapshot, spec: &AttemptSpec, stored_payload: Option<&str>) -> Outcomes {
    let m = &spec.mistakes;
    let one = |o, s: &Snapshot| vec![(o, s.clone())];
    if spec.crash == CrashPoint::AfterBegin {
        return one(OutcomeId::CrashedAfterBegin, before);
    }
    let updates = if m.has(Mistake::UnguardedUpdate) {
        before.ticket(names::TICKET_ID).is_some()
    } else {
        is_open(before)
    };
    if !updates {
        return one(OutcomeId::GuardRejected, before);
    }
    let resolved = with_status(before, names::STATUS_RESOLVED);
    // An UPDATE through the pool committed on its own: a rollback no longer undoes it.
    let update_outside = m.has(Mistake::UpdateOutsideTx);
    let rolled_back = if update_outside { &resolved } else { before };
    let lost = |o| {
        if update_outside {
            OutcomeId::ChangeWithoutIntent
        } else {
            o
        }
    };
    if spec.crash == CrashPoint::AfterUpdate {
        return one(lost(OutcomeId::CrashedAfterUpdate), rolled_back);
    }
    // PostgreSQL casts `$3::jsonb` while it builds the row, before the primary key's index
    // is checked: a bad payload fails first.
    let Some(stored_payload) = stored_payload else {
        return one(lost(OutcomeId::InvalidPayload), rolled_back);
    };
    let conflict = before.outbox_row(spec.event_id.as_str()).is_some();
    if conflict && !m.has(Mistake::OnConflictDoNothing) {
        return one(lost(OutcomeId::InsertConflict), rolled_back);
    }
    let inserted = !conflict;
    let insert_outside = m.has(Mistake::InsertOutsideTx) && inserted;
    // What stays when the transaction does not commit: an INSERT through the pool committed
    // on its own.
    let not_committed = if insert_outside {
        with_outbox_row(rolled_back, spec, stored_payload)
    } else {
        rolled_back.clone()
    };
    let applied = if inserted {
        with_outbox_row(&resolved, spec, stored_payload)
    } else {
        resolved.clone()
    };
    match spec.crash {
        CrashPoint::AfterInsert if insert_outside => one(OutcomeId::OrphanIntent, &not_committed),
        CrashPoint::AfterInsert => one(lost(OutcomeId::CrashedBeforeCommit), &not_committed),
        CrashPoint::None if !inserted => one(OutcomeId::CommittedSilently, &applied),
        CrashPoint::None => one(OutcomeId::Committed, &applied),
        CrashPoint::AfterCommit => one(OutcomeId::CommittedThenCrashed, &applied),
        CrashPoint::CommitReplyLost => {
            let fates: &[(bool, &Snapshot)] = match spec.commit_fate {
                CommitFate::Applied => &[(true, &applied)],
                CommitFate::NotApplied => &[(false, &not_committed)],
                CommitFate::Random => &[(true, &applied), (false, &not_committed)],
            };
            fates
                .iter()
                .flat_map(|&(first_applied, state)| {
                    if m.has(Mistake::NewEventIdOnRetry) {
                        retry_outcomes(state, spec, stored_payload, first_applied)
                    } else {
                        one(OutcomeId::CommitUnknown, state)
                    }
                })
                .collect()
        }
        CrashPoint::AfterBegin | CrashPoint::AfterUpdate | CrashPoint::AfterPublish => {
            unreachable!("handled above, or refused by the input for this mode")
        }
    }
}

/// What a stepped transaction held at `at` shows: through its own connection (`None` once no
/// transaction is open), and through another session (committed data only, which is also what
/// a crash here leaves). `stored_payload` as for [`predict_attempt`].
pub fn predict_pause(
    before: &Snapshot,
    spec: &AttemptSpec,
    stored_payload: Option<&str>,
    at: CrashPoint,
) -> PauseViews {
    let at_crash = AttemptSpec {
        crash: at,
        ..spec.clone()
    };
    let first_state = |spec: &AttemptSpec| {
        attempt_outcomes(before, spec, stored_payload)
            .into_iter()
            .next()
            .map(|(_, s)| s)
            .unwrap_or_else(|| before.clone())
    };
    let outside = first_state(&at_crash);
    let inside = match at {
        CrashPoint::AfterBegin => Some(outside.clone()),
        CrashPoint::AfterUpdate => Some(with_status(&outside, names::STATUS_RESOLVED)),
        CrashPoint::AfterInsert | CrashPoint::AfterPublish => Some(first_state(&AttemptSpec {
            crash: CrashPoint::None,
            ..spec.clone()
        })),
        CrashPoint::AfterCommit | CrashPoint::None | CrashPoint::CommitReplyLost => None,
    };
    PauseViews { inside, outside }
}

/// The two views of a pause (see [`predict_pause`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PauseViews {
    pub inside: Option<Snapshot>,
    pub outside: Snapshot,
}

/// Another session runs the lesson's guarded UPDATE on `state` once nothing holds the row: it
/// changes one row if ticket-42 is still open. Returns the rows it changes and the state after.
pub fn other_writer(state: &Snapshot) -> (u64, Snapshot) {
    if is_open(state) {
        (1, with_status(state, names::STATUS_RESOLVED))
    } else {
        (0, state.clone())
    }
}

/// The client took an unknown COMMIT for a failure and runs the function again with a fresh
/// event_id (and the same payload).
fn retry_outcomes(
    state: &Snapshot,
    spec: &AttemptSpec,
    stored_payload: &str,
    first_applied: bool,
) -> Outcomes {
    outbox_attempt(state, &spec.fresh_id_retry(), Some(stored_payload))
        .into_iter()
        .map(|(o, s)| {
            let o = match o {
                OutcomeId::GuardRejected => OutcomeId::RetryRefused,
                OutcomeId::Committed | OutcomeId::CommittedSilently if first_applied => {
                    OutcomeId::RetryDuplicated
                }
                OutcomeId::Committed | OutcomeId::CommittedSilently => OutcomeId::RetryCommitted,
                other => other,
            };
            (o, s)
        })
        .collect()
}

/// Trace A: the status in the ticket database, the event straight to Kafka, no outbox.
fn naive_attempt(before: &Snapshot, spec: &AttemptSpec) -> Outcomes {
    let one = |o, s: Snapshot| vec![(o, s)];
    if spec.crash == CrashPoint::AfterBegin {
        return one(OutcomeId::CrashedAfterBegin, before.clone());
    }
    if !is_open(before) {
        return one(OutcomeId::GuardRejected, before.clone());
    }
    if spec.crash == CrashPoint::AfterUpdate {
        return one(OutcomeId::CrashedAfterUpdate, before.clone());
    }
    let publish = |s: &Snapshot| {
        let mut s = s.clone();
        broker::publish_and_consume(&mut s, names::TICKET_ID, spec.payload.as_str());
        s
    };
    match (spec.mode, spec.crash) {
        (Mode::Naive, CrashPoint::AfterCommit) => one(
            OutcomeId::NaiveEventLost,
            with_status(before, names::STATUS_RESOLVED),
        ),
        (Mode::Naive, _) => one(
            OutcomeId::NaivePublished,
            publish(&with_status(before, names::STATUS_RESOLVED)),
        ),
        (_, CrashPoint::AfterPublish) => one(OutcomeId::NaivePhantomEvent, publish(before)),
        _ => one(
            OutcomeId::NaivePublished,
            with_status(&publish(before), names::STATUS_RESOLVED),
        ),
    }
}

/// Predicts reconciliation of an attempt from the state before that attempt. Reconciliation
/// only reads, so the tables must be what the attempt left. The model knows every outcome
/// but one: a lost COMMIT reply's fate, which it takes from PostgreSQL (`pg_committed`).
///
/// `stored_payload` as for [`predict_attempt`]; `writer_after`: a stepped run's other writer
/// went on once the run had ended (the tables then hold its change too).
pub fn predict_reconcile(
    before: &Snapshot,
    spec: &AttemptSpec,
    stored_payload: Option<&str>,
    pg_committed: bool,
    writer_after: bool,
) -> Expected {
    let mut spec = spec.clone();
    let lost_reply = spec.crash == CrashPoint::CommitReplyLost;
    if lost_reply {
        spec.commit_fate = if pg_committed {
            CommitFate::Applied
        } else {
            CommitFate::NotApplied
        };
    }
    let possible = attempt_outcomes(before, &spec, stored_payload)
        .into_iter()
        .map(|(outcome, state)| {
            let committed = if lost_reply {
                pg_committed
            } else {
                outcome.committed() == Some(true)
            };
            let outcome = if committed {
                OutcomeId::ReconciledCommitted
            } else {
                OutcomeId::ReconciledNotCommitted
            };
            let state = if writer_after {
                other_writer(&state).1
            } else {
                state
            };
            Possible {
                outcome: Some(outcome),
                state,
            }
        })
        .collect();
    Expected { possible }
}

/// Predicts a race: B's UPDATE waits for A's row lock, so B runs on what A left.
/// `stored_payloads`: PostgreSQL's answers for A's and B's payloads (see [`race_specs`]), as
/// for [`predict_attempt`].
pub fn predict_race(
    before: &Snapshot,
    mistakes: &Mistakes,
    stored_payloads: [Option<&str>; 2],
) -> Expected {
    let (a, b) = race_specs(mistakes);
    let [stored_a, stored_b] = stored_payloads;
    let mut possible = Vec::new();
    for (oa, after_a) in outbox_attempt(before, &a, stored_a) {
        for (ob, after_b) in outbox_attempt(&after_a, &b, stored_b) {
            possible.push(Possible {
                outcome: Some(race_outcome(oa, ob)),
                state: after_b,
            });
        }
    }
    Expected { possible }
}

/// The two requests of a race: the lesson's event and a second request's own.
pub fn race_specs(mistakes: &Mistakes) -> (AttemptSpec, AttemptSpec) {
    let mut a = AttemptSpec::lesson(CrashPoint::None);
    a.mistakes = mistakes.clone();
    let mut b = a.clone();
    b.event_id = EventId::constant(names::RACE_B_EVENT_ID);
    b.payload = Payload::constant(names::RACE_B_PAYLOAD);
    (a, b)
}

/// How a race ended, by how many of its two transactions committed.
pub fn race_outcome(a: OutcomeId, b: OutcomeId) -> OutcomeId {
    let won = |o: OutcomeId| matches!(o, OutcomeId::Committed | OutcomeId::CommittedSilently);
    match (won(a), won(b)) {
        (true, true) => OutcomeId::RaceTwoWinners,
        (false, false) => OutcomeId::RaceNoWinner,
        _ => OutcomeId::RaceOneWinner,
    }
}

/// Predicts a publisher run after a restart.
pub fn predict_restart(before: &Snapshot, crash: PublisherCrash) -> Expected {
    let p = broker::publish(before, crash);
    Expected::one(Some(p.outcome), p.state)
}

/// Predicts two publishers at once.
pub fn predict_publish_race(before: &Snapshot, skip_locked: bool) -> Expected {
    let (p, _) = broker::publish_race(before, skip_locked);
    Expected::one(Some(p.outcome), p.state)
}

/// Predicts a History consumer run.
pub fn predict_consume(before: &Snapshot, inbox: bool, crash: ConsumerCrash) -> Expected {
    let c = broker::consume(before, inbox, crash);
    Expected::one(Some(c.outcome), c.state)
}

/// Predicts an action that moves the tables to one known state and has no outcome id.
pub fn predict_state(state: Snapshot) -> Expected {
    Expected::one(None, state)
}

/// Whether a real outcome and state are among the model's predictions.
pub fn matches(expected: &Expected, outcome: Option<OutcomeId>, actual: &Snapshot) -> bool {
    expected.allows(outcome, actual)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{EventId, Payload};

    fn attempt(crash: CrashPoint) -> AttemptSpec {
        AttemptSpec::lesson(crash)
    }

    /// Stands for PostgreSQL's answer for a payload it accepts: the model only copies the
    /// text into the outbox row, so these tests need no database to ask.
    const STORED: Option<&str> = Some(r#"{"stored": "as PostgreSQL prints it"}"#);

    fn predict(before: &Snapshot, spec: &AttemptSpec) -> Expected {
        predict_attempt(before, spec, STORED)
    }

    fn outcome(e: &Expected) -> OutcomeId {
        assert_eq!(e.possible.len(), 1, "{e:?}");
        e.possible[0].outcome.unwrap()
    }

    fn states(e: &Expected) -> Vec<Snapshot> {
        e.possible.iter().map(|p| p.state.clone()).collect()
    }

    fn way(crash: CrashPoint, mode: Mode, mistakes: &[Mistake]) -> AttemptSpec {
        attempt(crash)
            .with_way(mode, Mistakes::of(mistakes))
            .unwrap()
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
        for (crash, outcome_id, status, rows) in cases {
            let e = predict(&s0, &attempt(crash));
            assert_eq!(outcome(&e), outcome_id, "{crash}");
            let s = &e.possible[0].state;
            assert_eq!(s.ticket(names::TICKET_ID).unwrap().status, status);
            assert_eq!(s.outbox.len(), rows);
            assert!(s.kafka.is_empty() && s.history.is_empty());
            if rows == 1 {
                assert_eq!(s.outbox[0].published_at, None);
                assert_eq!(s.outbox[0].event_id, names::EVENT_ID);
            }
        }
    }

    #[test]
    fn a_resolved_ticket_is_refused_by_the_guard_whatever_the_later_crash_point() {
        let resolved = states(&predict(&initial_state(), &attempt(CrashPoint::None)))[0].clone();
        // A crash right after BEGIN comes before the guard: nothing is asked, nothing changes.
        let e = predict(&resolved, &attempt(CrashPoint::AfterBegin));
        assert_eq!(outcome(&e), OutcomeId::CrashedAfterBegin);
        assert_eq!(states(&e), vec![resolved.clone()]);
        for &crash in Mode::Outbox.crash_points() {
            if crash == CrashPoint::AfterBegin {
                continue;
            }
            let e = predict(&resolved, &attempt(crash));
            assert_eq!(outcome(&e), OutcomeId::GuardRejected, "{crash}");
            assert_eq!(states(&e), vec![resolved.clone()]);
        }
    }

    #[test]
    fn a_reopened_ticket_with_its_event_already_written_hits_the_primary_key() {
        let resolved = states(&predict(&initial_state(), &attempt(CrashPoint::None)))[0].clone();
        let reopened = reopened(&resolved);
        let e = predict(&reopened, &attempt(CrashPoint::None));
        assert_eq!(outcome(&e), OutcomeId::InsertConflict);
        assert_eq!(states(&e), vec![reopened.clone()]);
        // A crash after the UPDATE comes before the INSERT, so no conflict is reached.
        let e = predict(&reopened, &attempt(CrashPoint::AfterUpdate));
        assert_eq!(outcome(&e), OutcomeId::CrashedAfterUpdate);
    }

    #[test]
    fn an_invalid_payload_is_refused_at_the_insert() {
        let mut spec = attempt(CrashPoint::None);
        spec.payload = Payload::parse("{not json").unwrap();
        // PostgreSQL refuses the cast: its answer is `None`.
        let e = predict_attempt(&initial_state(), &spec, None);
        assert_eq!(outcome(&e), OutcomeId::InvalidPayload);
        assert_eq!(states(&e), vec![initial_state()]);
        // A crash before the INSERT comes first.
        let e = predict_attempt(&initial_state(), &attempt(CrashPoint::AfterUpdate), None);
        assert_eq!(outcome(&e), OutcomeId::CrashedAfterUpdate);
    }

    #[test]
    fn the_outbox_row_holds_postgresqls_text_of_the_payload() {
        let e = predict(&initial_state(), &attempt(CrashPoint::None));
        assert_eq!(outcome(&e), OutcomeId::Committed);
        assert_eq!(states(&e)[0].outbox[0].payload, STORED.unwrap());
    }

    #[test]
    fn a_lost_commit_reply_allows_both_states_until_the_fate_is_known() {
        let mut spec = attempt(CrashPoint::CommitReplyLost);
        let e = predict(&initial_state(), &spec);
        assert_eq!(e.possible.len(), 2);
        assert!(
            e.possible
                .iter()
                .all(|p| p.outcome == Some(OutcomeId::CommitUnknown))
        );
        spec.commit_fate = CommitFate::NotApplied;
        assert_eq!(
            states(&predict(&initial_state(), &spec)),
            vec![initial_state()]
        );
    }

    #[test]
    fn a_new_event_id_after_a_reopen_writes_a_second_row() {
        let resolved = states(&predict(&initial_state(), &attempt(CrashPoint::None)))[0].clone();
        let mut spec = attempt(CrashPoint::None);
        spec.event_id = EventId::parse("event-ticket-901").unwrap();
        let e = predict(&reopened(&resolved), &spec);
        assert_eq!(outcome(&e), OutcomeId::Committed);
        assert_eq!(states(&e)[0].outbox.len(), 2);
    }

    #[test]
    fn trace_a_loses_the_event_or_publishes_a_phantom() {
        let s0 = initial_state();
        let e = predict(&s0, &way(CrashPoint::AfterCommit, Mode::Naive, &[]));
        assert_eq!(outcome(&e), OutcomeId::NaiveEventLost);
        let s = &states(&e)[0];
        assert_eq!(s.ticket(names::TICKET_ID).unwrap().status, "resolved");
        assert!(s.outbox.is_empty() && s.kafka.is_empty() && s.history.is_empty());

        let e = predict(&s0, &way(CrashPoint::None, Mode::Naive, &[]));
        assert_eq!(outcome(&e), OutcomeId::NaivePublished);
        assert_eq!(states(&e)[0].kafka.len(), 1);
        assert_eq!(states(&e)[0].history[0].to_status, "resolved");

        let spec = way(CrashPoint::AfterPublish, Mode::NaivePublishFirst, &[]);
        let e = predict(&s0, &spec);
        assert_eq!(outcome(&e), OutcomeId::NaivePhantomEvent);
        let s = &states(&e)[0];
        assert_eq!(s.ticket(names::TICKET_ID).unwrap().status, "open");
        assert_eq!((s.kafka.len(), s.history.len()), (1, 1));
    }

    #[test]
    fn a_statement_outside_the_transaction_survives_its_rollback() {
        let s0 = initial_state();
        let e = predict(
            &s0,
            &way(
                CrashPoint::AfterInsert,
                Mode::Outbox,
                &[Mistake::InsertOutsideTx],
            ),
        );
        assert_eq!(outcome(&e), OutcomeId::OrphanIntent);
        let s = &states(&e)[0];
        assert_eq!(s.ticket(names::TICKET_ID).unwrap().status, "open");
        assert_eq!(s.outbox.len(), 1);

        let e = predict(
            &s0,
            &way(
                CrashPoint::AfterUpdate,
                Mode::Outbox,
                &[Mistake::UpdateOutsideTx],
            ),
        );
        assert_eq!(outcome(&e), OutcomeId::ChangeWithoutIntent);
        let s = &states(&e)[0];
        assert_eq!(s.ticket(names::TICKET_ID).unwrap().status, "resolved");
        assert!(s.outbox.is_empty());
    }

    #[test]
    fn without_the_guard_a_resolved_ticket_gets_a_second_event() {
        let resolved = states(&predict(&initial_state(), &attempt(CrashPoint::None)))[0].clone();
        let mut spec = way(CrashPoint::None, Mode::Outbox, &[Mistake::UnguardedUpdate]);
        spec.event_id = EventId::parse("event-ticket-901").unwrap();
        let e = predict(&resolved, &spec);
        assert_eq!(outcome(&e), OutcomeId::Committed);
        assert_eq!(states(&e)[0].outbox.len(), 2);
    }

    #[test]
    fn a_fresh_id_on_retry_is_saved_by_the_guard_and_doubled_without_it() {
        let mut spec = way(
            CrashPoint::CommitReplyLost,
            Mode::Outbox,
            &[Mistake::NewEventIdOnRetry],
        );
        spec.commit_fate = CommitFate::Applied;
        let e = predict(&initial_state(), &spec);
        assert_eq!(outcome(&e), OutcomeId::RetryRefused);
        assert_eq!(states(&e)[0].outbox.len(), 1);

        spec.mistakes = Mistakes::of(&[Mistake::NewEventIdOnRetry, Mistake::UnguardedUpdate]);
        let e = predict(&initial_state(), &spec);
        assert_eq!(outcome(&e), OutcomeId::RetryDuplicated);
        assert_eq!(states(&e)[0].outbox.len(), 2);

        spec.commit_fate = CommitFate::Random;
        let e = predict(&initial_state(), &spec);
        let mut outcomes: Vec<_> = e.possible.iter().map(|p| p.outcome.unwrap()).collect();
        outcomes.sort_by_key(|o| o.id());
        assert_eq!(
            outcomes,
            [OutcomeId::RetryCommitted, OutcomeId::RetryDuplicated]
        );
    }

    #[test]
    fn on_conflict_do_nothing_hides_a_replay_after_a_reopen() {
        let resolved = states(&predict(&initial_state(), &attempt(CrashPoint::None)))[0].clone();
        let reopened = reopened(&resolved);
        let spec = way(
            CrashPoint::None,
            Mode::Outbox,
            &[Mistake::OnConflictDoNothing],
        );
        let e = predict(&reopened, &spec);
        assert_eq!(outcome(&e), OutcomeId::CommittedSilently);
        assert_eq!(states(&e)[0], resolved);
    }

    #[test]
    fn a_race_has_one_winner_with_the_guard_and_two_without() {
        let e = predict_race(&initial_state(), &Mistakes::none(), [STORED; 2]);
        assert_eq!(outcome(&e), OutcomeId::RaceOneWinner);
        assert_eq!(states(&e)[0].outbox.len(), 1);
        let e = predict_race(
            &initial_state(),
            &Mistakes::of(&[Mistake::UnguardedUpdate]),
            [STORED; 2],
        );
        assert_eq!(outcome(&e), OutcomeId::RaceTwoWinners);
        assert_eq!(states(&e)[0].outbox.len(), 2);
    }
}
