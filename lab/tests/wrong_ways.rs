//! Trace A, the classic mistakes, the race and the comparison, on a real PostgreSQL, each
//! compared with the reference model.

mod common;

use common::*;
use outbox_lab::catalog::{
    CommitFate, CrashPoint, Difference, Mistake, Mode, OutcomeId, Setup, WRONG_WAYS, names,
};
use outbox_lab::input::{AttemptSpec, EventId, Mistakes};
use outbox_lab::report::Report;
use outbox_lab::sql_trace::{Actor, Lane, Sent};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

fn way(crash: CrashPoint, mode: Mode, mistakes: &[Mistake]) -> AttemptSpec {
    AttemptSpec::lesson(crash)
        .with_way(mode, Mistakes::of(mistakes))
        .expect("a valid way")
}

fn status(r: &Report) -> &str {
    &r.snapshot
        .ticket(names::TICKET_ID)
        .expect("ticket-42")
        .status
}

fn assert_model(r: &Report) {
    assert_eq!(r.matches_model, Some(true), "model mismatch: {r:#?}");
}

/// (outbox rows, Kafka records, History entries)
fn counts(r: &Report) -> (usize, usize, usize) {
    let s = &r.snapshot;
    (s.outbox.len(), s.kafka.len(), s.history.len())
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn trace_a_after_commit_loses_the_event_and_leaves_nothing_owed(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let r = lab
        .attempt(&sb, &way(CrashPoint::AfterCommit, Mode::Naive, &[]))
        .await
        .unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::NaiveEventLost));
    assert_eq!(status(&r), "resolved");
    assert_eq!(counts(&r), (0, 0, 0));
    assert!(r.trace.iter().any(|s| s.sent == Sent::ProcessCrashed));
    assert_model(&r);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn trace_a_without_a_crash_publishes_through_the_brokers_own_commit(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let r = lab
        .attempt(&sb, &way(CrashPoint::None, Mode::Naive, &[]))
        .await
        .unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::NaivePublished));
    assert_eq!(counts(&r), (0, 1, 1));
    assert_eq!(r.snapshot.kafka[0].key, names::TICKET_ID);
    assert_eq!(r.snapshot.history[0].to_status, "resolved");
    // The broker, the consumer (its poll, then its apply) and the broker again (the
    // consumer's offset) each commit on their own, after the ticket's COMMIT.
    let commits: Vec<Actor> = r
        .trace
        .iter()
        .filter(|s| matches!(&s.sent, Sent::Sql { sql, .. } if sql == "COMMIT"))
        .map(|s| s.actor)
        .collect();
    assert_eq!(
        commits,
        [
            Actor::Service,
            Actor::Broker,
            Actor::Consumer,
            Actor::Consumer,
            Actor::Broker
        ]
    );
    assert_eq!(r.snapshot.inbox, [names::EVENT_ID]);
    assert_eq!(r.snapshot.consumer_offset, 1);
    assert_model(&r);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn publishing_first_and_crashing_before_commit_leaves_a_phantom_event(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let spec = way(CrashPoint::AfterPublish, Mode::NaivePublishFirst, &[]);
    let r = lab.attempt(&sb, &spec).await.unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::NaivePhantomEvent));
    assert_eq!(status(&r), "open");
    assert_eq!(counts(&r), (0, 1, 1));
    assert!(
        r.trace
            .iter()
            .any(|s| matches!(s.sent, Sent::BackendGone { .. }))
    );
    assert_model(&r);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn an_insert_outside_the_transaction_survives_its_rollback(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let spec = way(
        CrashPoint::AfterInsert,
        Mode::Outbox,
        &[Mistake::InsertOutsideTx],
    );
    let r = lab.attempt(&sb, &spec).await.unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::OrphanIntent));
    assert_eq!(status(&r), "open");
    assert_eq!(counts(&r), (1, 0, 0));
    assert!(r.trace.iter().any(|s| s.actor == Actor::ServicePool));
    assert_model(&r);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn an_update_outside_the_transaction_reopens_trace_as_hole(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let spec = way(
        CrashPoint::AfterUpdate,
        Mode::Outbox,
        &[Mistake::UpdateOutsideTx],
    );
    let r = lab.attempt(&sb, &spec).await.unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::ChangeWithoutIntent));
    assert_eq!(status(&r), "resolved");
    assert_eq!(counts(&r), (0, 0, 0));
    assert_model(&r);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn without_the_guard_a_second_attempt_succeeds_again(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    let mut spec = way(CrashPoint::None, Mode::Outbox, &[Mistake::UnguardedUpdate]);
    spec.event_id = EventId::parse("event-ticket-901").unwrap();
    let r = lab.attempt(&sb, &spec).await.unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::Committed));
    assert_eq!(counts(&r), (2, 0, 0));
    assert_model(&r);
    // The lesson's guard refuses the same second attempt.
    lab.reset(&sb).await.unwrap();
    lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    let mut guarded = attempt(CrashPoint::None);
    guarded.event_id = EventId::parse("event-ticket-901").unwrap();
    let r = lab.attempt(&sb, &guarded).await.unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::GuardRejected));
    assert_eq!(counts(&r), (1, 0, 0));
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_fresh_event_id_on_retry_is_saved_by_the_guard_and_doubles_without_it(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let retry = |fate, mistakes: &[Mistake]| {
        let mut s = way(CrashPoint::CommitReplyLost, Mode::Outbox, mistakes);
        s.commit_fate = fate;
        s
    };
    let r = lab
        .attempt(
            &sb,
            &retry(CommitFate::Applied, &[Mistake::NewEventIdOnRetry]),
        )
        .await
        .unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::RetryRefused));
    assert_eq!(counts(&r), (1, 0, 0));
    assert!(
        r.trace
            .iter()
            .any(|s| matches!(s.sent, Sent::RetryWithNewId { .. }))
    );
    assert_model(&r);

    lab.reset(&sb).await.unwrap();
    let both = [Mistake::NewEventIdOnRetry, Mistake::UnguardedUpdate];
    let r = lab
        .attempt(&sb, &retry(CommitFate::Applied, &both))
        .await
        .unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::RetryDuplicated));
    assert_eq!(counts(&r), (2, 0, 0));
    assert_model(&r);

    lab.reset(&sb).await.unwrap();
    let r = lab
        .attempt(&sb, &retry(CommitFate::NotApplied, &both))
        .await
        .unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::RetryCommitted));
    assert_eq!(r.snapshot.outbox[0].event_id, "event-ticket-900-retry");
    assert_model(&r);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn on_conflict_do_nothing_hides_a_replay_after_a_reopen(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let first = lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    lab.reopen(&sb).await.unwrap();
    let spec = way(
        CrashPoint::None,
        Mode::Outbox,
        &[Mistake::OnConflictDoNothing],
    );
    let r = lab.attempt(&sb, &spec).await.unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::CommittedSilently));
    assert_eq!(status(&r), "resolved");
    assert_eq!(r.snapshot.outbox, first.snapshot.outbox);
    assert_model(&r);
}

