//! After COMMIT (lessons 8.3 and 8.4, previewed) on a real PostgreSQL: the publisher's run and
//! its crashes, two publishers at once, the consumer with and without its inbox. Every
//! report is compared with the model and with the test's own read of the tables.

mod common;

use common::*;
use outbox_lab::broker::parse_event;
use outbox_lab::catalog::{ConsumerCrash, CrashPoint, Mode, OutcomeId, PublisherCrash, names};
use outbox_lab::input::{AttemptSpec, EventId, Mistakes, Payload};
use outbox_lab::pg::{Lab, SchemaName};
use outbox_lab::prediction::Prediction;
use outbox_lab::report::{AfterCommitRun, Report};
use outbox_lab::sql_trace::{Actor, Sent};
use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

/// The report agrees with the model and with the test's own SELECTs.
async fn checked(pool: &PgPool, sb: &SchemaName, r: Report) -> Report {
    assert_eq!(r.matches_model, Some(true), "model mismatch: {r:#?}");
    let seen = plain_snapshot(pool, sb).await.unwrap();
    assert_eq!(
        seen, r.snapshot,
        "the report's tables differ from a fresh read"
    );
    r
}

async fn committed(lab: &Lab, sb: &SchemaName, crash: CrashPoint) {
    let r = lab.attempt(sb, &attempt(crash)).await.unwrap();
    assert_eq!(r.outcome.and_then(|o| o.committed()), Some(true));
}

