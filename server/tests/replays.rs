//! Shared runs: `POST /api/share`, the replay page (`/replay/<id>`, `/embed?replay=<id>`) and
//! `POST /api/replay`, on a fresh database per test.

mod common;

use app::backend::request::WebSettings;
use common::{app, app_with, cookie_pair, get, post};
use http::StatusCode;
use outbox_lab::pg::{LabConfig, RateLimit, ReplayPolicy};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

async fn replays_kept(opts: &PgConnectOptions) -> i64 {
    let pool = sqlx::PgPool::connect_with(opts.clone()).await.unwrap();
    let n = sqlx::query_scalar("SELECT count(*) FROM lab.replays")
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    n
}

/// A learner who ran `form` (an attempt's fields): their cookie.
async fn learner_after(app: &axum::Router, path: &str, form: &str) -> String {
    let first = post(app, path, form, &[]).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.json);
    cookie_pair(&first.cookie.expect("a sandbox cookie"))
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_shared_run_gets_one_link_that_replays_it_step_by_step(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts.clone());
    let cookie = learner_after(&app, "/api/attempt", "crash=after_insert").await;
    let shared = post(&app, "/api/share", "", &[("cookie", &cookie)]).await;
    assert_eq!(shared.status, StatusCode::OK, "{}", shared.json);
    let id = shared.json["id"].as_str().expect("an id").to_owned();
    assert_eq!(id.len(), 32);
    assert_eq!(shared.json["url"], format!("/replay/{id}"));
    // The same run again: the same link, one row.
    let again = post(&app, "/api/share", "", &[("cookie", &cookie)]).await;
    assert_eq!(again.json["id"], id.as_str());
    assert_eq!(replays_kept(&opts).await, 1);

    // What is kept names no sandbox.
    let report = post(&app, "/api/replay", &format!("id={id}"), &[]).await;
    assert_eq!(report.status, StatusCode::OK, "{}", report.json);
    assert_eq!(report.json["sandbox"], "");
    let sandbox = post(&app, "/api/current", "", &[("cookie", &cookie)])
        .await
        .json["sandbox"]
        .as_str()
        .expect("the learner's sandbox")
        .to_owned();
    assert!(
        !report.json.to_string().contains(&sandbox),
        "the kept run does not name {sandbox}"
    );
    assert_eq!(report.json["outcome"], "crashed_before_commit");
    let steps = report.json["trace"].as_array().expect("a trace").len();

    // The page: before the run, then the INSERT's step with the row inside and not outside.
    let (status, cookies, _, page) = get(&app, &format!("/replay/{id}?lang=en"), &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert!(cookies.is_empty(), "a replay sets no sandbox cookie");
    assert!(page.contains("Before the run"), "{page}");
    let insert_at = report.json["trace"]
        .as_array()
        .unwrap()
        .iter()
        .position(|s| {
            s["sent"]["sql"]["sql"]
                .as_str()
                .is_some_and(|q| q.starts_with("INSERT INTO outbox"))
        })
        .expect("the INSERT")
        + 1;
    let (_, _, _, page) = get(&app, &format!("/replay/{id}?lang=en&step={insert_at}"), &[]).await;
    assert!(
        page.contains(&format!("Step {insert_at} of {steps}")),
        "{page}"
    );
    assert!(page.contains("Inside the open transaction"));
    let inside = section(&page, "replay-inside");
    let outside = section(&page, "replay-outside");
    assert!(inside.contains("event-ticket-900"), "{inside}");
    assert!(!outside.contains("event-ticket-900"), "{outside}");
    // Past the end is the end.
    let (_, _, _, end) = get(&app, &format!("/replay/{id}?step=9999"), &[]).await;
    assert!(end.contains(&format!("Шаг {steps} из {steps}")));
}

