//! Quests on a real PostgreSQL: each reached by its intended route, judged from the tables
//! PostgreSQL returned (and checked again with the test's own SELECTs), near misses refused
//! with the check that failed, and the author's counts equal to a count the test makes itself.

mod common;

use common::*;
use outbox_lab::catalog::{CommitFate, ConsumerCrash, CrashPoint, Mistake, Mode, PublisherCrash};
use outbox_lab::input::{AttemptSpec, Mistakes};
use outbox_lab::pg::{Lab, LabError, SchemaName};
use outbox_lab::prediction::{Prediction, PredictionFields};
use outbox_lab::quest::judge::holds;
use outbox_lab::quest::{Condition, QuestState};
use outbox_lab::report::Report;
use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

async fn state(lab: &Lab, sb: &SchemaName, id: &str) -> QuestState {
    lab.quests(Some(sb))
        .await
        .unwrap()
        .into_iter()
        .find(|q| q.id == id)
        .unwrap()
}

/// The checks of the quest's last stage that `report` failed, by their English sentence.
fn failed(lab: &Lab, id: &str, report: &Report) -> Vec<String> {
    let quest = lab.quest(id).unwrap();
    let stage = quest.stages.last().unwrap();
    stage
        .checks
        .iter()
        .filter(|c| !holds(&c.condition, report))
        .map(|c| c.says.en.clone())
        .collect()
}

/// The report's table checks hold on the tables read again by the test's own SELECTs: the
/// judgement read what PostgreSQL holds.
async fn table_checks_hold_on_plain_tables(
    pool: &PgPool,
    lab: &Lab,
    sb: &SchemaName,
    id: &str,
    report: &Report,
) {
    let plain = plain_snapshot(pool, sb).await.unwrap();
    let mut again = report.clone();
    again.snapshot = plain;
    for stage in &lab.quest(id).unwrap().stages {
        for check in &stage.checks {
            if matches!(check.condition, Condition::Rows { .. }) {
                assert_eq!(
                    holds(&check.condition, report),
                    holds(&check.condition, &again),
                    "{id}: {}",
                    check.says.en
                );
            }
        }
    }
}

