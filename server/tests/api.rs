//! The HTTP API driven through the router (no sockets), on a fresh database per test.

mod common;

use axum::body::Body;
use common::{app, cookie_pair, post};
use http::{Request, StatusCode};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use tower::ServiceExt;

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn an_attempt_answers_a_report_and_gives_a_newcomer_a_sandbox_cookie(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts);
    let first = post(&app, "/api/attempt", "crash=after_update", &[]).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.json);
    assert_eq!(first.json["outcome"], "crashed_after_update");
    assert_eq!(first.json["matches_model"], true);
    assert_eq!(first.json["snapshot"]["tickets"][0]["status"], "open");
    let set_cookie = first.cookie.expect("a sandbox cookie");
    assert!(set_cookie.contains("HttpOnly") && set_cookie.contains("SameSite=Lax"));

    // The cookie brings the learner back to the same sandbox.
    let cookie = cookie_pair(&set_cookie);
    let again = post(&app, "/api/attempt", "", &[("cookie", &cookie)]).await;
    assert_eq!(again.json["outcome"], "committed");
    assert_eq!(again.json["sandbox"], first.json["sandbox"]);
    assert!(again.cookie.is_none(), "no new sandbox for a known learner");
    let snap = post(&app, "/api/snapshot", "", &[("cookie", &cookie)]).await;
    assert_eq!(snap.json["snapshot"]["tickets"][0]["status"], "resolved");
    assert_eq!(
        snap.json["snapshot"]["outbox"][0]["event_id"],
        "event-ticket-900"
    );
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn unknown_values_are_refused_with_a_clear_message_in_the_learners_language(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts);
    let ru = post(&app, "/api/attempt", "crash=after_lunch", &[]).await;
    assert_eq!(ru.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(ru.json["code"], "unknown_crash_point");
    assert!(
        ru.json["message"]
            .as_str()
            .unwrap()
            .contains("Неизвестная точка падения")
    );

    let referer = [("referer", "http://127.0.0.1:3000/?lang=en")];
    let en = post(&app, "/api/attempt", "commit_fate=maybe", &referer).await;
    assert_eq!(en.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(en.json["code"], "unknown_commit_fate");
    assert!(
        en.json["message"]
            .as_str()
            .unwrap()
            .starts_with("Unknown commit fate"),
        "{}",
        en.json
    );
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn reconcile_before_any_attempt_is_a_conflict(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let app = app(opts);
    let answer = post(&app, "/api/reconcile", "", &[]).await;
    assert_eq!(answer.status, StatusCode::CONFLICT);
    assert_eq!(answer.json["code"], "nothing_to_reconcile");
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn reopen_and_reset_answer_reports(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let app = app(opts);
    let first = post(&app, "/api/attempt", "crash=none", &[]).await;
    let cookie = cookie_pair(&first.cookie.unwrap());
    let reopened = post(&app, "/api/reopen", "", &[("cookie", &cookie)]).await;
    assert_eq!(reopened.json["action"], "reopen");
    assert_eq!(reopened.json["snapshot"]["tickets"][0]["status"], "open");
    assert_eq!(
        reopened.json["snapshot"]["outbox"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let conflict = post(&app, "/api/attempt", "crash=none", &[("cookie", &cookie)]).await;
    assert_eq!(conflict.json["outcome"], "insert_conflict");
    let reset = post(&app, "/api/reset", "", &[("cookie", &cookie)]).await;
    assert_eq!(
        reset.json["snapshot"]["outbox"].as_array().unwrap().len(),
        0
    );
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_form_post_returns_to_its_page_without_the_links_presets(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts);
    let page = "http://127.0.0.1:3000/?mode=naive&crash=after_commit&autorun=1&lang=en";
    let html = [("accept", "text/html"), ("referer", page)];
    let done = post(&app, "/api/attempt", "crash=after_update", &html).await;
    assert!(done.status.is_redirection(), "{}", done.status);
    // Kept, `autorun=1` would run the link's attempt again over the learner's.
    assert_eq!(
        done.location.as_deref(),
        Some("http://127.0.0.1:3000/?lang=en")
    );

    // A refusal travels in the address, for the page to show.
    let cookie = cookie_pair(&done.cookie.expect("a sandbox cookie"));
    let refused = post(
        &app,
        "/api/attempt",
        "crash=nowhere",
        &[
            ("accept", "text/html"),
            ("referer", page),
            ("cookie", &cookie),
        ],
    )
    .await;
    let location = refused.location.expect("a redirect");
    assert!(
        location.starts_with("http://127.0.0.1:3000/?lang=en&"),
        "{location}"
    );
    assert!(location.contains("__err="), "{location}");
    assert!(!location.contains("autorun"), "{location}");
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn the_health_check_answers_200(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let app = app(opts);
    let response = app
        .oneshot(Request::get("/healthz").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_race_answers_two_lanes_and_one_winner(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let app = app(opts);
    let race = post(&app, "/api/race", "", &[]).await;
    assert_eq!(race.status, StatusCode::OK, "{}", race.json);
    assert_eq!(race.json["outcome"], "race_one_winner");
    assert_eq!(race.json["race"]["a"], "committed");
    assert_eq!(race.json["race"]["b"], "guard_rejected");
    assert!(race.json["race"]["lock_wait"]["waiting_pid"].is_i64());
    assert_eq!(race.json["matches_model"], true);
    let cookie = cookie_pair(&race.cookie.expect("a sandbox cookie"));

    let refused = post(
        &app,
        "/api/race",
        "mistakes=on_conflict_do_nothing",
        &[("cookie", &cookie)],
    )
    .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(refused.json["code"], "mistake_not_in_race");
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn the_ladder_is_climbed_over_http_restart_then_consume(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts);
    let first = post(&app, "/api/attempt", "crash=after_commit", &[]).await;
    assert_eq!(first.json["outcome"], "committed_then_crashed");
    let cookie = cookie_pair(&first.cookie.expect("a sandbox cookie"));
    let c = [("cookie", cookie.as_str())];
    let r = post(&app, "/api/restart", "crash=after_send", &c).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.json);
    assert_eq!(r.json["outcome"], "publisher_crashed_after_send");
    assert!(r.json["snapshot"]["outbox"][0]["published_at"].is_null());
    assert_eq!(
        r.json["after_commit"]["publisher"]["sent"][0],
        "event-ticket-900"
    );
    let r = post(&app, "/api/restart", "", &c).await;
    assert_eq!(r.json["outcome"], "published");
    assert_eq!(r.json["snapshot"]["kafka"].as_array().unwrap().len(), 2);
    let r = post(&app, "/api/consume", "inbox=on&crash=none", &c).await;
    assert_eq!(r.json["outcome"], "duplicate_skipped");
    assert_eq!(r.json["snapshot"]["history"].as_array().unwrap().len(), 1);
    assert_eq!(r.json["matches_model"], true);
    let r = post(&app, "/api/publish_race", "skip_locked=off", &c).await;
    assert_eq!(r.json["outcome"], "nothing_to_publish");
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_comparison_runs_beside_the_learners_sandbox_and_is_kept(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts);
    let first = post(&app, "/api/reset", "", &[]).await;
    let cookie = cookie_pair(&first.cookie.expect("a sandbox cookie"));
    let none = post(&app, "/api/last_compare", "", &[("cookie", &cookie)]).await;
    assert_eq!(none.status, StatusCode::OK);
    assert!(none.json.is_null(), "{}", none.json);

    let form = "way=naive&crash=after_commit";
    let c = post(&app, "/api/compare", form, &[("cookie", &cookie)]).await;
    assert_eq!(c.status, StatusCode::OK, "{}", c.json);
    assert_eq!(c.json["difference"], "status_without_event");
    assert_eq!(c.json["outbox"]["outcome"], "committed_then_crashed");
    assert_eq!(c.json["wrong"]["outcome"], "naive_event_lost");
    assert_ne!(c.json["outbox"]["sandbox"], first.json["sandbox"]);

    let kept = post(&app, "/api/last_compare", "", &[("cookie", &cookie)]).await;
    assert_eq!(kept.json, c.json);
    // The learner's own tables did not move.
    let snap = post(&app, "/api/snapshot", "", &[("cookie", &cookie)]).await;
    assert_eq!(snap.json["snapshot"], first.json["snapshot"]);

    let referer = [
        ("cookie", cookie.as_str()),
        ("referer", "http://127.0.0.1:3000/?lang=en"),
    ];
    let bad = post(
        &app,
        "/api/compare",
        "way=naive&crash=after_insert",
        &referer,
    )
    .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(bad.json["code"], "crash_point_not_in_mode");
    assert!(
        bad.json["message"]
            .as_str()
            .unwrap()
            .contains("none, after_begin, after_update, after_commit"),
        "{}",
        bad.json
    );
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_prediction_is_judged_in_the_report_and_counted_in_the_progress(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts);
    let none = post(&app, "/api/progress", "", &[]).await;
    assert_eq!(none.status, StatusCode::OK);
    assert_eq!(none.json["explored"], 0);
    assert_eq!(none.json["total"], 6);
    assert!(none.cookie.is_none(), "reading progress claims no sandbox");

    let form = "crash=after_insert&predict_ticket=resolved&predict_client=unknown";
    let r = post(&app, "/api/attempt", form, &[]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.json);
    let cookie = cookie_pair(&r.cookie.expect("a sandbox cookie"));
    let items = r.json["prediction"]["items"]
        .as_array()
        .expect("judged items");
    assert_eq!(items.len(), 2, "{}", r.json);
    assert_eq!(items[0]["item"], "ticket");
    assert_eq!(items[0]["actual"], "open");
    assert_eq!(items[0]["right"], false);
    assert_eq!(items[0]["why"], "unfinished_rolled_back");
    assert_eq!(items[1]["item"], "client");
    assert_eq!(items[1]["right"], true);

    let p = post(&app, "/api/progress", "", &[("cookie", &cookie)]).await;
    assert_eq!(p.json["explored"], 1, "{}", p.json);
    let row = p.json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["row"] == "crash_before_commit")
        .expect("the row");
    assert_eq!(row["explored"], true);
    assert_eq!(row["predicted"], false);
    assert_eq!(p.json["predictions"]["made"], 1);
    assert_eq!(p.json["predictions"]["right"], 0);

    let on = post(
        &app,
        "/api/predict_first",
        "on=true",
        &[("cookie", &cookie)],
    )
    .await;
    assert_eq!(on.json["predict_first"], true, "{}", on.json);
    let reset = post(&app, "/api/reset", "", &[("cookie", &cookie)]).await;
    assert_eq!(reset.status, StatusCode::OK);
    let p = post(&app, "/api/progress", "", &[("cookie", &cookie)]).await;
    assert_eq!(p.json["explored"], 1, "reset keeps the map: {}", p.json);
    let over = post(&app, "/api/start_over", "", &[("cookie", &cookie)]).await;
    assert_eq!(over.status, StatusCode::OK);
    let p = post(&app, "/api/progress", "", &[("cookie", &cookie)]).await;
    assert_eq!(p.json["explored"], 0, "start over clears it: {}", p.json);
    assert_eq!(p.json["predictions"]["made"], 0);
}
