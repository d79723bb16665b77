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
async fn the_health_check_answers_200(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let app = app(opts);
    let response = app
        .oneshot(Request::get("/healthz").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}