fn trace_a() -> AttemptSpec {
    AttemptSpec {
        mode: Mode::Naive,
        ..attempt(CrashPoint::None)
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn status_without_intent_is_reached_by_trace_a_and_never_by_the_outbox_way(
    pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let _ = pool;
    let (lab, sb) = lab_with_sandbox(opts.clone()).await;
    let db = PgPool::connect_with(opts).await.unwrap();
    const ID: &str = "status_without_intent";

    // Near miss: the outbox way resolves the ticket *with* its outbox row. Tries stop counting
    // at the dead end's three.
    for _ in 0..4 {
        lab.reset(&sb).await.unwrap();
        let r = lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
        assert_eq!(
            failed(&lab, ID, &r),
            vec!["the outbox has no row for ticket-42"]
        );
    }
    let s = state(&lab, &sb, ID).await;
    assert!(!s.reached);
    assert_eq!(
        s.tries, 3,
        "three outbox attempts count towards the dead end"
    );

    lab.reset(&sb).await.unwrap();
    let r = lab.attempt(&sb, &trace_a()).await.unwrap();
    assert!(failed(&lab, ID, &r).is_empty());
    table_checks_hold_on_plain_tables(&db, &lab, &sb, ID, &r).await;
    let s = state(&lab, &sb, ID).await;
    assert!(s.reached);
    assert_eq!(s.tries, 3, "a reached quest counts no more tries");

    // Reaching it again changes nothing, so its row is not written again (same xmin).
    let version = || async {
        sqlx::query_scalar::<_, String>(
            "SELECT xmin::text FROM lab.quest_progress WHERE schema_name = $1 AND quest = $2",
        )
        .bind(sb.as_str())
        .bind(ID)
        .fetch_one(&db)
        .await
        .unwrap()
    };
    let before = version().await;
    lab.reset(&sb).await.unwrap();
    lab.attempt(&sb, &trace_a()).await.unwrap();
    assert_eq!(version().await, before);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn unsure_then_proven_needs_the_lost_reply_first_then_a_reconciliation(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    const ID: &str = "unsure_then_proven";
    // A reconciliation of an attempt whose reply came is not the quest's second stage alone:
    // the stages go in order.
    lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    lab.reconcile(&sb).await.unwrap();
    let s = state(&lab, &sb, ID).await;
    assert_eq!((s.stage, s.reached), (0, false));

    for fate in [CommitFate::Applied, CommitFate::NotApplied] {
        lab.reset(&sb).await.unwrap();
        lab.attempt(&sb, &lost_reply(fate)).await.unwrap();
        let s = state(&lab, &sb, ID).await;
        assert!(s.stage >= 1, "{fate:?}: the lost reply is the first stage");
        let r = lab.reconcile(&sb).await.unwrap();
        assert!(r.reconciliation.is_some());
        assert!(state(&lab, &sb, ID).await.reached, "{fate:?}");
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn history_twice_and_the_repeat_applied_once_split_on_the_inbox(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    for inbox in [false, true] {
        let (lab, sb) = lab_with_sandbox(opts.clone()).await;
        lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
        lab.restart(&sb, PublisherCrash::AfterSend, &Prediction::none())
            .await
            .unwrap();
        lab.restart(&sb, PublisherCrash::None, &Prediction::none())
            .await
            .unwrap();
        let r = lab
            .consume(&sb, inbox, ConsumerCrash::None, &Prediction::none())
            .await
            .unwrap();
        let twice = state(&lab, &sb, "history_twice").await.reached;
        let once = state(&lab, &sb, "repeat_applied_once").await.reached;
        assert_eq!((twice, once), (!inbox, inbox), "inbox {inbox}");
        if inbox {
            assert_eq!(
                failed(&lab, "history_twice", &r),
                vec!["History holds event-ticket-900 at least twice"]
            );
        }
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn writer_waits_then_zero_is_reached_by_stepping_to_commit(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let r = stepped_with_writer(&lab, &sb, false).await;
    let waiter = r.stepped.as_ref().and_then(|s| s.waiter.as_ref()).unwrap();
    assert!(!waiter.waited_behind.is_empty());
    assert_eq!(waiter.rows, Some(0));
    assert!(state(&lab, &sb, "writer_waits_then_zero").await.reached);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn commit_not_kafka_two_winners_crash_phantom_and_guard_by_their_routes(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    // A lost reply applied leaves the same tables, but nobody was told COMMIT happened.
    let r = lab
        .attempt(&sb, &lost_reply(CommitFate::Applied))
        .await
        .unwrap();
    assert_eq!(
        failed(&lab, "commit_not_kafka", &r),
        vec!["COMMIT was answered OK"]
    );
    // Trace A publishes right after its COMMIT.
    lab.reset(&sb).await.unwrap();
    let r = lab.attempt(&sb, &trace_a()).await.unwrap();
    assert!(
        failed(&lab, "commit_not_kafka", &r)
            .contains(&"kafka_log holds no event-ticket-900".to_owned())
    );
    // The crash right after COMMIT: confirmed, and nothing went to Kafka.
    lab.reset(&sb).await.unwrap();
    lab.attempt(&sb, &attempt(CrashPoint::AfterCommit))
        .await
        .unwrap();
    assert!(state(&lab, &sb, "commit_not_kafka").await.reached);

    // The next attempt finds ticket-42 resolved: the guard changes nothing.
    let r = lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    assert!(
        failed(&lab, "guard_zero_rows", &r).is_empty(),
        "{:?}",
        failed(&lab, "guard_zero_rows", &r)
    );
    assert!(state(&lab, &sb, "guard_zero_rows").await.reached);

    lab.reset(&sb).await.unwrap();
    let r = lab.race(&sb, &Mistakes::none()).await.unwrap();
    assert!(
        !failed(&lab, "two_winners", &r).is_empty(),
        "the guarded race has one winner"
    );
    lab.reset(&sb).await.unwrap();
    lab.race(&sb, &Mistakes::of(&[Mistake::UnguardedUpdate]))
        .await
        .unwrap();
    assert!(state(&lab, &sb, "two_winners").await.reached);

    lab.reset(&sb).await.unwrap();
    lab.attempt(&sb, &attempt(CrashPoint::AfterUpdate))
        .await
        .unwrap();
    assert!(state(&lab, &sb, "crash_leaves_nothing").await.reached);

    lab.reset(&sb).await.unwrap();
    let phantom = AttemptSpec {
        mode: Mode::NaivePublishFirst,
        ..attempt(CrashPoint::AfterPublish)
    };
    lab.attempt(&sb, &phantom).await.unwrap();
    assert!(state(&lab, &sb, "phantom_event").await.reached);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn hints_fade_in_one_at_a_time_and_answers_wait_for_the_goal(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    const ID: &str = "commit_not_kafka";
    for want in [1, 2, 3, 3] {
        assert_eq!(lab.quest_hint(&sb, ID).await.unwrap().hints_used, want);
    }
    assert!(matches!(
        lab.quest_answer(&sb, ID, "durable_intent").await,
        Err(LabError::QuestNotReached(_))
    ));
    assert!(matches!(
        lab.quest_hint(&sb, "nope").await,
        Err(LabError::UnknownQuest(_))
    ));
    lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    assert!(matches!(
        lab.quest_answer(&sb, ID, "no_such_answer").await,
        Err(LabError::UnknownAnswer { .. })
    ));
    let wrong = lab.quest_answer(&sb, ID, "delivered").await.unwrap();
    assert!(!wrong.explained && wrong.choice.why.is_some());
    assert_eq!(wrong.state.explained, Some(false));
    let right = lab.quest_answer(&sb, ID, "durable_intent").await.unwrap();
    assert!(right.explained);
    // A wrong answer after a right one does not take the explanation back.
    assert!(
        lab.quest_answer(&sb, ID, "applied")
            .await
            .unwrap()
            .explained
    );
    // Reset keeps the map; start over clears it.
    lab.reset(&sb).await.unwrap();
    assert!(state(&lab, &sb, ID).await.reached);
    lab.start_over(&sb).await.unwrap();
    assert_eq!(state(&lab, &sb, ID).await, QuestState::fresh(ID));
    // Without a sandbox: every quest, nothing reached.
    let none = lab.quests(None).await.unwrap();
    assert_eq!(none.len(), lab.config().quests.quests.len());
    assert!(none.iter().all(|q| !q.reached));
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn the_author_s_counts_equal_the_test_s_own_count_of_its_runs(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let lab = lab(opts.clone()).await;
    let db = PgPool::connect_with(opts).await.unwrap();
    let wrong_prediction = Prediction::parse(PredictionFields {
        ticket: Some("resolved"),
        ..PredictionFields::default()
    })
    .unwrap();
    // Three learners: each crashes after the UPDATE predicting "resolved" (wrong); the first
    // two reach commit_not_kafka and answer wrong, the first then right; the third takes two
    // hints.
    let mut learners = Vec::new();
    for _ in 0..3 {
        learners.push(lab.claim_sandbox().await.unwrap().1);
    }
    for (i, sb) in learners.iter().enumerate() {
        let r = lab
            .attempt_predicted(sb, &attempt(CrashPoint::AfterUpdate), &wrong_prediction)
            .await
            .unwrap();
        assert_eq!(r.prediction.as_ref().map(|p| p.all_right()), Some(false));
        if i < 2 {
            lab.reset(sb).await.unwrap();
            lab.attempt(sb, &attempt(CrashPoint::None)).await.unwrap();
            lab.quest_answer(sb, "commit_not_kafka", "delivered")
                .await
                .unwrap();
        }
        if i == 0 {
            lab.quest_answer(sb, "commit_not_kafka", "durable_intent")
                .await
                .unwrap();
        }
        if i == 2 {
            lab.quest_hint(sb, "commit_not_kafka").await.unwrap();
            lab.quest_hint(sb, "commit_not_kafka").await.unwrap();
        }
    }
    let counts = lab.author_counts().await.unwrap();
    assert_eq!(counts.learners, 3);
    let row = counts
        .rows
        .iter()
        .find(|r| r.id == "crash_after_update")
        .unwrap();
    assert_eq!((row.explored, row.predicted, row.right), (3, 3, 0));
    assert_eq!(row.misses.first().map(|(_, n)| *n), Some(3));
    let q = counts
        .quests
        .iter()
        .find(|q| q.id == "commit_not_kafka")
        .unwrap();
    assert_eq!(
        (
            q.touched,
            q.reached,
            q.explained_right,
            q.explained_wrong,
            q.hints_used
        ),
        (3, 2, 1, 1, 2)
    );
    assert_eq!(q.wrong_answers, vec![("delivered".to_owned(), 2)]);

    // The test's own count, from the kept reports' verdicts rather than the counters.
    let own: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM lab.explored WHERE id = 'crash_after_update' AND predicted = false",
    )
    .fetch_one(&db)
    .await
    .unwrap();
    assert_eq!(own, i64::from(row.predicted - row.right));
    let csv = counts.to_csv();
    assert!(
        csv.contains("quest,commit_not_kafka,,,,3,2,1,1,2,delivered:2\n"),
        "{csv}"
    );
    assert_eq!(
        csv.lines().count(),
        1 + counts.rows.len() + counts.quests.len()
    );
}
