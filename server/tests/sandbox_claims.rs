//! Who gets a sandbox, and when: looking costs nothing, an action claims at most one, a client
//! address has a budget of new ones, a full registry recycles the least recently used idle
//! sandbox, and no page of another site can act on (or replace) a learner's sandbox.

mod common;

use std::net::SocketAddr;

use axum::extract::ConnectInfo;
use common::{app, app_with, claimed_sandboxes, cookie_pair, get, post};
use http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use outbox_lab::pg::LabConfig;
use outbox_lab::pg::RateLimit;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use tower::ServiceExt;

/// These tests take turns. Pages rendered at once on several tests' runtimes (each
/// `#[sqlx::test]` has its own) now and then left one render waiting forever; one at a time
/// they never did.
static TURNS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn looking_at_the_page_or_the_embed_creates_no_sandbox(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let _turn = TURNS.lock().await;
    let app = app(opts.clone());
    for _ in 0..50 {
        let (status, cookies, _, body) = get(&app, "/?lang=en", &[]).await;
        assert_eq!(status, StatusCode::OK);
        assert!(cookies.is_empty(), "a page view set {cookies:?}");
        // The learner sees the lesson's initial state, and that their sandbox comes later.
        assert!(
            body.contains("data-sandbox=\"\""),
            "no sandbox shown as absent"
        );
        assert!(body.contains("ticket-42"));
    }
    for (path, _) in [
        ("/api/current", ()),
        ("/api/snapshot", ()),
        ("/api/last_compare", ()),
    ] {
        let read = post(&app, path, "", &[]).await;
        assert_eq!(read.status, StatusCode::OK, "{path}: {}", read.json);
        assert!(read.cookie.is_none(), "{path} set a cookie");
    }
    // An embed gets its token in a redirect, but no sandbox until it acts.
    let (status, cookies, location, _) = get(&app, "/embed?lang=ru", &[]).await;
    assert!(status.is_redirection());
    assert!(cookies.is_empty());
    let location = location.expect("a redirect with the frame's token");
    assert!(location.starts_with("/embed?lang=ru&s="), "{location}");
    let (status, cookies, _, _) = get(&app, &location, &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert!(cookies.is_empty());
    assert_eq!(claimed_sandboxes(&opts).await, 0);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_first_view_then_a_first_action_land_in_one_sandbox_with_one_cookie(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let _turn = TURNS.lock().await;
    let app = app(opts.clone());
    let (_, cookies, _, _) = get(&app, "/?lang=en", &[]).await;
    assert!(cookies.is_empty());
    let first = post(&app, "/api/attempt", "crash=after_commit", &[]).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.json);
    let cookie = cookie_pair(&first.cookie.expect("the first action sets the cookie"));
    assert_eq!(claimed_sandboxes(&opts).await, 1);
    let sandbox = first.json["sandbox"].as_str().unwrap().to_owned();

    // The next page view shows that sandbox, spends no new one and sets no cookie.
    let (_, cookies, _, body) = get(&app, "/?lang=en", &[("cookie", &cookie)]).await;
    assert!(cookies.is_empty(), "{cookies:?}");
    assert!(
        body.contains(&sandbox),
        "the page shows the learner's sandbox"
    );
    assert_eq!(claimed_sandboxes(&opts).await, 1);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn two_frames_of_one_course_page_get_two_sandboxes_at_their_first_actions(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let _turn = TURNS.lock().await;
    let app = app(opts.clone());
    let token = |location: String| location.rsplit_once("s=").unwrap().1.to_owned();
    let a = token(get(&app, "/embed", &[]).await.2.unwrap());
    let b = token(get(&app, "/embed", &[]).await.2.unwrap());
    assert_ne!(a, b);
    let act = |t: String| {
        let app = app.clone();
        async move { post(&app, &format!("/api/reset?s={t}"), "", &[]).await }
    };
    let (ra, rb) = (act(a.clone()).await, act(b.clone()).await);
    assert_eq!((ra.status, rb.status), (StatusCode::OK, StatusCode::OK));
    assert!(
        ra.cookie.is_none() && rb.cookie.is_none(),
        "frames use no cookie"
    );
    assert_ne!(ra.json["sandbox"], rb.json["sandbox"]);
    // The same frame's next action finds its sandbox again.
    let again = act(a).await;
    assert_eq!(again.json["sandbox"], ra.json["sandbox"]);
    assert_eq!(claimed_sandboxes(&opts).await, 2);
}

/// A cookie-less POST from `addr`, as a socket peer (what `ConnectInfo` carries).
async fn post_from(app: &axum::Router, addr: SocketAddr, path: &str) -> StatusCode {
    let mut request = Request::post(path)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::ACCEPT, "application/json")
        .body(axum::body::Body::empty())
        .unwrap();
    request.extensions_mut().insert(ConnectInfo(addr));
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    if status == StatusCode::TOO_MANY_REQUESTS {
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(json["code"], "sandbox_rate_limited", "{json}");
        assert!(!json["message"].as_str().unwrap_or_default().is_empty());
    }
    status
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn one_address_gets_no_more_new_sandboxes_than_its_budget(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let _turn = TURNS.lock().await;
    const BURST: usize = 20;
    let config = LabConfig {
        // No refill during the test: the budget is exactly the burst.
        claims_per_client: RateLimit {
            per_second: 0.000_1,
            burst: BURST as f32,
        },
        ..LabConfig::default()
    };
    let app = app_with(opts.clone(), config, Default::default());
    let scripted: SocketAddr = "203.0.113.7:40000".parse().unwrap();
    let mut created = 0;
    for _ in 0..1_000 {
        match post_from(&app, scripted, "/api/reset").await {
            StatusCode::OK => created += 1,
            StatusCode::TOO_MANY_REQUESTS => {}
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!(created, BURST);
    assert_eq!(claimed_sandboxes(&opts).await, BURST as i64);
    // Another address is not punished for it.
    let neighbour: SocketAddr = "198.51.100.1:40000".parse().unwrap();
    assert_eq!(
        post_from(&app, neighbour, "/api/reset").await,
        StatusCode::OK
    );
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_full_registry_recycles_the_least_recently_used_idle_sandbox(
    pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let _turn = TURNS.lock().await;
    let _ = pool;
    let config = LabConfig {
        max_sandboxes: 2,
        recycle_after: std::time::Duration::from_secs(60),
        ..LabConfig::default()
    };
    let app = app_with(opts.clone(), config, Default::default());
    let old = post(&app, "/api/attempt", "crash=none", &[]).await;
    let old_cookie = cookie_pair(old.cookie.as_deref().unwrap());
    let recent = post(&app, "/api/reset", "", &[]).await;
    assert_eq!(recent.status, StatusCode::OK);

    // Both are younger than the minimum idle time: a newcomer is refused, nobody loses work.
    let refused = post(&app, "/api/reset", "", &[]).await;
    assert_eq!(
        refused.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        refused.json
    );
    assert_eq!(refused.json["code"], "sandbox_limit");

    // The first learner went quiet long ago; the second only a while ago.
    let db = sqlx::PgPool::connect_with(opts.clone()).await.unwrap();
    for (name, idle) in [
        (&old.json["sandbox"], "2 hours"),
        (&recent.json["sandbox"], "10 minutes"),
    ] {
        sqlx::query(
            "UPDATE lab.sandboxes SET last_used_at = now() - $2::interval WHERE schema_name = $1",
        )
        .bind(name.as_str().unwrap())
        .bind(idle)
        .execute(&db)
        .await
        .unwrap();
    }
    let newcomer = post(&app, "/api/current", "", &[]).await;
    assert_eq!(newcomer.status, StatusCode::OK, "reading needs no sandbox");
    let newcomer = post(&app, "/api/reset", "", &[]).await;
    assert_eq!(newcomer.status, StatusCode::OK, "{}", newcomer.json);
    assert_eq!(
        newcomer.json["sandbox"], old.json["sandbox"],
        "the oldest idle one"
    );
    // It came back in the initial state, without the former learner's report.
    let status: String = sqlx::query_scalar(&format!(
        "SELECT status FROM \"{}\".tickets WHERE id = 'ticket-42'",
        old.json["sandbox"].as_str().unwrap()
    ))
    .fetch_one(&db)
    .await
    .unwrap();
    assert_eq!(status, "open");
    // The former learner's cookie now names nothing: they get a fresh start, not the newcomer's.
    let former = post(&app, "/api/current", "", &[("cookie", &old_cookie)]).await;
    assert_eq!(former.json["sandbox"], "", "{}", former.json);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_page_of_another_site_can_neither_act_nor_claim(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let _turn = TURNS.lock().await;
    let app = app(opts.clone());
    let learner = post(&app, "/api/attempt", "crash=none", &[]).await;
    let cookie = cookie_pair(learner.cookie.as_deref().unwrap());
    for path in [
        "/api/reset",
        "/api/attempt",
        "/api/reopen",
        "/api/race",
        "/api/compare",
    ] {
        for forged in [
            vec![("sec-fetch-site", "cross-site")],
            vec![("sec-fetch-site", "same-site")],
            vec![
                ("origin", "https://evil.example"),
                ("host", "127.0.0.1:3000"),
            ],
        ] {
            // The browser leaves the SameSite=Lax cookie behind on such a post.
            let refused = post(&app, path, "", &forged).await;
            assert_eq!(refused.status, StatusCode::FORBIDDEN, "{path} {forged:?}");
            assert_eq!(refused.json["code"], "cross_site");
            assert!(refused.cookie.is_none(), "{path}: no new sandbox cookie");
        }
    }
    // A browser gets a short page in the learner's language with a way back.
    let page = post(
        &app,
        "/api/reset?lang=en",
        "",
        &[("sec-fetch-site", "cross-site"), ("accept", "text/html")],
    )
    .await;
    assert_eq!(page.status, StatusCode::FORBIDDEN);
    assert_eq!(claimed_sandboxes(&opts).await, 1, "nothing was claimed");
    let still = post(&app, "/api/current", "", &[("cookie", &cookie)]).await;
    assert_eq!(still.json["sandbox"], learner.json["sandbox"]);
    assert_eq!(
        still.json["outcome"], "committed",
        "the learner's work is intact"
    );

    // The playground's own pages, and tools that send no browser headers, still act.
    let own = post(
        &app,
        "/api/reset",
        "",
        &[("sec-fetch-site", "same-origin"), ("cookie", &cookie)],
    )
    .await;
    assert_eq!(own.status, StatusCode::OK);
    let own = post(
        &app,
        "/api/reset",
        "",
        &[
            ("origin", "http://127.0.0.1:3000"),
            ("host", "127.0.0.1:3000"),
            ("cookie", &cookie),
        ],
    )
    .await;
    assert_eq!(own.status, StatusCode::OK);
    let curl = post(&app, "/api/reset", "", &[("cookie", &cookie)]).await;
    assert_eq!(curl.status, StatusCode::OK);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn over_https_the_sandbox_cookie_is_secure_and_host_bound(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let _turn = TURNS.lock().await;
    let web = app::backend::request::WebSettings {
        public_origin: Some("https://playground.example.org".into()),
        ..Default::default()
    };
    let app = app_with(opts, LabConfig::default(), web);
    let request = Request::post("/api/reset")
        .header(header::ACCEPT, "application/json")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(axum::body::Body::empty())
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let cookie = response
        .headers()
        .get(header::SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .unwrap()
        .to_owned();
    assert!(cookie.starts_with("__Host-sandbox="), "{cookie}");
    assert!(
        cookie.contains("; Secure") && cookie.contains("Path=/"),
        "{cookie}"
    );
    assert!(!cookie.contains("Domain"), "{cookie}");
    // The page is never handed to another site with the embed's token in its Referer.
    let (_, _, _, _) = get(&app, "/", &[]).await;
    let page = app
        .clone()
        .oneshot(Request::get("/").body(axum::body::Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(
        page.headers().get(header::REFERRER_POLICY).unwrap(),
        "same-origin"
    );
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn an_unknown_field_is_refused_by_name_and_runs_nothing(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let _turn = TURNS.lock().await;
    let app = app(opts.clone());
    let typo = post(
        &app,
        "/api/attempt",
        "mistake=insert_outside_tx&crash=after_insert",
        &[],
    )
    .await;
    assert_eq!(
        typo.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        typo.json
    );
    assert_eq!(typo.json["code"], "unknown_field");
    let message = typo.json["message"].as_str().unwrap();
    assert!(
        message.contains("«mistake»") && message.contains("mistakes"),
        "{message}"
    );
    let english = post(&app, "/api/reset?lang=en", "force=1", &[]).await;
    assert_eq!(english.json["code"], "unknown_field");
    assert!(
        english.json["message"]
            .as_str()
            .unwrap()
            .contains("“force”")
    );
    assert_eq!(
        claimed_sandboxes(&opts).await,
        0,
        "nothing ran, nothing was claimed"
    );

    // A plain form post comes back to its page with the refusal for the page to show.
    let page = "http://127.0.0.1:3000/?lang=en";
    let back = post(
        &app,
        "/api/attempt",
        "mistake=x",
        &[("accept", "text/html"), ("referer", page)],
    )
    .await;
    assert!(back.status.is_redirection(), "{}", back.status);
    let location = back.location.unwrap();
    assert!(
        location.starts_with("http://127.0.0.1:3000/?lang=en&__path=%2Fapi%2Fattempt&__err="),
        "{location}"
    );
}

#[test]
fn every_server_function_has_its_fields_known() {
    let known = app::backend::fields::known_paths();
    for (path, _) in leptos::server_fn::axum::server_fn_paths() {
        assert!(
            known.contains(&path),
            "{path} is missing from app::backend::fields"
        );
    }
}
