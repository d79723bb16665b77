//! Every kind of run, exported as psql scripts and replayed by real `psql` processes on a
//! fresh database (two or three at once where the run used several sessions, the crashing one
//! SIGKILLed): the replay must leave the tables the run left.

mod common;

use common::replay::{Replayed, replay};
use common::*;
use outbox_lab::catalog::{
    CommitFate, ConsumerCrash, CrashPoint, Mistake, Mode, OutcomeId, PublisherCrash,
};
use outbox_lab::export::{Exported, Session, export};
use outbox_lab::input::{AttemptSpec, Mistakes};
use outbox_lab::prediction::Prediction;
use outbox_lab::report::Report;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

/// Exports `report`, replays it, and holds the replay's tables against the report's.
async fn replays(opts: &PgConnectOptions, report: &Report) -> (Exported, Replayed) {
    let exported = export(report, None).expect("the report exports");
    // EXPORT_DUMP=<dir> keeps the scripts, to read them.
    if let Ok(dir) = std::env::var("EXPORT_DUMP") {
        for s in exported.sessions() {
            let path = std::path::Path::new(&dir).join(exported.file_name(s));
            std::fs::write(path, exported.script(s).unwrap_or_default()).expect("dump");
        }
    }
    let replayed = replay(opts, &exported).await;
    assert!(
        replayed.snapshot.same_as(&report.snapshot),
        "the replay left other tables\nreplay: {:#?}\nrun: {:#?}\nscripts:\n{}\noutput:\n{}",
        replayed.snapshot,
        report.snapshot,
        exported
            .sessions()
            .into_iter()
            .filter_map(|s| exported.script(s))
            .collect::<Vec<_>>()
            .join("\n=====\n"),
        replayed.output
    );
    (exported, replayed)
}

fn sessions(e: &Exported) -> Vec<Session> {
    e.sessions()
}

