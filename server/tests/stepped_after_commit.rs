//! The publisher (8.3) and the History consumer (8.4) stepped over a real WebSocket
//! (`/api/step` with `scenario`), against real PostgreSQL. What each pause holds — row locks,
//! a second publisher skipping or waiting, History and the inbox inside but not outside — is
//! read from PostgreSQL itself, never only from the stepper's report.

mod common;

use common::post;
use common::socket::{Socket, backend_alive, config, leftovers, pool, serve};
use http::StatusCode;
use outbox_lab::catalog::{ConsumerCrash, PublisherCrash};
use serde_json::{Value, json};
use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

/// The lesson's transaction, committed in the socket's sandbox: one unpublished outbox row.
async fn committed(router: &axum::Router, s: &Socket) {
    let r = post(
        router,
        "/api/attempt",
        "crash=none",
        &[("cookie", &s.cookie)],
    )
    .await;
    assert_eq!(r.json["outcome"], "committed", "{}", r.json);
}

/// ...and published by a restart: one record in the topic for the consumer.
async fn published(router: &axum::Router, s: &Socket) {
    committed(router, s).await;
    let r = post(
        router,
        "/api/restart",
        "crash=none",
        &[("cookie", &s.cookie)],
    )
    .await;
    assert_eq!(r.json["outcome"], "published", "{}", r.json);
}

async fn begin(s: &mut Socket, command: Value) -> Value {
    s.send(command).await;
    s.pause().await
}

/// Steps on until the run is held at `at` (the first time).
async fn step_to(s: &mut Socket, command: Value, at: &str) -> Value {
    let mut pause = begin(s, command).await;
    while pause["at"] != at {
        s.send(json!({"cmd": "next"})).await;
        pause = s.pause().await;
    }
    pause
}

fn publisher() -> Value {
    json!({"cmd": "begin", "scenario": "publisher"})
}

fn consumer(inbox: bool) -> Value {
    json!({"cmd": "begin", "scenario": "consumer", "inbox": if inbox { "on" } else { "off" }})
}

fn sandbox_of(report: &Value) -> String {
    report["sandbox"].as_str().unwrap().to_owned()
}

/// A scalar about the sandbox, asked of PostgreSQL on a session of the test's own.
async fn ask(pg: &PgPool, sandbox: &str, sql: &str) -> i64 {
    let sql = sql.replace("SB", &format!("\"{sandbox}\""));
    sqlx::query_scalar(&sql).fetch_one(pg).await.unwrap()
}

/// The held backend's lock on `outbox` in this mode, from `pg_locks`.
async fn holds_lock(pg: &PgPool, pid: i64, mode: &str) -> bool {
    sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation \
         WHERE l.pid = $1::int AND c.relname = 'outbox' AND l.mode = $2 AND l.granted)",
    )
    .bind(pid)
    .bind(mode)
    .fetch_one(pg)
    .await
    .unwrap()
}

