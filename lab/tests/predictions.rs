//! Predictions judged against PostgreSQL: for every failure-table row and every wrong way, a
//! right and a wrong prediction, with the expected answers written here from the lesson (not
//! taken from the model), and checked against the tables read on a connection of the test's
//! own. Then the progress map: explored exactly when produced, kept across reset and server
//! processes, cleared by "start over", never shared between learners.

mod common;

use common::*;
use outbox_lab::catalog::{CommitFate, CrashPoint, FailureRow, Mistake, Mode, OutcomeId, Setup};
use outbox_lab::compare;
use outbox_lab::input::{AttemptSpec, Mistakes, Payload};
use outbox_lab::pg::{Lab, SchemaName};
use outbox_lab::prediction::{Item, Prediction, PredictionFields};
use outbox_lab::progress::Progress;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Connection, PgConnection};

struct Case {
    name: &'static str,
    setup: Setup,
    spec: AttemptSpec,
    outcome: OutcomeId,
    /// ticket, outbox, kafka, client — as the lesson says they end up.
    truth: [&'static str; 4],
}

fn way(crash: CrashPoint, mode: Mode, mistakes: &[Mistake]) -> AttemptSpec {
    AttemptSpec::lesson(crash)
        .with_way(mode, Mistakes::of(mistakes))
        .expect("a valid way")
}

fn fated(mut spec: AttemptSpec, fate: CommitFate) -> AttemptSpec {
    spec.commit_fate = fate;
    spec
}

fn cases() -> Vec<Case> {
    use CrashPoint as C;
    use OutcomeId as O;
    use Setup::*;
    let outbox = |c| way(c, Mode::Outbox, &[]);
    let bad_payload = AttemptSpec {
        payload: Payload::parse("not json").expect("within limits"),
        ..AttemptSpec::lesson(C::None)
    };
    let case = |name, setup, spec, outcome, truth| Case {
        name,
        setup,
        spec,
        outcome,
        truth,
    };
    vec![
        // The lesson's failure table.
        case(
            "crash after update",
            Fresh,
            outbox(C::AfterUpdate),
            O::CrashedAfterUpdate,
            ["open", "none", "none", "unknown"],
        ),
        case(
            "insert error (not json)",
            Fresh,
            bad_payload,
            O::InvalidPayload,
            ["open", "none", "none", "error"],
        ),
        case(
            "insert error (23505)",
            ResolvedThenReopened,
            outbox(C::None),
            O::InsertConflict,
            ["open", "row", "none", "error"],
        ),
        case(
            "crash before commit",
            Fresh,
            outbox(C::AfterInsert),
            O::CrashedBeforeCommit,
            ["open", "none", "none", "unknown"],
        ),
        case(
            "committed, then crash",
            Fresh,
            outbox(C::AfterCommit),
            O::CommittedThenCrashed,
            ["resolved", "row", "none", "unknown"],
        ),
        case(
            "committed",
            Fresh,
            outbox(C::None),
            O::Committed,
            ["resolved", "row", "none", "ok"],
        ),
        case(
            "guard: zero rows",
            Resolved,
            outbox(C::None),
            O::GuardRejected,
            ["resolved", "none", "none", "error"],
        ),
        case(
            "reply lost, applied",
            Fresh,
            fated(outbox(C::CommitReplyLost), CommitFate::Applied),
            O::CommitUnknown,
            ["resolved", "row", "none", "unknown"],
        ),
        case(
            "reply lost, not applied",
            Fresh,
            fated(outbox(C::CommitReplyLost), CommitFate::NotApplied),
            O::CommitUnknown,
            ["open", "none", "none", "unknown"],
        ),
        // The wrong ways.
        case(
            "trace A",
            Fresh,
            way(C::None, Mode::Naive, &[]),
            O::NaivePublished,
            ["resolved", "none", "event", "ok"],
        ),
        case(
            "trace A, crash after commit",
            Fresh,
            way(C::AfterCommit, Mode::Naive, &[]),
            O::NaiveEventLost,
            ["resolved", "none", "none", "unknown"],
        ),
        case(
            "publish first, crash",
            Fresh,
            way(C::AfterPublish, Mode::NaivePublishFirst, &[]),
            O::NaivePhantomEvent,
            ["open", "none", "event", "unknown"],
        ),
        case(
            "update outside tx",
            Fresh,
            way(C::AfterInsert, Mode::Outbox, &[Mistake::UpdateOutsideTx]),
            O::ChangeWithoutIntent,
            ["resolved", "none", "none", "unknown"],
        ),
        case(
            "insert outside tx",
            Fresh,
            way(C::AfterInsert, Mode::Outbox, &[Mistake::InsertOutsideTx]),
            O::OrphanIntent,
            ["open", "row", "none", "unknown"],
        ),
        case(
            "on conflict do nothing",
            ResolvedThenReopened,
            way(C::None, Mode::Outbox, &[Mistake::OnConflictDoNothing]),
            O::CommittedSilently,
            ["resolved", "row", "none", "ok"],
        ),
        case(
            "fresh id, first applied",
            Fresh,
            fated(
                way(
                    C::CommitReplyLost,
                    Mode::Outbox,
                    &[Mistake::NewEventIdOnRetry],
                ),
                CommitFate::Applied,
            ),
            O::RetryRefused,
            ["resolved", "row", "none", "error"],
        ),
        case(
            "fresh id, first lost",
            Fresh,
            fated(
                way(
                    C::CommitReplyLost,
                    Mode::Outbox,
                    &[Mistake::NewEventIdOnRetry],
                ),
                CommitFate::NotApplied,
            ),
            O::RetryCommitted,
            ["resolved", "row", "none", "ok"],
        ),
        case(
            "fresh id, unguarded",
            Fresh,
            fated(
                way(
                    C::CommitReplyLost,
                    Mode::Outbox,
                    &[Mistake::NewEventIdOnRetry, Mistake::UnguardedUpdate],
                ),
                CommitFate::Applied,
            ),
            O::RetryDuplicated,
            ["resolved", "row", "none", "ok"],
        ),
    ]
}

fn predict(values: [&str; 4]) -> Prediction {
    Prediction::parse(PredictionFields {
        ticket: Some(values[0]),
        outbox: Some(values[1]),
        kafka: Some(values[2]),
        client: Some(values[3]),
        ..Default::default()
    })
    .expect("valid prediction")
}

/// A wrong value for each item: the other one (for the caller's answer, a different one).
fn wrong(truth: [&'static str; 4]) -> [&'static str; 4] {
    let flip = |v: &str, a: &'static str, b: &'static str| if v == a { b } else { a };
    [
        flip(truth[0], "open", "resolved"),
        flip(truth[1], "none", "row"),
        flip(truth[2], "none", "event"),
        flip(truth[3], "ok", "error"),
    ]
}

/// ticket-42's status and whether the attempt's outbox rows exist, read on a connection of
/// the test's own.
async fn read_directly(opts: &PgConnectOptions, sb: &SchemaName, event_id: &str) -> (String, bool) {
    let mut conn = PgConnection::connect_with(opts).await.expect("connect");
    let status: String = sqlx::query_scalar(&format!(
        "SELECT status FROM {sb}.tickets WHERE id = 'ticket-42'"
    ))
    .fetch_one(&mut conn)
    .await
    .expect("read ticket");
    let rows: i64 = sqlx::query_scalar(&format!(
        "SELECT count(*) FROM {sb}.outbox WHERE event_id IN ($1, $1 || '-retry')"
    ))
    .bind(event_id)
    .fetch_one(&mut conn)
    .await
    .expect("read outbox");
    (status, rows > 0)
}

async fn prepare(lab: &Lab, sb: &SchemaName, case: &Case) {
    if let Some(earlier) = compare::setup_attempt(case.setup, &case.spec) {
        lab.attempt(sb, &earlier).await.expect("set-up attempt");
    }
    if case.setup == Setup::ResolvedThenReopened {
        lab.reopen(sb).await.expect("reopen");
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn every_row_and_wrong_way_judges_a_right_and_a_wrong_prediction_by_the_tables(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let lab = lab(opts.clone()).await;
    for case in cases() {
        for (right, values) in [(true, case.truth), (false, wrong(case.truth))] {
            let (_, sb) = lab.claim_sandbox().await.expect("claim");
            prepare(&lab, &sb, &case).await;
            let r = lab
                .attempt_predicted(&sb, &case.spec, &predict(values))
                .await
                .expect("attempt");
            assert_eq!(r.outcome, Some(case.outcome), "{}", case.name);
            let judged = r.prediction.as_ref().expect("judged");
            assert_eq!(judged.items.len(), 4, "{}", case.name);
            for (j, truth) in judged.items.iter().zip(case.truth) {
                assert_eq!(
                    j.actual.as_deref(),
                    Some(truth),
                    "{}: {}",
                    case.name,
                    j.item
                );
                assert_eq!(j.right, right, "{}: {}", case.name, j.item);
                assert_eq!(
                    j.why.is_some(),
                    !right,
                    "{}: {} needs a sentence",
                    case.name,
                    j.item
                );
            }
            assert_eq!(judged.all_right(), right);
            let (status, row) = read_directly(&opts, &sb, case.spec.event_id.as_str()).await;
            assert_eq!(status, case.truth[0], "{}: the table says", case.name);
            assert_eq!(row, case.truth[1] == "row", "{}: the table says", case.name);
        }
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn the_judgement_follows_the_tables_not_the_model(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let prediction = predict(["open", "none", "none", "unknown"]);
    let mut r = lab
        .attempt_predicted(&sb, &attempt(CrashPoint::AfterUpdate), &prediction)
        .await
        .unwrap();
    assert!(r.prediction.as_ref().unwrap().all_right());
    // Fake the tables: were ticket-42 resolved, the same prediction would be judged wrong,
    // though the outcome (and so the model) is unchanged.
    r.snapshot.tickets[0].status = "resolved".into();
    let again = prediction.judge(&r).unwrap();
    assert!(!again.items[0].right);
    assert_eq!(again.items[0].why.as_deref(), Some("commit_is_durable"));
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_partial_prediction_is_judged_item_by_item_and_none_is_no_judgement(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let only_client = Prediction::parse(PredictionFields {
        client: Some("unknown"),
        ..Default::default()
    })
    .unwrap();
    let r = lab
        .attempt_predicted(
            &sb,
            &fated(attempt(CrashPoint::CommitReplyLost), CommitFate::Random),
            &only_client,
        )
        .await
        .unwrap();
    let judged = r.prediction.unwrap();
    assert_eq!(judged.items.len(), 1);
    assert_eq!(judged.items[0].item, Item::Client);
    assert!(
        judged.items[0].right,
        "unknown is the right answer to a lost reply"
    );
    let r = lab.reset(&sb).await.unwrap();
    assert!(r.prediction.is_none());
    let r = lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    assert!(r.prediction.is_none());
}

fn explored(p: &Progress) -> Vec<FailureRow> {
    p.rows
        .iter()
        .filter(|r| r.explored)
        .map(|r| r.row)
        .collect()
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn rows_are_explored_when_produced_kept_across_reset_and_processes_and_cleared_by_start_over(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts.clone()).await;
    let (_, other) = lab.claim_sandbox().await.unwrap();
    // Nothing explored, no quest reached; the map knows how many quests there are.
    let empty = || {
        let mut p = Progress::empty();
        p.quests.total = u32::try_from(lab.config().quests.quests.len()).unwrap();
        p
    };
    assert_eq!(lab.progress(&sb).await.unwrap(), empty());

    // A crash right after BEGIN is no row of the table.
    lab.attempt(&sb, &attempt(CrashPoint::AfterBegin))
        .await
        .unwrap();
    assert_eq!(lab.progress(&sb).await.unwrap().explored, 0);

    let wrong = predict(["resolved", "row", "none", "ok"]);
    lab.attempt_predicted(&sb, &attempt(CrashPoint::AfterUpdate), &wrong)
        .await
        .unwrap();
    let p = lab.progress(&sb).await.unwrap();
    assert_eq!(explored(&p), vec![FailureRow::CrashAfterUpdate]);
    assert_eq!(p.rows[0].predicted, Some(false));
    assert_eq!((p.predictions.made, p.predictions.right), (1, 0));

    lab.reset(&sb).await.unwrap();
    lab.attempt(&sb, &way(CrashPoint::AfterCommit, Mode::Naive, &[]))
        .await
        .unwrap();
    lab.reset(&sb).await.unwrap();
    let right = predict(["resolved", "row", "none", "ok"]);
    lab.attempt_predicted(&sb, &attempt(CrashPoint::None), &right)
        .await
        .unwrap();

    // Another server process reads the same.
    let second = common::lab(opts).await;
    let p = second.progress(&sb).await.unwrap();
    assert_eq!(
        explored(&p),
        vec![
            FailureRow::CrashAfterUpdate,
            FailureRow::CommittedBeforePublish
        ]
    );
    assert_eq!((p.explored, p.total), (2, 6));
    assert_eq!((p.predictions.made, p.predictions.right), (2, 1));
    assert_eq!(p.wrong_ways.found, vec![OutcomeId::NaiveEventLost]);
    assert_eq!(second.progress(&other).await.unwrap(), empty());

    second.set_predict_first(&sb, true).await.unwrap();
    second.start_over(&sb).await.unwrap();
    let p = lab.progress(&sb).await.unwrap();
    assert_eq!(p.explored, 0);
    assert_eq!(p.predictions.made, 0);
    assert!(p.wrong_ways.found.is_empty());
    assert_eq!(p.predict_first, Some(true), "start over keeps the switch");
    let r = lab.current_report(&sb).await.unwrap();
    assert_eq!(r.snapshot, outbox_lab::model::initial_state());
}