fn way(mode: Mode, mistakes: &[Mistake], crash: CrashPoint) -> AttemptSpec {
    AttemptSpec {
        mode,
        mistakes: Mistakes::of(mistakes),
        ..AttemptSpec::lesson(crash)
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn every_failure_table_row_replays(_pool: PgPoolOptions, opts: PgConnectOptions) {
    for crash in [
        CrashPoint::None,
        CrashPoint::AfterBegin,
        CrashPoint::AfterUpdate,
        CrashPoint::AfterInsert,
        CrashPoint::AfterCommit,
    ] {
        let (lab, sb) = lab_with_sandbox(opts.clone()).await;
        let r = lab.attempt(&sb, &attempt(crash)).await.unwrap();
        let (e, _) = replays(&opts, &r).await;
        assert_eq!(sessions(&e), vec![Session::A], "{crash}");
        let a = e.script(Session::A).unwrap();
        assert_eq!(
            a.contains("kill this psql now"),
            crash != CrashPoint::None,
            "{crash}: a crash step exactly when the process dies"
        );
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn the_guard_and_the_primary_key_refusals_replay(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts.clone()).await;
    lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    let refused = lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    assert_eq!(refused.outcome, Some(OutcomeId::GuardRejected));
    replays(&opts, &refused).await;

    lab.reopen(&sb).await.unwrap();
    let conflict = lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    assert_eq!(conflict.outcome, Some(OutcomeId::InsertConflict));
    let (e, replayed) = replays(&opts, &conflict).await;
    assert!(e.script(Session::A).unwrap().contains("SQLSTATE 23505"));
    assert!(replayed.output.contains("23505") || replayed.output.contains("duplicate key"));

    let (lab, sb) = lab_with_sandbox(opts.clone()).await;
    let invalid = lab.attempt(&sb, &with_payload("{not json")).await.unwrap();
    assert_eq!(invalid.outcome, Some(OutcomeId::InvalidPayload));
    replays(&opts, &invalid).await;
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_lost_commit_reply_replays_either_fate(_pool: PgPoolOptions, opts: PgConnectOptions) {
    for fate in [CommitFate::Applied, CommitFate::NotApplied] {
        let (lab, sb) = lab_with_sandbox(opts.clone()).await;
        let r = lab.attempt(&sb, &lost_reply(fate)).await.unwrap();
        let (e, _) = replays(&opts, &r).await;
        let a = e.script(Session::A).unwrap();
        assert_eq!(
            a.contains("-- COMMIT;  (not sent"),
            fate == CommitFate::NotApplied,
            "{fate}"
        );
    }
    // The retry with a fresh id runs on a new connection: a new psql window.
    let (lab, sb) = lab_with_sandbox(opts.clone()).await;
    let spec = AttemptSpec {
        mistakes: Mistakes::of(&[Mistake::NewEventIdOnRetry]),
        ..lost_reply(CommitFate::NotApplied)
    };
    let r = lab.attempt(&sb, &spec).await.unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::RetryCommitted));
    let (e, _) = replays(&opts, &r).await;
    assert!(
        e.script(Session::A)
            .unwrap()
            .contains(", a new psql window)")
    );
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn the_wrong_ways_replay(_pool: PgPoolOptions, opts: PgConnectOptions) {
    // Trace A publishing before its COMMIT: the broker and the consumer commit on connections
    // of their own while the ticket transaction is open, so they get a session of their own.
    let (lab, sb) = lab_with_sandbox(opts.clone()).await;
    let spec = way(Mode::NaivePublishFirst, &[], CrashPoint::AfterPublish);
    let r = lab.attempt(&sb, &spec).await.unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::NaivePhantomEvent));
    let (e, _) = replays(&opts, &r).await;
    assert_eq!(sessions(&e), vec![Session::A, Session::B]);

    // Trace A committing first publishes after the transaction: one session is enough.
    let (lab, sb) = lab_with_sandbox(opts.clone()).await;
    let r = lab
        .attempt(&sb, &way(Mode::Naive, &[], CrashPoint::None))
        .await
        .unwrap();
    let (e, _) = replays(&opts, &r).await;
    assert_eq!(sessions(&e), vec![Session::A]);

    // The INSERT outside the transaction survives the crash that rolls the UPDATE back.
    let (lab, sb) = lab_with_sandbox(opts.clone()).await;
    let spec = way(
        Mode::Outbox,
        &[Mistake::InsertOutsideTx],
        CrashPoint::AfterInsert,
    );
    let r = lab.attempt(&sb, &spec).await.unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::OrphanIntent));
    let (e, _) = replays(&opts, &r).await;
    assert_eq!(sessions(&e), vec![Session::A, Session::B]);

    // Without the guard a resolved ticket gets a second event.
    let (lab, sb) = lab_with_sandbox(opts.clone()).await;
    lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    let spec = AttemptSpec {
        mistakes: Mistakes::of(&[Mistake::UnguardedUpdate]),
        ..with_event_id("event-ticket-902")
    };
    let r = lab.attempt(&sb, &spec).await.unwrap();
    replays(&opts, &r).await;
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_race_replays_in_two_sessions_with_the_wait(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    for mistakes in [Mistakes::none(), Mistakes::of(&[Mistake::UnguardedUpdate])] {
        let (lab, sb) = lab_with_sandbox(opts.clone()).await;
        let r = lab.race(&sb, &mistakes).await.unwrap();
        let (e, _) = replays(&opts, &r).await;
        assert_eq!(sessions(&e), vec![Session::A, Session::B]);
        let b = e.script(Session::B).unwrap();
        assert!(b.contains("(session B): run now, it will wait"), "{b}");
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_stepped_run_with_another_writer_replays(_pool: PgPoolOptions, opts: PgConnectOptions) {
    for crash_at_insert in [false, true] {
        let (lab, sb) = lab_with_sandbox(opts.clone()).await;
        let r = stepped_with_writer(&lab, &sb, crash_at_insert).await;
        let (e, _) = replays(&opts, &r).await;
        assert_eq!(sessions(&e), vec![Session::A, Session::B]);
        assert!(
            e.script(Session::B)
                .unwrap()
                .contains("run now, it will wait")
        );
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn the_publisher_the_publish_race_and_the_consumer_replay(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    for skip_locked in [true, false] {
        let (lab, sb) = lab_with_sandbox(opts.clone()).await;
        lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
        let r = lab.publish_race(&sb, skip_locked).await.unwrap();
        let (e, _) = replays(&opts, &r).await;
        // Both publishers hold a transaction while the broker appends: a third session.
        assert_eq!(sessions(&e), vec![Session::A, Session::B, Session::C]);
    }

    let (lab, sb) = lab_with_sandbox(opts.clone()).await;
    lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    let died = lab
        .restart(&sb, PublisherCrash::AfterSend, &Prediction::none())
        .await
        .unwrap();
    replays(&opts, &died).await;
    let restarted = lab
        .restart(&sb, PublisherCrash::None, &Prediction::none())
        .await
        .unwrap();
    replays(&opts, &restarted).await;
    for (inbox, crash) in [
        (false, ConsumerCrash::AfterApply),
        (false, ConsumerCrash::None),
        (true, ConsumerCrash::None),
    ] {
        let consumed = lab
            .consume(&sb, inbox, crash, &Prediction::none())
            .await
            .unwrap();
        replays(&opts, &consumed).await;
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_hostile_event_id_and_payload_are_stored_exactly_and_run_nothing(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let dir = std::env::temp_dir().join(format!("export-pwned-{}", std::process::id()));
    let _ = std::fs::remove_file(&dir);
    let file = dir.display().to_string();
    let event_id = format!("e'v\\ent $$; \\! touch {file} :foo");
    let payload = format!(
        "{{\"note\": \"it's \\\\ $$ ; \\n\\\\! touch {file}\", \"x\": \":foo\"}}\n\\! touch {file}\n:foo"
    );
    let (lab, sb) = lab_with_sandbox(opts.clone()).await;
    // An invalid payload (the trailing lines) is refused by the cast; the event id still
    // travels through the INSERT.
    let spec = AttemptSpec {
        event_id: outbox_lab::input::EventId::parse(&event_id).unwrap(),
        payload: outbox_lab::input::Payload::parse(&payload).unwrap(),
        ..AttemptSpec::lesson(CrashPoint::None)
    };
    let refused = lab.attempt(&sb, &spec).await.unwrap();
    assert_eq!(refused.outcome, Some(OutcomeId::InvalidPayload));
    replays(&opts, &refused).await;
    // A valid one with every hostile piece inside its strings is stored exactly.
    let valid = format!(
        "{{\"note\": \"it's \\\\ $$ ; \\n\\\\! touch {file} :foo\",\n\"y\": \"\\\\! touch {file}\"}}"
    );
    let spec = AttemptSpec {
        payload: outbox_lab::input::Payload::parse(&valid).unwrap(),
        ..spec
    };
    let r = lab.attempt(&sb, &spec).await.unwrap();
    assert_eq!(r.outcome, Some(OutcomeId::Committed));
    let (e, replayed) = replays(&opts, &r).await;
    let row = replayed
        .snapshot
        .outbox_row(&event_id)
        .expect("the hostile event id is the row's key");
    assert_eq!(
        row.payload,
        r.snapshot.outbox_row(&event_id).unwrap().payload
    );
    assert!(
        !dir.exists(),
        "a meta-command in a value ran: {}",
        e.script(Session::A).unwrap()
    );
    // Every psql of the replay has `foo` set: a `:foo` read as a variable would show it.
    assert!(
        !replayed.output.contains("INTERPOLATED"),
        "no variable was read"
    );
}