/// The HTML of the element whose class starts with `class` (up to the next `</section>`).
fn section<'p>(page: &'p str, class: &str) -> &'p str {
    let start = page
        .find(&format!("class=\"panel {class}"))
        .unwrap_or_else(|| panic!("no {class} in {page}"));
    let rest = &page[start..];
    &rest[..rest.find("</section>").unwrap_or(rest.len())]
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn nothing_is_shared_for_a_newcomer_or_an_empty_run(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts.clone());
    let newcomer = post(&app, "/api/share", "", &[]).await;
    assert_eq!(newcomer.status, StatusCode::CONFLICT);
    assert_eq!(newcomer.json["code"], "nothing_to_share");
    assert!(newcomer.cookie.is_none(), "sharing claims no sandbox");
    assert_eq!(common::claimed_sandboxes(&opts).await, 0);
    assert_eq!(replays_kept(&opts).await, 0);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_run_too_large_or_a_share_too_many_is_refused_and_keeps_nothing(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let config = LabConfig {
        replays: ReplayPolicy {
            max_bytes: 4 * 1024,
            per_client: RateLimit {
                per_second: 0.001,
                burst: 2.0,
            },
            ..ReplayPolicy::default()
        },
        ..LabConfig::default()
    };
    let app = app_with(opts.clone(), config, WebSettings::default());
    let big = format!(
        "payload={}",
        "{%22a%22:%22".to_owned() + &"x".repeat(6000) + "%22}"
    );
    let cookie = learner_after(&app, "/api/attempt", &big).await;
    let refused = post(&app, "/api/share", "", &[("cookie", &cookie)]).await;
    assert_eq!(
        refused.status,
        StatusCode::PAYLOAD_TOO_LARGE,
        "{}",
        refused.json
    );
    assert_eq!(refused.json["code"], "replay_too_large");
    assert_eq!(replays_kept(&opts).await, 0);

    // Small runs (the big row reset away): two from this address, then the budget is spent.
    post(&app, "/api/reset", "", &[("cookie", &cookie)]).await;
    for crash in ["none", "after_update"] {
        post(
            &app,
            "/api/attempt",
            &format!("crash={crash}"),
            &[("cookie", &cookie)],
        )
        .await;
        let ok = post(&app, "/api/share", "", &[("cookie", &cookie)]).await;
        assert_eq!(ok.status, StatusCode::OK, "{}", ok.json);
    }
    post(
        &app,
        "/api/attempt",
        "crash=after_insert",
        &[("cookie", &cookie)],
    )
    .await;
    let third = post(&app, "/api/share", "", &[("cookie", &cookie)]).await;
    assert_eq!(third.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(third.json["code"], "share_rate_limited");
    assert_eq!(replays_kept(&opts).await, 2);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_plain_form_goes_to_the_replay_and_an_embed_stays_in_its_frame(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts.clone());
    let cookie = learner_after(&app, "/api/race", "").await;
    let html = [("cookie", cookie.as_str()), ("accept", "text/html")];
    let form = post(&app, "/api/share?lang=en", "", &html).await;
    assert!(form.status.is_redirection(), "{:?}", form.status);
    let to = form.location.expect("a Location");
    assert!(
        to.starts_with("/replay/") && to.ends_with("?lang=en"),
        "{to}"
    );
    let (status, _, _, page) = get(&app, &to, &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("data-replay"));

    // From an embed (its frame token in the address), the replay opens in the frame.
    let (_, _, frame, _) = get(&app, "/embed?lang=en", &[]).await;
    let frame = frame.expect("the embed gives its frame a token");
    let token = frame.split("s=").nth(1).expect("a token").to_owned();
    let path = format!("/api/attempt?s={token}&lang=en");
    assert_eq!(post(&app, &path, "", &[]).await.status, StatusCode::OK);
    let shared = post(
        &app,
        &format!("/api/share?s={token}&lang=en"),
        "",
        &[("accept", "text/html")],
    )
    .await;
    let to = shared.location.expect("a Location");
    assert!(to.starts_with("/embed?replay="), "{to}");
    // The embed's replay needs no token and gets none.
    let (status, _, redirect, page) = get(&app, &to, &[]).await;
    assert_eq!(status, StatusCode::OK, "{redirect:?}");
    assert!(page.contains("data-replay") && page.contains("replay="));
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn an_expired_or_unknown_link_says_so_and_is_forgotten(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts.clone());
    let cookie = learner_after(&app, "/api/attempt", "").await;
    let id = post(&app, "/api/share", "", &[("cookie", &cookie)])
        .await
        .json["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let pool = sqlx::PgPool::connect_with(opts.clone()).await.unwrap();
    sqlx::query("UPDATE lab.replays SET expires_at = now() - interval '1 second'")
        .execute(&pool)
        .await
        .unwrap();
    for path in [
        format!("/replay/{id}?lang=en"),
        "/replay/not-an-id?lang=en".to_owned(),
    ] {
        let (status, _, _, page) = get(&app, &path, &[]).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert!(page.contains("replay_not_found"), "{page}");
    }
    let api = post(&app, "/api/replay", "id=zz", &[]).await;
    assert_eq!(api.status, StatusCode::NOT_FOUND);
    let lab = outbox_lab::pg::Lab::with_options(opts.clone(), LabConfig::default());
    assert_eq!(lab.forget_expired_replays().await.unwrap(), 1);
    assert_eq!(replays_kept(&opts).await, 0);
    pool.close().await;
}

/// A run stored before the report grew (format 1, without the fields added since: lanes,
/// steps, answer times, prediction, stepped, after-COMMIT) still replays.
#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_run_stored_in_an_older_format_still_replays(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts.clone());
    let stored = include_str!("fixtures/replay-format-1.json");
    let id = "0123456789abcdef0123456789abcdef";
    let pool = sqlx::PgPool::connect_with(opts.clone()).await.unwrap();
    sqlx::query(
        "INSERT INTO lab.replays (id, report, expires_at) VALUES ($1, $2, now() + interval '1 day')",
    )
    .bind(id)
    .bind(stored)
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    let (status, _, _, page) = get(&app, &format!("/replay/{id}?lang=en&step=2"), &[]).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains("Step 2 of"), "{page}");
    assert!(
        !page.contains("data-rebuilt"),
        "the old run rebuilds step by step"
    );
}
