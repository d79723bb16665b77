//! Every row of the lesson's failure table, on a real PostgreSQL, compared with the model.

mod common;

use common::*;
use outbox_lab::catalog::{CommitFate, CrashPoint, OutcomeId, names};
use outbox_lab::report::Report;
use outbox_lab::sql_trace::{Answer, Sent, TxState};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

fn ticket_status(report: &Report) -> &str {
    &report
        .snapshot
        .ticket(names::TICKET_ID)
        .expect("ticket-42 exists")
        .status
}

fn assert_model(report: &Report) {
    assert_eq!(
        report.matches_model,
        Some(true),
        "model mismatch: {report:#?}"
    );
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_crash_after_the_update_leaves_the_ticket_open_and_no_outbox_row(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let r = lab
        .attempt(&sb, &attempt(CrashPoint::AfterUpdate))
        .await
        .unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::CrashedAfterUpdate));
    assert_eq!(ticket_status(&r), "open");
    assert!(r.snapshot.outbox.is_empty());
    assert!(
        r.trace
            .iter()
            .any(|s| s.sent == Sent::ProcessCrashed && s.tx == TxState::Abandoned)
    );
    assert!(
        r.trace
            .iter()
            .any(|s| matches!(s.sent, Sent::BackendGone { .. }) && s.tx == TxState::RolledBack)
    );
    assert_model(&r);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_crash_after_the_insert_leaves_the_ticket_open_and_no_outbox_row(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let r = lab
        .attempt(&sb, &attempt(CrashPoint::AfterInsert))
        .await
        .unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::CrashedBeforeCommit));
    assert_eq!(ticket_status(&r), "open");
    assert!(r.snapshot.outbox.is_empty());
    assert_model(&r);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_commit_writes_both_rows_together(_pool: PgPoolOptions, opts: PgConnectOptions) {
    for crash in [CrashPoint::None, CrashPoint::AfterCommit] {
        let (lab, sb) = lab_with_sandbox(opts.clone()).await;
        let r = lab.attempt(&sb, &attempt(crash)).await.unwrap();
        let expected = if crash == CrashPoint::None {
            OutcomeId::Committed
        } else {
            OutcomeId::CommittedThenCrashed
        };
        assert_eq!(r.outcome, Some(expected));
        assert_eq!(ticket_status(&r), "resolved");
        let row = r.snapshot.outbox_row(names::EVENT_ID).expect("outbox row");
        assert_eq!(row.aggregate_id, names::TICKET_ID);
        assert_eq!(row.published_at, None);
        assert!(row.payload.contains("\"to_status\": \"resolved\""));
        assert!(r.snapshot.kafka.is_empty() && r.snapshot.history.is_empty());
        assert_model(&r);
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_resolved_ticket_is_refused_by_the_guard_at_every_crash_point(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let first = lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    for &crash in CrashPoint::ALL {
        let r = lab.attempt(&sb, &attempt(crash)).await.unwrap();
        if crash == CrashPoint::AfterBegin {
            // The process dies before the guard is asked: nothing to refuse, nothing changes.
            assert_eq!(r.outcome, Some(OutcomeId::CrashedAfterBegin));
            assert_eq!(r.snapshot, first.snapshot);
            continue;
        }
        assert_eq!(r.outcome, Some(OutcomeId::GuardRejected), "{crash}");
        assert_eq!(r.snapshot, first.snapshot, "{crash}: nothing changes");
        let update = r
            .trace
            .iter()
            .find(|s| matches!(&s.sent, Sent::Sql { sql, .. } if sql.starts_with("UPDATE")))
            .unwrap();
        assert_eq!(update.answer, Answer::Ok { rows: Some(0) });
        assert!(
            matches!(&r.trace.last().unwrap().sent, Sent::Sql { sql, .. } if sql == "ROLLBACK")
        );
        assert_model(&r);
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_retry_after_reopen_hits_the_primary_key_and_keeps_the_earlier_row(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let first = lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    let reopened = lab.reopen(&sb).await.unwrap();
    assert_eq!(ticket_status(&reopened), "open");
    assert_eq!(reopened.snapshot.outbox, first.snapshot.outbox);
    assert_model(&reopened);

    let r = lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::InsertConflict));
    assert_eq!(ticket_status(&r), "open", "the UPDATE was rolled back");
    assert_eq!(
        r.snapshot.outbox, first.snapshot.outbox,
        "the earlier row is unchanged"
    );
    let insert = r
        .trace
        .iter()
        .find(|s| matches!(&s.sent, Sent::Sql { sql, .. } if sql.starts_with("INSERT")))
        .unwrap();
    assert!(matches!(&insert.answer, Answer::Error { sqlstate, .. } if sqlstate == "23505"));
    assert_model(&r);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_payload_that_is_not_json_fails_the_insert_with_22p02(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let r = lab
        .attempt(&sb, &with_payload("{\"event_id\": oops"))
        .await
        .unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::InvalidPayload));
    assert_eq!(ticket_status(&r), "open");
    assert!(r.snapshot.outbox.is_empty());
    let insert = r
        .trace
        .iter()
        .find(|s| matches!(&s.sent, Sent::Sql { sql, .. } if sql.starts_with("INSERT")))
        .unwrap();
    assert!(matches!(&insert.answer, Answer::Error { sqlstate, .. } if sqlstate == "22P02"));
    assert_model(&r);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_lost_commit_reply_is_unknown_until_reconciled(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    for (fate, committed) in [(CommitFate::Applied, true), (CommitFate::NotApplied, false)] {
        let (lab, sb) = lab_with_sandbox(opts.clone()).await;
        let r = lab.attempt(&sb, &lost_reply(fate)).await.unwrap();
        assert_eq!(r.outcome, Some(OutcomeId::CommitUnknown), "{fate}");
        let commit = r
            .trace
            .iter()
            .find(|s| matches!(&s.sent, Sent::Sql { sql, .. } if sql == "COMMIT"))
            .unwrap();
        assert!(
            matches!(commit.answer, Answer::Io { .. }),
            "{fate}: the client got an I/O error"
        );
        assert_eq!(commit.tx, TxState::Unknown);
        assert_eq!(
            ticket_status(&r),
            if committed { "resolved" } else { "open" }
        );
        assert_model(&r);

        let rec = lab.reconcile(&sb).await.unwrap();
        let expected = if committed {
            OutcomeId::ReconciledCommitted
        } else {
            OutcomeId::ReconciledNotCommitted
        };
        assert_eq!(rec.outcome, Some(expected), "{fate}");
        let how = rec.reconciliation.as_ref().unwrap();
        assert_eq!(how.by_ids_committed, committed);
        assert_eq!(how.by_xid_committed, Some(committed));
        assert_eq!(
            how.xact_status.as_deref(),
            Some(if committed { "committed" } else { "aborted" })
        );
        assert_model(&rec);
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_random_fate_is_one_of_the_two_and_reconcile_tells_which(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let r = lab
        .attempt(&sb, &lost_reply(CommitFate::Random))
        .await
        .unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::CommitUnknown));
    assert_model(&r);
    let rec = lab.reconcile(&sb).await.unwrap();
    let resolved = ticket_status(&r) == "resolved";
    assert_eq!(
        rec.outcome == Some(OutcomeId::ReconciledCommitted),
        resolved
    );
    assert_model(&rec);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn reset_brings_back_the_initial_state(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    let r = lab.reset(&sb).await.unwrap();
    assert_eq!(r.snapshot, outbox_lab::model::initial_state());
    assert_model(&r);
    let again = lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    assert_eq!(again.outcome, Some(OutcomeId::Committed));
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn reconcile_without_an_attempt_is_refused(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let err = lab.reconcile(&sb).await.unwrap_err();
    assert!(
        matches!(err, outbox_lab::pg::LabError::NothingToReconcile),
        "{err}"
    );
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_bad_payload_fails_before_the_primary_key_is_checked(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    lab.reopen(&sb).await.unwrap();
    let r = lab.attempt(&sb, &with_payload("{oops")).await.unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::InvalidPayload));
    assert_model(&r);
}
