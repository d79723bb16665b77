//! The stepper over a real WebSocket (`GET /api/step`) against real PostgreSQL: every pause of
//! every mode, a crash at each, the lost reply, another writer, the idle timeout, a dropped
//! socket, the limits. What PostgreSQL holds is read from PostgreSQL, never taken from the
//! stepper's own report.

mod common;

use std::time::Duration;

use common::post;
use common::socket::{
    Socket, backend_alive, config, leftovers, outbox_rows, pauses_of, pool, serve, status, tables,
    until,
};
use futures_util::SinkExt;
use http::StatusCode;
use outbox_lab::catalog::{CrashPoint, Mode};
use outbox_lab::pg::LabConfig;
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use tokio_tungstenite::tungstenite::{self, Message as Frame};

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn every_pause_of_every_mode_shows_inside_and_outside_as_the_model_says(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (addr, _) = serve(opts.clone(), config()).await;
    for &mode in Mode::ALL {
        let mut s = Socket::open(addr, None).await;
        let mut pause = s.begin(mode).await;
        let mut seen = vec![];
        loop {
            seen.push(pause["at"].as_str().unwrap().to_owned());
            assert_eq!(pause["matches_model"], true, "{mode}: {pause}");
            assert!(pause["backend"]["pid"].as_i64().unwrap() > 0);
            if !pause["inside"].is_null() {
                assert_eq!(pause["backend"]["state"], "idle in transaction", "{pause}");
            }
            if pause["at"] == "after_begin" {
                // Nothing written yet: PostgreSQL has assigned no transaction id.
                assert!(pause["backend"]["xid"].is_null(), "{pause}");
                assert_eq!(status(&pause["inside"]), "open");
            }
            if pause["at"] == "after_update" {
                assert!(pause["backend"]["xid"].is_string(), "{pause}");
                // Inside: the transaction's own change; outside: committed data only.
                assert_eq!(status(&pause["inside"]), "resolved");
                assert_eq!(status(&pause["outside"]), "open");
                let locks = pause["locks"].as_array().unwrap();
                assert!(
                    locks.iter().any(|l| l["relation"] == "tickets"
                        && l["mode"] == "RowExclusiveLock"
                        && l["granted"] == true),
                    "{pause}"
                );
                assert!(
                    locks.iter().any(|l| l["locktype"] == "transactionid"),
                    "{pause}"
                );
            }
            if pause["at"] == "after_insert" {
                assert_eq!(outbox_rows(&pause["inside"]), 1);
                assert_eq!(outbox_rows(&pause["outside"]), 0);
            }
            s.send(json!({"cmd": "next"})).await;
            let m = s.recv().await;
            match m.get("pause") {
                Some(p) => pause = p.clone(),
                None => {
                    let report = &m["report"];
                    assert_eq!(report["matches_model"], true, "{report}");
                    assert_eq!(status(&report["snapshot"]), "resolved");
                    break;
                }
            }
        }
        let expected: Vec<&str> = pauses_of(mode).iter().map(|c| c.id()).collect();
        assert_eq!(seen, expected, "{mode}");
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_crash_at_every_pause_is_the_one_shot_attempt_with_that_crash_point(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (addr, router) = serve(opts.clone(), config()).await;
    let pg = pool(&opts).await;
    for &mode in Mode::ALL {
        for at in pauses_of(mode) {
            let mut s = Socket::open(addr, None).await;
            let pause = s.step_to(mode, at).await;
            let pid = pause["backend"]["pid"].as_i64().unwrap();
            s.send(json!({"cmd": "crash"})).await;
            let report = s.report().await;
            assert_eq!(report["matches_model"], true, "{mode} {at}: {report}");
            assert_eq!(report["stepped"]["ended_at"], at.id());
            // The crash is real: the held backend is gone, and the tables are PostgreSQL's.
            assert!(!backend_alive(&pg, pid).await, "{mode} {at}");
            let sandbox = report["sandbox"].as_str().unwrap();
            let (st, rows) = tables(&pg, sandbox).await;
            assert_eq!(st, status(&report["snapshot"]));
            assert_eq!(rows as usize, outbox_rows(&report["snapshot"]));

            // The same crash point in one go, in a fresh sandbox, gives the same outcome.
            let form = format!("mode={}&crash={}", mode.id(), at.id());
            let one_shot = post(&router, "/api/attempt", &form, &[]).await;
            assert_eq!(one_shot.status, StatusCode::OK, "{}", one_shot.json);
            assert_eq!(report["outcome"], one_shot.json["outcome"], "{mode} {at}");
            assert_eq!(
                report["snapshot"]["tickets"],
                one_shot.json["snapshot"]["tickets"]
            );
        }
    }
    assert_eq!(leftovers(&pg).await, (0, 0, 0));
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_lost_commit_reply_is_unknown_until_reconciled_for_both_fates(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (addr, router) = serve(opts.clone(), config()).await;
    let pg = pool(&opts).await;
    for (fate, status_after, reconciled) in [
        ("applied", "resolved", "reconciled_committed"),
        ("not_applied", "open", "reconciled_not_committed"),
    ] {
        let mut s = Socket::open(addr, None).await;
        let pause = s.step_to(Mode::Outbox, CrashPoint::AfterInsert).await;
        assert_eq!(pause["next"], "commit");
        s.send(json!({"cmd": "commit_reply_lost", "commit_fate": fate}))
            .await;
        let report = s.report().await;
        assert_eq!(report["outcome"], "commit_unknown", "{report}");
        assert_eq!(report["matches_model"], true);
        let (st, _) = tables(&pg, report["sandbox"].as_str().unwrap()).await;
        assert_eq!(st, status_after, "{fate}");
        let r = post(&router, "/api/reconcile", "", &[("cookie", &s.cookie)]).await;
        assert_eq!(r.json["outcome"], reconciled, "{}", r.json);
    }
    // Refused where COMMIT is not next, and with a fate that does not exist.
    let mut s = Socket::open(addr, None).await;
    s.step_to(Mode::Outbox, CrashPoint::AfterUpdate).await;
    s.send(json!({"cmd": "commit_reply_lost", "commit_fate": "applied"}))
        .await;
    assert_eq!(s.error().await["code"], "step_not_now");
    s.send(json!({"cmd": "commit_reply_lost", "commit_fate": "maybe"}))
        .await;
    assert_eq!(s.error().await["code"], "step_bad_fate");
    s.send(json!({"cmd": "crash"})).await;
    assert_eq!(s.report().await["outcome"], "crashed_after_update");
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn another_writer_waits_for_the_row_lock_and_finds_what_the_learner_left(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (addr, _) = serve(opts.clone(), config()).await;
    let pg = pool(&opts).await;
    for (end, rows, status_after) in [("next", 0, "resolved"), ("crash", 1, "resolved")] {
        let mut s = Socket::open(addr, None).await;
        let held = s.step_to(Mode::Outbox, CrashPoint::AfterInsert).await;
        let held_pid = held["backend"]["pid"].as_i64().unwrap();
        s.send(json!({"cmd": "other_writer"})).await;
        let pause = s.pause().await;
        let waiter = &pause["waiter"];
        assert_eq!(waiter["state"], "waiting", "{pause}");
        assert_eq!(waiter["blocked_by"], json!([held_pid]));
        // PostgreSQL itself says who waits for whom.
        let blockers: Vec<i32> = sqlx::query_scalar("SELECT pg_blocking_pids($1)")
            .bind(waiter["pid"].as_i64().unwrap() as i32)
            .fetch_one(&pg)
            .await
            .unwrap();
        assert_eq!(blockers, vec![held_pid as i32]);
        s.send(json!({"cmd": end})).await;
        if end == "next" {
            // COMMIT: the after-COMMIT pause, then the function returns.
            s.pause().await;
            s.send(json!({"cmd": "next"})).await;
        }
        let report = s.report().await;
        let w = &report["stepped"]["waiter"];
        assert_eq!(w["state"], "done", "{report}");
        assert_eq!(w["rows"], rows, "{end}: {report}");
        assert_eq!(report["matches_model"], true, "{report}");
        let (st, outbox) = tables(&pg, report["sandbox"].as_str().unwrap()).await;
        assert_eq!(st, status_after);
        // After a crash the other writer resolved the ticket without any outbox row.
        assert_eq!(outbox, if end == "next" { 1 } else { 0 });
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_writer_waiting_past_lock_timeout_is_cancelled_with_55p03(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let config = LabConfig {
        step_waiter_lock_timeout: Duration::from_millis(300),
        ..config()
    };
    let (addr, _) = serve(opts.clone(), config).await;
    let pg = pool(&opts).await;
    let mut s = Socket::open(addr, None).await;
    s.step_to(Mode::Outbox, CrashPoint::AfterUpdate).await;
    s.send(json!({"cmd": "other_writer"})).await;
    let pause = s.pause().await;
    let waiter_pid = pause["waiter"]["pid"].as_i64().unwrap();
    // Wait until PostgreSQL has cancelled the wait (the waiter no longer waits for a lock).
    until("the waiter's lock wait ends", || async {
        let waiting: bool = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1::int AND wait_event_type = 'Lock')",
        )
        .bind(waiter_pid)
        .fetch_one(&pg)
        .await
        .unwrap();
        !waiting
    })
    .await;
    s.send(json!({"cmd": "crash"})).await;
    let report = s.report().await;
    let w = &report["stepped"]["waiter"];
    assert_eq!(w["state"], "failed", "{report}");
    assert_eq!(w["sqlstate"], "55P03");
    assert_eq!(status(&report["snapshot"]), "open");
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn an_idle_stepped_transaction_is_ended_by_postgresql_itself(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let config = LabConfig {
        step_idle: Duration::from_secs(1),
        ..config()
    };
    let (addr, _) = serve(opts.clone(), config).await;
    let pg = pool(&opts).await;
    let mut s = Socket::open(addr, None).await;
    let pause = s.step_to(Mode::Outbox, CrashPoint::AfterInsert).await;
    let pid = pause["backend"]["pid"].as_i64().unwrap();
    // No command: PostgreSQL's idle_in_transaction_session_timeout ends it.
    let report = s.report().await;
    assert_eq!(report["stepped"]["idle_timeout"], true, "{report}");
    let fatal = report["trace"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["answer"]["error"]["sqlstate"] == "25P03");
    assert!(fatal, "PostgreSQL's FATAL 25P03 is in the trace: {report}");
    assert!(!backend_alive(&pg, pid).await);
    let (st, rows) = tables(&pg, report["sandbox"].as_str().unwrap()).await;
    assert_eq!((st.as_str(), rows), ("open", 0));
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_dropped_socket_is_the_process_dying(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let (addr, router) = serve(opts.clone(), config()).await;
    let pg = pool(&opts).await;
    let mut s = Socket::open(addr, None).await;
    let pause = s.step_to(Mode::Outbox, CrashPoint::AfterInsert).await;
    let pid = pause["backend"]["pid"].as_i64().unwrap();
    assert!(backend_alive(&pg, pid).await);
    let cookie = s.cookie.clone();
    drop(s);
    until("the held backend is gone", || async {
        !backend_alive(&pg, pid).await
    })
    .await;
    until("nothing is left behind", || async {
        leftovers(&pg).await == (0, 0, 0)
    })
    .await;
    // The next page load shows the result: the crash's report, kept as the last one once the
    // run has read the tables.
    let with_cookie = [("cookie", cookie.as_str())];
    until("the crash's report is kept", || async {
        let current = post(&router, "/api/current", "", &with_cookie).await;
        !current.json["outcome"].is_null()
    })
    .await;
    let current = post(&router, "/api/current", "", &with_cookie).await;
    assert_eq!(
        current.json["outcome"], "crashed_before_commit",
        "{}",
        current.json
    );
    let (st, rows) = tables(&pg, current.json["sandbox"].as_str().unwrap()).await;
    assert_eq!((st.as_str(), rows), ("open", 0));
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn one_stepped_transaction_per_sandbox_and_a_limit_per_process(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let config = LabConfig {
        step_sessions: 1,
        ..config()
    };
    let (addr, router) = serve(opts.clone(), config).await;
    let pg = pool(&opts).await;
    let mut first = Socket::open(addr, None).await;
    first.step_to(Mode::Outbox, CrashPoint::AfterUpdate).await;

    // The same learner in another tab.
    let mut second = Socket::open(addr, Some(&first.cookie)).await;
    second.send(json!({"cmd": "begin"})).await;
    let busy = second.error().await;
    assert!(
        ["step_busy", "step_limit"].contains(&busy["code"].as_str().unwrap()),
        "{busy}"
    );
    // Other actions on that sandbox are refused at once, and change nothing.
    let attempt = post(&router, "/api/attempt", "", &[("cookie", &first.cookie)]).await;
    assert_eq!(attempt.status, StatusCode::CONFLICT);
    assert_eq!(attempt.json["code"], "step_in_progress");

    // Another learner: the process holds its one stepped transaction already.
    let mut other = Socket::open(addr, None).await;
    other.send(json!({"cmd": "begin"})).await;
    assert_eq!(other.error().await["code"], "step_limit");
    let theirs = post(&router, "/api/snapshot", "", &[("cookie", &other.cookie)]).await;
    assert_eq!(status(&theirs.json["snapshot"]), "open");

    first.send(json!({"cmd": "crash"})).await;
    let report = first.report().await;
    let (st, rows) = tables(&pg, report["sandbox"].as_str().unwrap()).await;
    assert_eq!((st.as_str(), rows), ("open", 0));
    // Once it has ended, the sandbox is free again.
    second.send(json!({"cmd": "begin"})).await;
    assert_eq!(second.pause().await["at"], "after_begin");
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn another_learners_sandbox_is_untouched_by_a_stepped_commit(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (addr, router) = serve(opts.clone(), config()).await;
    let pg = pool(&opts).await;
    let bystander = post(&router, "/api/attempt", "crash=after_update", &[]).await;
    let theirs = bystander.json["sandbox"].as_str().unwrap().to_owned();
    let mut s = Socket::open(addr, None).await;
    s.step_to(Mode::Outbox, CrashPoint::AfterCommit).await;
    s.send(json!({"cmd": "next"})).await;
    let report = s.report().await;
    assert_ne!(report["sandbox"], theirs.as_str());
    assert_eq!(
        tables(&pg, report["sandbox"].as_str().unwrap()).await,
        ("resolved".to_owned(), 1)
    );
    assert_eq!(tables(&pg, &theirs).await, ("open".to_owned(), 0));
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn bad_commands_are_refused_and_another_site_cannot_open_the_socket(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (addr, _) = serve(opts.clone(), config()).await;
    let refused = Socket::try_open(addr, None, &[("origin", "https://evil.example")]).await;
    match refused {
        Err(tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), StatusCode::FORBIDDEN)
        }
        other => panic!(
            "a cross-site socket must be refused: {:?}",
            other.map(|_| ())
        ),
    }
    let mut s = Socket::open(addr, None).await;
    s.send(json!({"cmd": "next"})).await;
    assert_eq!(s.error().await["code"], "step_not_now");
    s.ws.send(Frame::Text("not json".into())).await.unwrap();
    assert_eq!(s.error().await["code"], "step_bad_command");
    s.send(json!({"cmd": "begin", "mode": "sideways"})).await;
    let e = s.error().await;
    assert_eq!(e["code"], "unknown_mode");
    assert!(e["message"].as_str().unwrap().contains("outbox"));
    s.send(json!({"cmd": "begin", "predict_client": "maybe"}))
        .await;
    assert_eq!(s.error().await["code"], "unknown_prediction");
    // Still usable.
    assert_eq!(s.begin(Mode::Outbox).await["at"], "after_begin");
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_stepped_run_judges_the_prediction_made_before_it(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (addr, _) = serve(opts.clone(), config()).await;
    let pg = pool(&opts).await;
    let mut s = Socket::open(addr, None).await;
    s.send(json!({"cmd": "begin", "predict_ticket": "resolved", "predict_client": "unknown"}))
        .await;
    assert_eq!(s.pause().await["at"], "after_begin");
    s.send(json!({"cmd": "next"})).await;
    assert_eq!(s.pause().await["at"], "after_update");
    s.send(json!({"cmd": "crash"})).await;
    let report = s.report().await;
    let items = report["prediction"]["items"].as_array().expect("judged");
    assert_eq!(items.len(), 2, "{report}");
    assert_eq!(items[0]["item"], "ticket");
    assert_eq!(items[0]["actual"], "open");
    assert_eq!(items[0]["right"], false);
    assert_eq!(items[0]["why"], "unfinished_rolled_back");
    assert_eq!(items[1]["item"], "client");
    assert_eq!(items[1]["right"], true);
    let sandbox = report["sandbox"].as_str().unwrap();
    assert_eq!(tables(&pg, sandbox).await, ("open".to_owned(), 0));
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn abandoned_stepping_sessions_leave_nothing_behind(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let sessions: usize = std::env::var("STEP_ABANDON_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let (addr, _) = serve(opts.clone(), config()).await;
    let pg = pool(&opts).await;
    let mut pids = vec![];
    let mut waves = tokio::task::JoinSet::new();
    for i in 0..sessions {
        waves.spawn(async move {
            let mut s = Socket::open(addr, None).await;
            let mode = Mode::ALL[i % Mode::ALL.len()];
            let pauses = pauses_of(mode);
            let at = pauses[rand::random_range(0..pauses.len())];
            let pause = s.step_to(mode, at).await;
            // Closed mid-transaction, without a word.
            drop(s);
            pause["backend"]["pid"].as_i64().unwrap()
        });
        if waves.len() >= 8
            && let Some(pid) = waves.join_next().await
        {
            pids.push(pid.unwrap());
        }
    }
    while let Some(pid) = waves.join_next().await {
        pids.push(pid.unwrap());
    }
    assert_eq!(pids.len(), sessions);
    until("every abandoned backend is gone", || async {
        let alive: i64 =
            sqlx::query_scalar("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1::int[])")
                .bind(pids.iter().map(|p| *p as i32).collect::<Vec<_>>())
                .fetch_one(&pg)
                .await
                .unwrap();
        alive == 0
    })
    .await;
    until("nothing is left behind", || async {
        leftovers(&pg).await == (0, 0, 0)
    })
    .await;
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn trace_a_stepped_to_its_commit_refuses_a_lost_reply_as_the_one_shot_attempt_does(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (addr, router) = serve(opts.clone(), config()).await;
    let mut s = Socket::open(addr, None).await;
    // Trace A's COMMIT is next after its UPDATE; /api/attempt has no lost reply for it.
    s.step_to(Mode::Naive, CrashPoint::AfterUpdate).await;
    s.send(json!({"cmd": "commit_reply_lost", "commit_fate": "applied"}))
        .await;
    assert_eq!(s.error().await["code"], "step_not_now");
    s.send(json!({"cmd": "next"})).await;
    let mut message = s.recv().await;
    while message.get("pause").is_some() {
        s.send(json!({"cmd": "next"})).await;
        message = s.recv().await;
    }
    assert_eq!(message["report"]["outcome"], "naive_published", "{message}");
    // What it kept reconciles (or says there is nothing to), never a server error.
    let reconciled = post(&router, "/api/reconcile", "", &[("cookie", &s.cookie)]).await;
    assert!(!reconciled.status.is_server_error(), "{}", reconciled.json);
}

/// Each pause goes out drawn by the server in the page's language beside its JSON: the page's
/// script only swaps `view.html` in, so what the learner reads cannot drift from the pause.
#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn each_pause_arrives_drawn_in_the_sockets_language(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (addr, _) = serve(opts.clone(), config()).await;
    let cyrillic = |s: &str| s.chars().any(|c| ('\u{0400}'..='\u{04FF}').contains(&c));
    for (cookie, russian) in [(None, true), (Some("lang=en"), false)] {
        let extra: Vec<(&'static str, &str)> = cookie.map(|c| ("cookie", c)).into_iter().collect();
        let (ws, cookie) = Socket::try_open(addr, None, &extra)
            .await
            .expect("upgraded");
        let mut s = Socket { ws, cookie };
        s.send(json!({"cmd": "begin", "mode": "outbox"})).await;
        let m = s.recv().await;
        let pid = m["pause"]["backend"]["pid"]
            .as_i64()
            .expect("a pause with its backend");
        let (place, html) = (
            m["view"]["where"].as_str().expect("the pause's sentence"),
            m["view"]["html"].as_str().expect("the pause's drawing"),
        );
        assert!(
            html.contains(&format!("<dd data-pg=\"pid\">{pid}</dd>")),
            "{html}"
        );
        assert!(html.contains("data-row=\"status\""), "{html}");
        assert_eq!(cyrillic(place), russian, "{place}");
        assert_eq!(cyrillic(html), russian, "{html}");
        s.send(json!({"cmd": "crash"})).await;
        assert!(s.report().await["outcome"].is_string());
    }
}
