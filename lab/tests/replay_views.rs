//! A replay rebuilds each step's tables from the report alone; checked against real runs
//! (the model check also rebuilds every action of its random sequences).

mod common;

use common::*;
use outbox_lab::catalog::{CommitFate, CrashPoint, Step, names};
use outbox_lab::prediction::Prediction;
use outbox_lab::replay::{StepView, views};
use outbox_lab::report::Report;
use outbox_lab::sql_trace::{Actor, Sent, TraceStep};
use outbox_lab::step::{Command, Message};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use tokio::sync::mpsc;

fn status(s: &outbox_lab::snapshot::Snapshot) -> &str {
    &s.ticket(names::TICKET_ID).expect("ticket-42").status
}

/// The view right after the first step that matches.
fn after<'v>(
    report: &Report,
    all: &'v [StepView],
    which: impl Fn(&TraceStep) -> bool,
) -> &'v StepView {
    let at = report
        .trace
        .iter()
        .position(which)
        .expect("the step is in the trace");
    &all[at]
}

fn is_insert(s: &TraceStep) -> bool {
    s.actor == Actor::Service
        && matches!(&s.sent, Sent::Sql { sql, .. } if sql.starts_with("INSERT INTO outbox"))
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_crash_after_the_insert_shows_the_rows_inside_and_nothing_outside(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let r = lab
        .attempt(&sb, &attempt(CrashPoint::AfterInsert))
        .await
        .unwrap();
    let all = views(&r).expect("the run rebuilds");
    assert_eq!(all.len(), r.trace.len());
    let at_insert = after(&r, &all, is_insert);
    let inside = at_insert.inside.as_ref().expect("the transaction is open");
    assert_eq!(status(inside), "resolved");
    assert!(inside.outbox_row(names::EVENT_ID).is_some());
    assert_eq!(status(&at_insert.outside), "open");
    assert!(at_insert.outside.outbox.is_empty());
    let last = all.last().expect("steps");
    assert!(last.inside.is_none(), "the crash ended the transaction");
    assert!(last.outside.same_as(&r.snapshot));
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_lost_reply_rebuilds_to_what_postgres_decided(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    for fate in [CommitFate::Applied, CommitFate::NotApplied] {
        let (lab, sb) = lab_with_sandbox(opts.clone()).await;
        let r = lab.attempt(&sb, &lost_reply(fate)).await.unwrap();
        let all = views(&r).expect("the run rebuilds");
        let end = &all.last().expect("steps").outside;
        let expected = if fate == CommitFate::Applied {
            "resolved"
        } else {
            "open"
        };
        assert_eq!(status(end), expected, "{fate:?}");
        // Before the COMMIT, the outside never saw the change.
        let at_insert = after(&r, &all, is_insert);
        assert_eq!(status(&at_insert.outside), "open");
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_report_missing_a_statement_is_not_rebuilt(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let mut r = lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    assert!(views(&r).is_some());
    r.trace.retain(|s| !is_insert(s));
    assert!(
        views(&r).is_none(),
        "without its INSERT the run cannot end with an outbox row"
    );
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn the_after_commit_runs_rebuild(_pool: PgPoolOptions, opts: PgConnectOptions) {
    use outbox_lab::catalog::{ConsumerCrash, PublisherCrash};
    let (lab, sb) = lab_with_sandbox(opts).await;
    lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    let crashed = lab
        .restart(&sb, PublisherCrash::AfterSend, &Prediction::none())
        .await
        .unwrap();
    let all = views(&crashed).expect("a publisher's crash rebuilds");
    let end = &all.last().expect("steps").outside;
    assert_eq!(end.kafka.len(), 1, "the broker's own commit stays");
    assert!(
        end.outbox[0].published_at.is_none(),
        "the mark died with it"
    );
    for report in [
        lab.publish_race(&sb, true).await.unwrap(),
        lab.consume(&sb, false, ConsumerCrash::AfterApply, &Prediction::none())
            .await
            .unwrap(),
        lab.consume(&sb, true, ConsumerCrash::None, &Prediction::none())
            .await
            .unwrap(),
    ] {
        assert!(views(&report).is_some(), "{:#?}", report.trace);
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_stepped_run_with_another_writer_rebuilds(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    let (cmd_tx, mut cmd_rx) = mpsc::channel(8);
    let (out_tx, mut out_rx) = mpsc::channel(8);
    let spec = attempt(CrashPoint::None);
    let run = {
        let lab = lab.clone();
        let sb = sb.clone();
        tokio::spawn(async move {
            lab.step(&sb, &spec, &Prediction::none(), &mut cmd_rx, &out_tx)
                .await
        })
    };
    // Paused after BEGIN: the UPDATE runs; after it, another writer queues behind its row
    // lock; then the run goes on to its end.
    let mut script = vec![Command::Next, Command::OtherWriter].into_iter();
    // The channel closes when the run ends (its report is the task's answer).
    while let Some(message) = out_rx.recv().await {
        match message {
            Message::Pause(_) => {
                let next = script.next().unwrap_or(Command::Next);
                cmd_tx.send(next).await.expect("the run listens");
            }
            Message::Report(_) => break,
            Message::Error(e) => panic!("refused: {e:?}"),
        }
    }
    drop(cmd_tx);
    let r = run.await.expect("joined").expect("the run ends");
    let all = views(&r).expect("a stepped run rebuilds");
    let writer_update = r
        .trace
        .iter()
        .position(|s| {
            s.actor == Actor::OtherWriter
                && matches!(&s.sent, Sent::Sql { sql, .. } if sql.starts_with("UPDATE"))
        })
        .expect("the other writer ran");
    // The held transaction's own view shows its UPDATE; nobody else's does yet.
    let update = r
        .trace
        .iter()
        .position(|s| s.actor == Actor::Service && s.step == Some(Step::Update))
        .expect("the held UPDATE");
    assert!(update < writer_update);
    assert_eq!(status(&all[update].outside), "open");
    assert_eq!(
        status(all[update].inside.as_ref().expect("open transaction")),
        "resolved"
    );
    assert!(all.last().expect("steps").outside.same_as(&r.snapshot));
}