/// How many races the test runs; the soak command raises it.
fn race_runs() -> usize {
    std::env::var("RACE_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30)
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_race_with_the_guard_always_has_exactly_one_winner(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    for run in 0..race_runs() {
        lab.reset(&sb).await.unwrap();
        let r = lab.race(&sb, &Mistakes::none()).await.unwrap();
        assert_eq!(r.outcome, Some(OutcomeId::RaceOneWinner), "run {run}");
        let race = r.race.as_ref().expect("a race report");
        assert_eq!(
            (race.a, race.b),
            (OutcomeId::Committed, OutcomeId::GuardRejected)
        );
        assert_eq!(counts(&r), (1, 0, 0), "run {run}");
        assert_eq!(r.snapshot.outbox[0].event_id, names::EVENT_ID);
        // B was seen waiting for A's lock, and A's backend was the one blocking it.
        let wait = race.lock_wait.as_ref().expect("B's lock wait was seen");
        let a_pid = r
            .trace
            .iter()
            .find_map(|s| match (&s.sent, &s.answer, s.lane) {
                (
                    Sent::Sql { sql, .. },
                    outbox_lab::sql_trace::Answer::Values { values },
                    Some(Lane::A),
                ) if sql.contains("pg_backend_pid") => {
                    values.get(1).and_then(|v| v.parse::<i32>().ok())
                }
                _ => None,
            })
            .expect("A's backend pid in the trace");
        assert_eq!(wait.blocked_by, vec![a_pid], "run {run}");
        assert!(
            r.trace
                .iter()
                .any(|s| s.lane == Some(Lane::B) && matches!(s.sent, Sent::LockWait { .. }))
        );
        assert_model(&r);
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_race_without_the_guard_has_two_winners_and_two_events(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let unguarded = Mistakes::of(&[Mistake::UnguardedUpdate]);
    for run in 0..race_runs().div_ceil(3) {
        lab.reset(&sb).await.unwrap();
        let r = lab.race(&sb, &unguarded).await.unwrap();
        assert_eq!(r.outcome, Some(OutcomeId::RaceTwoWinners), "run {run}");
        assert_eq!(counts(&r), (2, 0, 0));
        assert!(r.race.as_ref().unwrap().lock_wait.is_some());
        assert_model(&r);
    }
    // On a ticket nobody can resolve, nobody wins.
    let r = lab.race(&sb, &Mistakes::none()).await.unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::RaceNoWinner));
    assert_model(&r);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn every_wrong_way_compares_with_the_outbox_in_sandboxes_of_their_own(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, main) = lab_with_sandbox(opts).await;
    let before = lab.snapshot(&main).await.unwrap();
    let known = [
        (
            Mode::Naive,
            &[][..],
            CrashPoint::AfterCommit,
            Difference::StatusWithoutEvent,
        ),
        (
            Mode::NaivePublishFirst,
            &[][..],
            CrashPoint::AfterPublish,
            Difference::PhantomEvent,
        ),
        (
            Mode::Naive,
            &[][..],
            CrashPoint::None,
            Difference::PublishedDirectly,
        ),
        (
            Mode::Outbox,
            &[Mistake::InsertOutsideTx][..],
            CrashPoint::AfterInsert,
            Difference::IntentWithoutStatus,
        ),
        (
            Mode::Outbox,
            &[Mistake::UpdateOutsideTx][..],
            CrashPoint::AfterUpdate,
            Difference::StatusWithoutEvent,
        ),
        (
            Mode::Outbox,
            &[Mistake::UnguardedUpdate][..],
            CrashPoint::None,
            Difference::ExtraEvent,
        ),
        (
            Mode::Outbox,
            &[Mistake::OnConflictDoNothing][..],
            CrashPoint::None,
            Difference::HiddenReplay,
        ),
        (
            Mode::Outbox,
            &[Mistake::UnguardedUpdate, Mistake::NewEventIdOnRetry][..],
            CrashPoint::CommitReplyLost,
            Difference::ExtraEvent,
        ),
        (
            Mode::Outbox,
            &[Mistake::NewEventIdOnRetry][..],
            CrashPoint::CommitReplyLost,
            Difference::Same,
        ),
    ];
    for (mode, mistakes, crash, difference) in known {
        let mut spec = way(crash, mode, mistakes);
        spec.commit_fate = CommitFate::Applied;
        let c = lab.compare(&main, &spec).await.unwrap();
        assert_eq!(
            c.difference, difference,
            "{mode} {mistakes:?} {crash}: {c:#?}"
        );
        assert_model(&c.outbox);
        assert_model(&c.wrong);
        assert_ne!(c.outbox.sandbox, c.wrong.sandbox);
        assert_ne!(c.outbox.sandbox, main.to_string());
    }
    // Every offered way runs at each of its crash points.
    for (mode, mistakes) in WRONG_WAYS {
        for &crash in mode.crash_points() {
            let spec = way(crash, *mode, mistakes);
            let c = lab.compare(&main, &spec).await.unwrap();
            assert_model(&c.outbox);
            assert_model(&c.wrong);
        }
    }
    let c = lab
        .compare(
            &main,
            &way(CrashPoint::None, Mode::Outbox, &[Mistake::UnguardedUpdate]),
        )
        .await
        .unwrap();
    assert_eq!(c.setup, Setup::Resolved);
    // The learner's own sandbox is untouched, and the last comparison is kept.
    assert_eq!(lab.snapshot(&main).await.unwrap(), before);
    assert_eq!(lab.last_compare(&main).await.unwrap(), Some(c));
}
