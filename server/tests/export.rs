//! `GET /api/export`: the sandbox's last run as psql scripts, named by the cookie or an
//! embed's frame token like every other endpoint.

mod common;

use axum::body::Body;
use common::{app, claimed_sandboxes, cookie_pair, get, post};
use http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use tower::ServiceExt;

struct Download {
    status: StatusCode,
    content_type: String,
    disposition: String,
    body: String,
}

async fn download(app: &axum::Router, path: &str, extra: &[(&str, &str)]) -> Download {
    let mut request = Request::get(path);
    for (k, v) in extra {
        request = request.header(*k, *v);
    }
    let response = app
        .clone()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let header_of = |name| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let (content_type, disposition) = (
        header_of(header::CONTENT_TYPE),
        header_of(header::CONTENT_DISPOSITION),
    );
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    Download {
        status,
        content_type,
        disposition,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

fn code(d: &Download) -> String {
    let json: serde_json::Value = serde_json::from_str(&d.body).unwrap_or_default();
    json["code"].as_str().unwrap_or_default().to_owned()
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn an_attempt_downloads_as_a_named_psql_file(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let app = app(opts);
    let first = post(&app, "/api/attempt", "crash=after_insert", &[]).await;
    let cookie = cookie_pair(&first.cookie.expect("a sandbox cookie"));
    let d = download(&app, "/api/export", &[("cookie", &cookie)]).await;
    assert_eq!(d.status, StatusCode::OK, "{}", d.body);
    assert_eq!(d.content_type, "text/plain; charset=utf-8");
    assert_eq!(
        d.disposition,
        "attachment; filename=\"outbox-ticket-42-after_insert-session-a.sql\""
    );
    assert!(d.body.starts_with("-- Outbox playground, lesson 8.2"));
    assert!(d.body.contains("CREATE TABLE tickets ("));
    assert!(d.body.contains("kill this psql now"));
    // `session=a` is the default; a one-session run has no B.
    let a = download(&app, "/api/export?session=a", &[("cookie", &cookie)]).await;
    assert_eq!(a.body, d.body);
    let b = download(&app, "/api/export?session=b", &[("cookie", &cookie)]).await;
    assert_eq!(b.status, StatusCode::NOT_FOUND);
    assert_eq!(code(&b), "no_such_session");
    let bad = download(&app, "/api/export?session=zz", &[("cookie", &cookie)]).await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(code(&bad), "unknown_value");
    let side = download(&app, "/api/export?side=left", &[("cookie", &cookie)]).await;
    assert_eq!(side.status, StatusCode::UNPROCESSABLE_ENTITY);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_race_has_a_script_for_session_b(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let app = app(opts);
    let race = post(&app, "/api/race", "", &[]).await;
    assert_eq!(race.status, StatusCode::OK, "{}", race.json);
    let cookie = cookie_pair(&race.cookie.expect("a sandbox cookie"));
    let b = download(&app, "/api/export?session=b", &[("cookie", &cookie)]).await;
    assert_eq!(b.status, StatusCode::OK, "{}", b.body);
    assert_eq!(
        b.disposition,
        "attachment; filename=\"outbox-ticket-42-race-session-b.sql\""
    );
    assert!(b.body.contains("(session B): run now, it will wait"));
    assert!(
        !b.body.contains("CREATE TABLE"),
        "session A sets the tables up"
    );
    let a = download(&app, "/api/export", &[("cookie", &cookie)]).await;
    assert!(a.body.contains("CREATE TABLE"));
    assert!(a.body.contains("outbox-ticket-42-race-session-b.sql"));
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_newcomer_gets_a_clear_refusal_and_no_sandbox(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts.clone());
    let ru = download(&app, "/api/export", &[]).await;
    assert_eq!(ru.status, StatusCode::NOT_FOUND);
    assert_eq!(code(&ru), "no_run");
    assert!(ru.body.contains("Скачивать пока нечего"), "{}", ru.body);
    let en = download(&app, "/api/export?lang=en&session=b", &[]).await;
    assert_eq!(code(&en), "no_run");
    assert!(en.body.contains("no run to download"), "{}", en.body);
    // A cookie that names no sandbox is no better, and nothing was claimed.
    let forged = download(&app, "/api/export", &[("cookie", "sandbox=forged")]).await;
    assert_eq!(code(&forged), "no_run");
    assert_eq!(claimed_sandboxes(&opts).await, 0);
    // A sandbox whose last action was a reset has no run either... but a reset is a run of
    // its own: it downloads as the tables it left.
    let reset = post(&app, "/api/reset", "", &[]).await;
    let cookie = cookie_pair(&reset.cookie.expect("a sandbox cookie"));
    let d = download(&app, "/api/export", &[("cookie", &cookie)]).await;
    assert_eq!(d.status, StatusCode::OK, "{}", d.body);
    assert!(
        d.body
            .contains("INSERT INTO tickets (id, status) VALUES ('ticket-42', 'open');")
    );
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn each_learner_and_each_frame_gets_their_own_run(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts);
    let one = post(&app, "/api/attempt", "crash=after_update", &[]).await;
    let two = post(&app, "/api/attempt", "crash=after_commit", &[]).await;
    let (c1, c2) = (
        cookie_pair(&one.cookie.unwrap()),
        cookie_pair(&two.cookie.unwrap()),
    );
    let d1 = download(&app, "/api/export", &[("cookie", &c1)]).await;
    let d2 = download(&app, "/api/export", &[("cookie", &c2)]).await;
    assert!(
        d1.disposition.contains("after_update"),
        "{}",
        d1.disposition
    );
    assert!(
        d2.disposition.contains("after_commit"),
        "{}",
        d2.disposition
    );

    // A frame names its sandbox by its token, in the export's address too.
    let location = get(&app, "/embed", &[]).await.2.unwrap();
    let token = location.rsplit_once("s=").unwrap().1.to_owned();
    let acted = post(&app, &format!("/api/race?s={token}"), "", &[]).await;
    assert_eq!(acted.status, StatusCode::OK, "{}", acted.json);
    let framed = download(&app, &format!("/api/export?s={token}&session=b"), &[]).await;
    assert_eq!(framed.status, StatusCode::OK, "{}", framed.body);
    assert!(framed.disposition.contains("race-session-b"));
    // The frame's token, not a learner's cookie beside it, decides.
    let both = download(&app, &format!("/api/export?s={token}"), &[("cookie", &c1)]).await;
    assert!(
        both.disposition.contains("race-session-a"),
        "{}",
        both.disposition
    );
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_comparison_downloads_either_side(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let app = app(opts);
    let first = post(&app, "/api/reset", "", &[]).await;
    let cookie = cookie_pair(&first.cookie.unwrap());
    let none = download(&app, "/api/export?side=wrong", &[("cookie", &cookie)]).await;
    assert_eq!(code(&none), "no_run");
    let form = "way=naive&crash=after_commit";
    let c = post(&app, "/api/compare", form, &[("cookie", &cookie)]).await;
    assert_eq!(c.status, StatusCode::OK, "{}", c.json);
    let wrong = download(&app, "/api/export?side=wrong", &[("cookie", &cookie)]).await;
    assert_eq!(wrong.status, StatusCode::OK, "{}", wrong.body);
    assert!(
        wrong
            .disposition
            .contains("compare-wrong-naive-after_commit-session-a"),
        "{}",
        wrong.disposition
    );
    let right = download(&app, "/api/export?side=outbox", &[("cookie", &cookie)]).await;
    assert!(right.disposition.contains("compare-outbox-after_commit"));
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn the_page_links_each_sessions_script_and_the_embed_carries_its_token(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts);
    // Before any run there is nothing to download, so no link.
    let (_, _, _, page) = get(&app, "/", &[]).await;
    assert!(!page.contains("/api/export"), "no link without a run");

    let race = post(&app, "/api/race", "", &[]).await;
    let cookie = cookie_pair(&race.cookie.unwrap());
    let (status, _, _, page) = get(&app, "/?lang=en", &[("cookie", &cookie)]).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains(r#"<a href="/api/export" download data-export-session="a""#),
        "{page}"
    );
    assert!(page.contains("Download as psql"));
    assert!(page.contains(r#"href="/api/export?session=b" download data-export-session="b""#));
    assert!(!page.contains("session=c"), "a race has two sessions");
    let (_, _, _, ru) = get(&app, "/", &[("cookie", &cookie)]).await;
    assert!(ru.contains("Скачать для psql"));

    let location = get(&app, "/embed?lang=en", &[]).await.2.unwrap();
    let token = location.rsplit_once("s=").unwrap().1.to_owned();
    post(
        &app,
        &format!("/api/attempt?s={token}"),
        "crash=after_update",
        &[],
    )
    .await;
    let (_, _, _, framed) = get(&app, &location, &[]).await;
    let href = format!(r#"href="/api/export?s={token}&amp;lang=en" download"#);
    assert!(framed.contains(&href), "{framed}");
}
