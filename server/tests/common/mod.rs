//! Shared set-up for the HTTP tests: the router on the fresh database `#[sqlx::test]` made,
//! driven without sockets.

#![allow(dead_code)]

pub mod socket;

use app::backend::request::WebSettings;
use app::backend::state::AppState;
use axum::Router;
use axum::body::Body;
use http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use leptos::prelude::LeptosOptions;
use outbox_lab::pg::{Lab, LabConfig};
use serde_json::Value;
use server::routes::router;
use server::server_state::ServerState;
use sqlx::postgres::PgConnectOptions;
use tower::ServiceExt;

pub fn app(opts: PgConnectOptions) -> Router {
    app_with(opts, LabConfig::default(), WebSettings::default())
}

/// The router with other limits or another way of being reached (always without a warm pool,
/// so no background work runs beside a test's own requests).
pub fn app_with(opts: PgConnectOptions, config: LabConfig, web: WebSettings) -> Router {
    app_and_shutdown(opts, config, web).0
}

/// [`app_with`], and the sender that tells its stepper sockets the server shuts down.
pub fn app_and_shutdown(
    opts: PgConnectOptions,
    config: LabConfig,
    web: WebSettings,
) -> (Router, tokio::sync::watch::Sender<bool>) {
    app_lti(opts, config, web, None)
}

/// The router with LTI configured (or not).
pub fn app_with_lti(opts: PgConnectOptions, lti: server::lti::Configured) -> Router {
    app_lti(opts, LabConfig::default(), WebSettings::default(), lti).0
}

fn app_lti(
    opts: PgConnectOptions,
    config: LabConfig,
    web: WebSettings,
    lti: server::lti::Configured,
) -> (Router, tokio::sync::watch::Sender<bool>) {
    let lab = Lab::with_options(
        opts,
        LabConfig {
            warm_sandboxes: 0,
            ..config
        },
    );
    let leptos = LeptosOptions::builder()
        .output_name("outbox-playground")
        .site_root("target/site")
        .build();
    let (sockets, shutdown) = server::client_sockets::Sockets::new(
        server::config::DEFAULT_SOCKETS_PER_CLIENT,
        server::config::DEFAULT_STEP_RUNS_PER_CLIENT,
    );
    let router = router(ServerState {
        leptos,
        app: AppState::new(lab, web),
        frame_ancestors: server::headers::FrameAncestors::parse("http://localhost:4321")
            .expect("a valid origin"),
        sockets,
        lti,
    });
    (router, shutdown)
}

pub struct Answer {
    pub status: StatusCode,
    pub cookie: Option<String>,
    pub location: Option<String>,
    pub json: Value,
}

pub async fn post(app: &Router, path: &str, form: &str, extra: &[(&str, &str)]) -> Answer {
    let form_type = "application/x-www-form-urlencoded";
    post_raw(app, path, form_type, form.as_bytes().to_vec(), extra).await
}

/// Posts any bytes with any content type; the answer's body is read as JSON if it is JSON.
pub async fn post_raw(
    app: &Router,
    path: &str,
    content_type: &str,
    body: Vec<u8>,
    extra: &[(&str, &str)],
) -> Answer {
    let mut request = Request::post(path)
        .header(header::CONTENT_TYPE, content_type)
        .header(header::CONTENT_LENGTH, body.len());
    if !extra.iter().any(|(k, _)| k.eq_ignore_ascii_case("accept")) {
        request = request.header(header::ACCEPT, "application/json");
    }
    for (k, v) in extra {
        request = request.header(*k, *v);
    }
    let response = app
        .clone()
        .oneshot(request.body(Body::from(body)).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let cookie = sandbox_cookies(response.headers())
        .into_iter()
        .find(|v| v.starts_with("sandbox="));
    let location = location_of(response.headers());
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Answer {
        status,
        cookie,
        location,
        json,
    }
}

/// The `Set-Cookie` lines that set a sandbox cookie (`sandbox` or `__Host-sandbox`).
fn sandbox_cookies(headers: &http::HeaderMap) -> Vec<String> {
    headers
        .get_all(header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter(|v| v.contains("sandbox="))
        .map(str::to_owned)
        .collect()
}

fn location_of(headers: &http::HeaderMap) -> Option<String> {
    headers
        .get(header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

pub fn cookie_pair(set_cookie: &str) -> String {
    set_cookie.split(';').next().unwrap().to_owned()
}

/// A page (or any GET) as a browser without a cookie asks for it; answers status, the
/// `sandbox` cookies it set, its Location and its body.
pub async fn get(
    app: &Router,
    path: &str,
    extra: &[(&str, &str)],
) -> (StatusCode, Vec<String>, Option<String>, String) {
    let mut request = Request::get(path);
    for (k, v) in extra {
        request = request.header(*k, *v);
    }
    let response = app
        .clone()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let cookies = sandbox_cookies(response.headers());
    let location = location_of(response.headers());
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        cookies,
        location,
        String::from_utf8_lossy(&body).into_owned(),
    )
}

/// How many sandboxes a learner holds (claimed ones; the warm pool is off in tests).
pub async fn claimed_sandboxes(opts: &PgConnectOptions) -> i64 {
    let pool = sqlx::PgPool::connect_with(opts.clone()).await.unwrap();
    let n = sqlx::query_scalar("SELECT count(*) FROM lab.sandboxes WHERE token_hash IS NOT NULL")
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    n
}