fn kafka_events(r: &Report) -> Vec<String> {
    r.snapshot
        .kafka
        .iter()
        .map(|k| parse_event(&k.value).expect("an event").event_id)
        .collect()
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn after_a_commit_then_crash_the_restarted_publisher_sends_the_row_once_and_marks_it(
    pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let pool = pool.connect_with(opts.clone()).await.unwrap();
    let (lab, sb) = lab_with_sandbox(opts).await;
    committed(&lab, &sb, CrashPoint::AfterCommit).await;
    let r = checked(
        &pool,
        &sb,
        lab.restart(&sb, PublisherCrash::None, &Prediction::none())
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.outcome, Some(OutcomeId::Published));
    let s = &r.snapshot;
    assert_eq!(s.kafka.len(), 1);
    assert_eq!(s.kafka[0].key, names::TICKET_ID);
    assert_eq!(
        s.kafka[0].value, s.outbox[0].payload,
        "the stored payload is sent"
    );
    let event = parse_event(&s.kafka[0].value).unwrap();
    assert_eq!(event.event_id, names::EVENT_ID);
    assert_eq!(event.to_status, names::STATUS_RESOLVED);
    assert!(s.outbox[0].published_at.is_some());
    // The publisher's statements are the lesson's: SKIP LOCKED, then the mark, then COMMIT.
    let sql: Vec<&str> = r
        .trace
        .iter()
        .filter(|t| t.actor == Actor::Publisher)
        .filter_map(|t| match &t.sent {
            Sent::Sql { sql, .. } => Some(sql.as_str()),
            _ => None,
        })
        .collect();
    assert!(sql[1].contains("FOR UPDATE SKIP LOCKED"), "{sql:?}");
    assert!(sql[2].starts_with("UPDATE outbox SET published_at = now()"));
    assert_eq!(sql.last(), Some(&"COMMIT"));
    let again = lab
        .restart(&sb, PublisherCrash::None, &Prediction::none())
        .await
        .unwrap();
    assert_eq!(again.outcome, Some(OutcomeId::NothingToPublish));
    assert_eq!(again.snapshot.kafka.len(), 1);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_publisher_dying_after_the_send_leaves_the_row_unmarked_and_the_next_run_sends_it_again(
    pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let pool = pool.connect_with(opts.clone()).await.unwrap();
    let (lab, sb) = lab_with_sandbox(opts).await;
    committed(&lab, &sb, CrashPoint::None).await;
    let r = checked(
        &pool,
        &sb,
        lab.restart(&sb, PublisherCrash::AfterSend, &Prediction::none())
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.outcome, Some(OutcomeId::PublisherCrashedAfterSend));
    assert_eq!(r.snapshot.kafka.len(), 1);
    assert_eq!(
        r.snapshot.outbox[0].published_at, None,
        "NULL, yet published"
    );
    // The crash was real: the publisher's backend is gone and PostgreSQL rolled its mark back.
    let pid = r
        .trace
        .iter()
        .find_map(|t| match t.sent {
            Sent::BackendGone { pid } => Some(pid),
            _ => None,
        })
        .expect("the backend's exit is on record");
    let alive: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)")
            .bind(pid)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert!(!alive);
    let r = checked(
        &pool,
        &sb,
        lab.restart(&sb, PublisherCrash::None, &Prediction::none())
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.outcome, Some(OutcomeId::Published));
    let s = &r.snapshot;
    assert_eq!(s.outbox.len(), 1);
    assert_eq!(s.kafka.len(), 2, "sent twice");
    assert_eq!(
        (&s.kafka[0].key, &s.kafka[0].value),
        (&s.kafka[1].key, &s.kafka[1].value)
    );
    assert_eq!(kafka_events(&r), [names::EVENT_ID, names::EVENT_ID]);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_publisher_dying_before_the_send_loses_nothing_and_its_locks_die_with_it(
    pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let pool = pool.connect_with(opts.clone()).await.unwrap();
    let (lab, sb) = lab_with_sandbox(opts).await;
    committed(&lab, &sb, CrashPoint::None).await;
    let r = checked(
        &pool,
        &sb,
        lab.restart(&sb, PublisherCrash::BeforeSend, &Prediction::none())
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.outcome, Some(OutcomeId::PublisherCrashedBeforeSend));
    assert!(r.snapshot.kafka.is_empty());
    assert_eq!(r.snapshot.outbox[0].published_at, None);
    // The row is free again: a plain SELECT … FOR UPDATE NOWAIT of the test's own gets it.
    let mut tx = pool.begin().await.unwrap();
    let locked: Vec<String> = sqlx::query_scalar(&format!(
        "SELECT event_id FROM {sb}.outbox WHERE published_at IS NULL FOR UPDATE NOWAIT"
    ))
    .fetch_all(&mut *tx)
    .await
    .unwrap();
    assert_eq!(locked, [names::EVENT_ID]);
    tx.rollback().await.unwrap();
    let r = lab
        .restart(&sb, PublisherCrash::None, &Prediction::none())
        .await
        .unwrap();
    assert_eq!(r.snapshot.kafka.len(), 1, "sent once, by the next run");
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn the_inbox_applies_a_duplicate_once_and_without_it_history_gets_it_twice(
    pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let pool = pool.connect_with(opts.clone()).await.unwrap();
    let lab = lab(opts).await;
    for inbox in [true, false] {
        let (_, sb) = lab.claim_sandbox().await.unwrap();
        committed(&lab, &sb, CrashPoint::None).await;
        lab.restart(&sb, PublisherCrash::AfterSend, &Prediction::none())
            .await
            .unwrap();
        lab.restart(&sb, PublisherCrash::None, &Prediction::none())
            .await
            .unwrap();
        let r = checked(
            &pool,
            &sb,
            lab.consume(&sb, inbox, ConsumerCrash::None, &Prediction::none())
                .await
                .unwrap(),
        )
        .await;
        let applied: Vec<&str> = r
            .snapshot
            .history
            .iter()
            .map(|h| h.event_id.as_str())
            .collect();
        if inbox {
            assert_eq!(r.outcome, Some(OutcomeId::DuplicateSkipped));
            assert_eq!(applied, [names::EVENT_ID]);
            assert_eq!(r.snapshot.inbox, [names::EVENT_ID]);
        } else {
            assert_eq!(r.outcome, Some(OutcomeId::DuplicateApplied));
            assert_eq!(applied, [names::EVENT_ID, names::EVENT_ID]);
            assert!(r.snapshot.inbox.is_empty());
        }
        assert_eq!(r.snapshot.consumer_offset, 2);
        let Some(AfterCommitRun::Consumer { applied, .. }) = &r.after_commit else {
            panic!("a consumer run: {r:#?}");
        };
        assert_eq!(applied.len(), if inbox { 1 } else { 2 });
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_consumer_dying_before_its_offset_gets_the_event_again(
    pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let pool = pool.connect_with(opts.clone()).await.unwrap();
    let lab = lab(opts).await;
    for inbox in [true, false] {
        let (_, sb) = lab.claim_sandbox().await.unwrap();
        committed(&lab, &sb, CrashPoint::None).await;
        lab.restart(&sb, PublisherCrash::None, &Prediction::none())
            .await
            .unwrap();
        let r = checked(
            &pool,
            &sb,
            lab.consume(&sb, inbox, ConsumerCrash::AfterApply, &Prediction::none())
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(r.outcome, Some(OutcomeId::ConsumerCrashedAfterApply));
        assert_eq!(r.snapshot.history.len(), 1);
        assert_eq!(
            r.snapshot.consumer_offset, 0,
            "the offset was never committed"
        );
        assert!(
            r.trace
                .iter()
                .any(|t| t.actor == Actor::Consumer && t.sent == Sent::ProcessCrashed)
        );
        let r = checked(
            &pool,
            &sb,
            lab.consume(&sb, inbox, ConsumerCrash::None, &Prediction::none())
                .await
                .unwrap(),
        )
        .await;
        let (outcome, lines) = if inbox {
            (OutcomeId::DuplicateSkipped, 1)
        } else {
            (OutcomeId::DuplicateApplied, 2)
        };
        assert_eq!(r.outcome, Some(outcome));
        assert_eq!(r.snapshot.history.len(), lines);
        assert_eq!(r.snapshot.consumer_offset, 1);
    }
}

async fn two_rows(lab: &Lab, sb: &SchemaName) {
    committed(lab, sb, CrashPoint::None).await;
    lab.reopen(sb).await.unwrap();
    let second = AttemptSpec {
        event_id: EventId::parse(names::RACE_B_EVENT_ID).unwrap(),
        payload: Payload::parse(names::RACE_B_PAYLOAD).unwrap(),
        ..attempt(CrashPoint::None)
    };
    let r = lab.attempt(sb, &second).await.unwrap();
    assert_eq!(r.snapshot.outbox.len(), 2);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn two_publishers_with_skip_locked_send_each_row_exactly_once_thirty_times(
    pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let pool = pool.connect_with(opts.clone()).await.unwrap();
    let (lab, sb) = lab_with_sandbox(opts).await;
    for round in 0..30 {
        lab.reset(&sb).await.unwrap();
        two_rows(&lab, &sb).await;
        let r = checked(&pool, &sb, lab.publish_race(&sb, true).await.unwrap()).await;
        assert_eq!(
            r.outcome,
            Some(OutcomeId::PublishRaceSkipped),
            "round {round}"
        );
        let mut sent = kafka_events(&r);
        sent.sort();
        assert_eq!(sent, [names::EVENT_ID, "event-ticket-901"], "round {round}");
        assert!(r.snapshot.outbox.iter().all(|o| o.published_at.is_some()));
        let Some(AfterCommitRun::PublishRace {
            a_sent,
            b_sent,
            lock_wait,
            ..
        }) = &r.after_commit
        else {
            panic!("a publish race: {r:#?}");
        };
        assert_eq!(a_sent.len() + b_sent.len(), 2);
        assert!(lock_wait.is_none(), "SKIP LOCKED never waits");
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn without_skip_locked_the_second_publisher_waits_then_finds_the_rows_marked(
    pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let pool = pool.connect_with(opts.clone()).await.unwrap();
    let (lab, sb) = lab_with_sandbox(opts).await;
    two_rows(&lab, &sb).await;
    let r = checked(&pool, &sb, lab.publish_race(&sb, false).await.unwrap()).await;
    assert_eq!(r.outcome, Some(OutcomeId::PublishRaceWaited));
    assert_eq!(r.snapshot.kafka.len(), 2);
    let Some(AfterCommitRun::PublishRace {
        a_sent,
        b_sent,
        lock_wait,
        ..
    }) = &r.after_commit
    else {
        panic!("a publish race: {r:#?}");
    };
    assert_eq!(a_sent.len(), 2);
    assert!(b_sent.is_empty(), "the re-checked rows were already marked");
    // PostgreSQL itself showed B waiting for A (pg_blocking_pids), not a guess.
    let seen = lock_wait.as_ref().expect("B was seen waiting");
    assert!(!seen.blocked_by.is_empty());
    assert!(
        r.trace
            .iter()
            .any(|t| matches!(t.sent, Sent::LockWait { .. }))
    );
    // B's SELECT was sent before the wait was seen and answered after it.
    let b_select = r
        .trace
        .iter()
        .find(|t| t.answered_us.is_some())
        .expect("B's waiting SELECT keeps both moments");
    assert!(b_select.at_us <= seen.at_us && b_select.answered_us.unwrap() >= seen.at_us);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn after_trace_a_dies_after_commit_a_restart_finds_nothing_to_publish(
    pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let pool = pool.connect_with(opts.clone()).await.unwrap();
    let (lab, sb) = lab_with_sandbox(opts).await;
    let naive = AttemptSpec::lesson(CrashPoint::AfterCommit)
        .with_way(Mode::Naive, Mistakes::none())
        .unwrap();
    let r = lab.attempt(&sb, &naive).await.unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::NaiveEventLost));
    let r = checked(
        &pool,
        &sb,
        lab.restart(&sb, PublisherCrash::None, &Prediction::none())
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(r.outcome, Some(OutcomeId::NothingToPublish));
    assert!(r.snapshot.kafka.is_empty() && r.snapshot.outbox.is_empty());
    assert_eq!(
        r.snapshot.ticket(names::TICKET_ID).unwrap().status,
        "resolved"
    );
}