/// The lesson's publisher SELECT on a session of the test's own: the event ids it takes.
async fn second_publisher_takes(pg: &PgPool, sandbox: &str) -> Vec<String> {
    let mut tx = pg.begin().await.unwrap();
    sqlx::query("SELECT set_config('search_path', $1, true)")
        .bind(sandbox)
        .execute(&mut *tx)
        .await
        .unwrap();
    let sql = outbox_lab::pg::publisher::claim_sql(true);
    let rows: Vec<(String, String, String)> =
        sqlx::query_as(&sql).fetch_all(&mut *tx).await.unwrap();
    tx.rollback().await.unwrap();
    rows.into_iter().map(|r| r.0).collect()
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn every_pause_of_the_publisher_is_what_postgresql_shows(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (addr, router) = serve(opts.clone(), config()).await;
    let pg = pool(&opts).await;
    let mut s = Socket::open(addr, None).await;
    committed(&router, &s).await;

    // Held after its SELECT … FOR UPDATE SKIP LOCKED: the row is locked, nothing sent.
    let pause = begin(&mut s, publisher()).await;
    assert_eq!(pause["scenario"], "publisher", "{pause}");
    assert_eq!(pause["at"], "before_send");
    assert_eq!(pause["next"], "send");
    assert_eq!(pause["matches_model"], true, "{pause}");
    assert_eq!(pause["backend"]["state"], "idle in transaction");
    let pid = pause["backend"]["pid"].as_i64().unwrap();
    assert!(holds_lock(&pg, pid, "RowShareLock").await, "{pause}");
    // Which sandbox: the one the learner's cookie names (from a snapshot).
    let snap = post(&router, "/api/snapshot", "", &[("cookie", &s.cookie)]).await;
    let sandbox = sandbox_of(&snap.json);
    // Another publisher with SKIP LOCKED, on a session of the test's own, takes nothing.
    assert!(second_publisher_takes(&pg, &sandbox).await.is_empty());
    assert_eq!(
        ask(&pg, &sandbox, "SELECT count(*) FROM SB.kafka_log").await,
        0
    );

    // After the send: the broker committed on its own, so everyone sees the record.
    s.send(json!({"cmd": "next"})).await;
    let pause = s.pause().await;
    assert_eq!(pause["at"], "after_send");
    assert_eq!(pause["next"], "mark");
    assert_eq!(pause["matches_model"], true, "{pause}");
    assert_eq!(
        ask(&pg, &sandbox, "SELECT count(*) FROM SB.kafka_log").await,
        1
    );
    assert_eq!(pause["inside"]["kafka"].as_array().unwrap().len(), 1);

    // After the mark: published_at is set inside the transaction only.
    s.send(json!({"cmd": "next"})).await;
    let pause = s.pause().await;
    assert_eq!(pause["at"], "after_mark");
    assert_eq!(pause["next"], "commit");
    assert_eq!(pause["matches_model"], true, "{pause}");
    assert!(
        pause["inside"]["outbox"][0]["published_at"].is_string(),
        "{pause}"
    );
    assert!(pause["outside"]["outbox"][0]["published_at"].is_null());
    let marked = "SELECT count(*) FROM SB.outbox WHERE published_at IS NOT NULL";
    assert_eq!(ask(&pg, &sandbox, marked).await, 0);
    assert!(holds_lock(&pg, pid, "RowExclusiveLock").await);

    // COMMIT: the mark is everyone's, and the locks are gone.
    s.send(json!({"cmd": "next"})).await;
    let report = s.report().await;
    assert_eq!(report["outcome"], "published", "{report}");
    assert_eq!(report["matches_model"], true, "{report}");
    assert_eq!(report["stepped"]["scenario"], "publisher");
    assert_eq!(report["stepped"]["ended_at"], "none");
    assert_eq!(ask(&pg, &sandbox, marked).await, 1);
    assert_eq!(leftovers(&pg).await, (0, 0, 0));
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_second_publisher_skips_the_held_rows_or_waits_for_them(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (addr, router) = serve(opts.clone(), config()).await;
    let pg = pool(&opts).await;
    // (SKIP LOCKED?, how the held one ends, rows the second takes, records in the topic)
    let cases = [
        (true, "next", 0, 1),
        (true, "crash", 0, 0),
        // Waiting: after the held COMMIT it re-checks the row and finds it marked...
        (false, "next", 0, 1),
        // ...after the held one dies, the row is free and unmarked: it sends it itself.
        (false, "crash", 1, 1),
    ];
    for (skip_locked, end, rows, records) in cases {
        let mut s = Socket::open(addr, None).await;
        committed(&router, &s).await;
        let held = begin(&mut s, publisher()).await;
        let held_pid = held["backend"]["pid"].as_i64().unwrap();
        s.send(json!({"cmd": "other_publisher", "skip_locked": skip_locked}))
            .await;
        let pause = s.pause().await;
        let second = &pause["waiter"];
        assert_eq!(second["skip_locked"], skip_locked, "{pause}");
        let second_pid = second["pid"].as_i64().unwrap() as i32;
        if skip_locked {
            assert_eq!(second["state"], "done", "{pause}");
            assert_eq!(second["rows"], 0);
        } else {
            assert_eq!(second["state"], "waiting", "{pause}");
            assert_eq!(second["blocked_by"], json!([held_pid]));
            // PostgreSQL itself says who waits for whom.
            let blockers: Vec<i32> = sqlx::query_scalar("SELECT pg_blocking_pids($1)")
                .bind(second_pid)
                .fetch_one(&pg)
                .await
                .unwrap();
            assert_eq!(blockers, vec![held_pid as i32]);
        }
        s.send(json!({"cmd": end})).await;
        let mut m = s.recv().await;
        while let Some(pause) = m.get("pause") {
            assert_eq!(pause["matches_model"], true, "{pause}");
            s.send(json!({"cmd": "next"})).await;
            m = s.recv().await;
        }
        let report = &m["report"];
        let w = &report["stepped"]["waiter"];
        assert_eq!(w["state"], "done", "{skip_locked} {end}: {report}");
        assert_eq!(w["rows"], rows, "{skip_locked} {end}: {report}");
        assert_eq!(report["matches_model"], true, "{report}");
        let sandbox = sandbox_of(report);
        let sent = ask(&pg, &sandbox, "SELECT count(*) FROM SB.kafka_log").await;
        assert_eq!(sent, records, "{skip_locked} {end}");
        assert!(!backend_alive(&pg, i64::from(second_pid)).await);
    }
    assert_eq!(leftovers(&pg).await, (0, 0, 0));
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_crash_at_every_publisher_pause_is_the_one_shot_restart_with_that_crash(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (addr, router) = serve(opts.clone(), config()).await;
    let pg = pool(&opts).await;
    for &crash in PublisherCrash::ALL {
        if crash == PublisherCrash::None {
            continue;
        }
        let mut s = Socket::open(addr, None).await;
        committed(&router, &s).await;
        let pause = step_to(&mut s, publisher(), crash.id()).await;
        let pid = pause["backend"]["pid"].as_i64().unwrap();
        s.send(json!({"cmd": "crash"})).await;
        let report = s.report().await;
        assert_eq!(report["matches_model"], true, "{crash}: {report}");
        assert_eq!(report["stepped"]["ended_at"], crash.id());
        // The crash is real: the held backend is gone, and the tables are PostgreSQL's.
        assert!(!backend_alive(&pg, pid).await, "{crash}");
        let sandbox = sandbox_of(&report);
        let marked = "SELECT count(*) FROM SB.outbox WHERE published_at IS NOT NULL";
        assert_eq!(ask(&pg, &sandbox, marked).await, 0, "{crash}");

        // The same crash in one go, in a sandbox of its own, does the same.
        let other = Socket::open(addr, None).await;
        committed(&router, &other).await;
        let form = format!("crash={}", crash.id());
        let one_shot = post(&router, "/api/restart", &form, &[("cookie", &other.cookie)]).await;
        assert_eq!(one_shot.status, StatusCode::OK, "{}", one_shot.json);
        assert_eq!(report["outcome"], one_shot.json["outcome"], "{crash}");
        assert_eq!(
            report["snapshot"]["kafka"].as_array().map(Vec::len),
            one_shot.json["snapshot"]["kafka"].as_array().map(Vec::len),
            "{crash}"
        );
    }
    assert_eq!(leftovers(&pg).await, (0, 0, 0));
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn the_consumers_line_and_inbox_row_are_inside_not_outside_and_a_crash_replays(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (addr, router) = serve(opts.clone(), config()).await;
    let pg = pool(&opts).await;
    let mut s = Socket::open(addr, None).await;
    published(&router, &s).await;

    let pause = begin(&mut s, consumer(true)).await;
    assert_eq!(pause["scenario"], "consumer", "{pause}");
    assert_eq!(pause["at"], "before_commit");
    assert_eq!(pause["next"], "commit");
    assert_eq!(pause["matches_model"], true, "{pause}");
    assert_eq!(pause["inside"]["history"].as_array().unwrap().len(), 1);
    assert_eq!(pause["inside"]["inbox"], json!(["event-ticket-900"]));
    let snap = post(&router, "/api/snapshot", "", &[("cookie", &s.cookie)]).await;
    let sandbox = sandbox_of(&snap.json);
    // Outside, PostgreSQL shows neither: they are the open transaction's.
    assert_eq!(
        ask(&pg, &sandbox, "SELECT count(*) FROM SB.history").await,
        0
    );
    assert_eq!(ask(&pg, &sandbox, "SELECT count(*) FROM SB.inbox").await, 0);

    // After its COMMIT, before the offset: History has the line for everyone.
    s.send(json!({"cmd": "next"})).await;
    let pause = s.pause().await;
    assert_eq!(pause["at"], "after_apply");
    assert_eq!(pause["next"], "offset");
    assert_eq!(pause["matches_model"], true, "{pause}");
    assert!(pause["inside"].is_null());
    assert_eq!(
        ask(&pg, &sandbox, "SELECT count(*) FROM SB.history").await,
        1
    );
    let offset = "SELECT coalesce((SELECT next_offset FROM SB.consumer_offsets), 0)";
    assert_eq!(ask(&pg, &sandbox, offset).await, 0);

    // It dies before the offset: the next run reads the event again, and the inbox skips it.
    s.send(json!({"cmd": "crash"})).await;
    let report = s.report().await;
    assert_eq!(
        report["outcome"], "consumer_crashed_after_apply",
        "{report}"
    );
    assert_eq!(report["matches_model"], true, "{report}");
    assert_eq!(report["stepped"]["ended_at"], "after_apply");
    assert_eq!(ask(&pg, &sandbox, offset).await, 0);
    let again = post(
        &router,
        "/api/consume",
        "inbox=on",
        &[("cookie", &s.cookie)],
    )
    .await;
    assert_eq!(again.json["outcome"], "duplicate_skipped", "{}", again.json);
    assert_eq!(
        ask(&pg, &sandbox, "SELECT count(*) FROM SB.history").await,
        1
    );
    assert_eq!(ask(&pg, &sandbox, offset).await, 1);
    assert_eq!(leftovers(&pg).await, (0, 0, 0));
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_crash_at_every_consumer_pause_is_the_one_shot_consume_with_that_crash(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (addr, router) = serve(opts.clone(), config()).await;
    let pg = pool(&opts).await;
    for inbox in [true, false] {
        for &crash in ConsumerCrash::ALL {
            if crash == ConsumerCrash::None {
                continue;
            }
            let mut s = Socket::open(addr, None).await;
            published(&router, &s).await;
            let pause = step_to(&mut s, consumer(inbox), crash.id()).await;
            let pid = pause["backend"]["pid"].as_i64().unwrap();
            s.send(json!({"cmd": "crash"})).await;
            let report = s.report().await;
            assert_eq!(report["matches_model"], true, "{crash}: {report}");
            if pid > 0 {
                assert!(!backend_alive(&pg, pid).await, "{crash}");
            }
            let sandbox = sandbox_of(&report);
            let lines = ask(&pg, &sandbox, "SELECT count(*) FROM SB.history").await;
            let expected_lines = i64::from(crash == ConsumerCrash::AfterApply);
            assert_eq!(lines, expected_lines, "{inbox} {crash}");

            let other = Socket::open(addr, None).await;
            published(&router, &other).await;
            let form = format!(
                "inbox={}&crash={}",
                if inbox { "on" } else { "off" },
                crash.id()
            );
            let one_shot = post(&router, "/api/consume", &form, &[("cookie", &other.cookie)]).await;
            assert_eq!(one_shot.status, StatusCode::OK, "{}", one_shot.json);
            assert_eq!(
                report["outcome"], one_shot.json["outcome"],
                "{inbox} {crash}"
            );
            assert_eq!(
                report["snapshot"]["history"], one_shot.json["snapshot"]["history"],
                "{inbox} {crash}"
            );
        }
    }
    assert_eq!(leftovers(&pg).await, (0, 0, 0));
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_scenario_refuses_what_it_does_not_take(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let (addr, router) = serve(opts.clone(), config()).await;
    let mut s = Socket::open(addr, None).await;
    // Nothing to publish: the publisher finds no row and simply returns.
    s.send(publisher()).await;
    assert_eq!(s.report().await["outcome"], "nothing_to_publish");
    committed(&router, &s).await;
    for command in [
        json!({"cmd": "begin", "scenario": "broker"}),
        json!({"cmd": "begin", "scenario": "publisher", "mode": "naive"}),
        json!({"cmd": "begin", "scenario": "consumer", "inbox": "maybe"}),
        json!({"cmd": "begin", "scenario": "ticket", "inbox": "on"}),
    ] {
        s.send(command.clone()).await;
        let error = s.error().await;
        assert_eq!(error["code"], "unknown_value", "{command}: {error}");
    }
    // The publisher has no other writer, and the ticket function no second publisher.
    let pause = begin(&mut s, publisher()).await;
    assert_eq!(pause["scenario"], "publisher");
    s.send(json!({"cmd": "other_writer"})).await;
    assert_eq!(s.error().await["code"], "step_not_now");
    s.send(json!({"cmd": "crash"})).await;
    let report = s.report().await;
    assert_eq!(
        report["outcome"], "publisher_crashed_before_send",
        "{report}"
    );
    s.send(json!({"cmd": "begin"})).await;
    s.pause().await;
    s.send(json!({"cmd": "other_publisher"})).await;
    assert_eq!(s.error().await["code"], "step_not_now");
}

/// The judged items of a report, as (item, predicted, actual, right).
fn judged(report: &Value) -> Vec<(String, String, String, bool)> {
    report["prediction"]["items"]
        .as_array()
        .unwrap_or_else(|| panic!("a judged prediction: {report}"))
        .iter()
        .map(|j| {
            (
                j["item"].as_str().unwrap().to_owned(),
                j["predicted"].as_str().unwrap().to_owned(),
                j["actual"].as_str().unwrap_or("?").to_owned(),
                j["right"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn predictions_of_the_publisher_and_the_consumer_are_judged_from_the_tables(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (addr, router) = serve(opts.clone(), config()).await;
    let pg = pool(&opts).await;
    let mut s = Socket::open(addr, None).await;
    committed(&router, &s).await;

    // Stepped: the learner expects the mark to stick; the publisher dies after it, before COMMIT.
    let begin = json!({"cmd": "begin", "scenario": "publisher",
        "predict_sends": "one", "predict_mark": "set"});
    step_to(&mut s, begin, "after_mark").await;
    s.send(json!({"cmd": "crash"})).await;
    let report = s.report().await;
    let sandbox = sandbox_of(&report);
    // What the tables say, asked of PostgreSQL: one record sent, the row still unmarked.
    assert_eq!(
        ask(&pg, &sandbox, "SELECT count(*) FROM SB.kafka_log").await,
        1
    );
    let marked = "SELECT count(*) FROM SB.outbox WHERE published_at IS NOT NULL";
    assert_eq!(ask(&pg, &sandbox, marked).await, 0);
    assert_eq!(
        judged(&report),
        [
            ("sends".into(), "one".into(), "one".into(), true),
            ("mark".into(), "set".into(), "null".into(), false),
        ]
    );
    assert_eq!(report["prediction"]["items"][1]["why"], "mark_needs_commit");

    // One-shot: the next restart sends it again and marks it.
    let form = "crash=none&predict_sends=one&predict_mark=set";
    let r = post(&router, "/api/restart", form, &[("cookie", &s.cookie)]).await;
    assert_eq!(r.json["outcome"], "published", "{}", r.json);
    assert!(
        r.json["prediction"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|j| j["right"] == true)
    );
    assert_eq!(
        ask(&pg, &sandbox, "SELECT count(*) FROM SB.kafka_log").await,
        2
    );

    // The consumer without its inbox applies both deliveries: History holds the event twice.
    let form = "inbox=off&predict_history=once";
    let r = post(&router, "/api/consume", form, &[("cookie", &s.cookie)]).await;
    let lines = "SELECT count(*) FROM SB.history WHERE event_id = 'event-ticket-900'";
    assert_eq!(ask(&pg, &sandbox, lines).await, 2);
    assert_eq!(
        judged(&r.json),
        [("history".into(), "once".into(), "twice".into(), false)]
    );
    assert_eq!(
        r.json["prediction"]["items"][0]["why"],
        "applied_again_without_inbox"
    );

    // The learner's map counts each scenario's own cases, from what PostgreSQL kept.
    let p = post(&router, "/api/progress", "", &[("cookie", &s.cookie)]).await;
    let maps = &p.json["after_commit"];
    assert_eq!(maps[0]["scenario"], "publisher", "{}", p.json);
    // The stepped crash after the mark lit the "sent, not marked" row; the restart the last.
    assert_eq!(
        maps[0]["explored"],
        json!(["crash_after_send", "crash_after_mark"])
    );
    assert_eq!(maps[1]["explored"], json!(["duplicate_applied"]));
    // The ticket function's own map still counts only its table.
    assert_eq!(p.json["explored"], 1);

    // A prediction the scenario does not have is refused before anything runs.
    let r = post(
        &router,
        "/api/consume",
        "predict_history=maybe",
        &[("cookie", &s.cookie)],
    )
    .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.json);
    assert_eq!(r.json["code"], "unknown_prediction");
    assert_eq!(ask(&pg, &sandbox, lines).await, 2);
    s.send(json!({"cmd": "begin", "scenario": "consumer", "predict_mark": "set"}))
        .await;
    assert_eq!(s.error().await["code"], "unknown_value");
}
