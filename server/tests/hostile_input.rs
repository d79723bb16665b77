//! Hostile input: malformed, oversized, wrongly typed and malicious requests. Every one must
//! get a 4xx (or a harmless 200) with a clear message in the learner's language, never a 5xx,
//! and must never change another learner's sandbox.

mod common;

use common::{Answer, app, cookie_pair, post, post_raw};
use http::StatusCode;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

const FORM: &str = "application/x-www-form-urlencoded";
const ENDPOINTS: &[&str] = &[
    "/api/current",
    "/api/snapshot",
    "/api/reset",
    "/api/reopen",
    "/api/attempt",
    "/api/reconcile",
    "/api/race",
    "/api/compare",
    "/api/last_compare",
    "/api/progress",
    "/api/start_over",
    "/api/predict_first",
    "/api/restart",
    "/api/publish_race",
    "/api/consume",
];

/// A learner whose sandbox must stay exactly as it is while others misbehave.
struct Victim {
    cookie: String,
    sandbox: Value,
    snapshot: Value,
}

async fn victim(app: &axum::Router) -> Victim {
    let first = post(app, "/api/attempt", "crash=none", &[]).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.json);
    Victim {
        cookie: cookie_pair(&first.cookie.expect("a sandbox cookie")),
        sandbox: first.json["sandbox"].clone(),
        snapshot: first.json["snapshot"].clone(),
    }
}

async fn assert_untouched(app: &axum::Router, v: &Victim) {
    let now = post(app, "/api/snapshot", "", &[("cookie", &v.cookie)]).await;
    assert_eq!(now.status, StatusCode::OK);
    assert_eq!(
        now.json["sandbox"], v.sandbox,
        "the victim keeps its sandbox"
    );
    assert_eq!(
        now.json["snapshot"], v.snapshot,
        "the victim's tables are unchanged"
    );
}

/// A refusal: a 4xx whose body names a stable code and says something.
fn assert_refused(a: &Answer, what: &str) {
    assert!(
        a.status.is_client_error(),
        "{what}: {} {}",
        a.status,
        a.json
    );
    let code = a.json["code"].as_str().unwrap_or_default();
    let message = a.json["message"].as_str().unwrap_or_default();
    assert!(
        !code.is_empty() && !message.is_empty(),
        "{what}: {}",
        a.json
    );
}

fn assert_refused_with(a: &Answer, status: StatusCode, code: &str, what: &str) {
    assert_refused(a, what);
    assert_eq!(a.status, status, "{what}: {}", a.json);
    assert_eq!(a.json["code"], code, "{what}: {}", a.json);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn invalid_fields_are_refused_and_change_nothing(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts);
    let v = victim(&app).await;
    let long_id = format!("event_id={}", "x".repeat(129));
    let big_payload = format!("payload={}", "a".repeat(8193));
    let cases: &[(&str, StatusCode, &str)] = &[
        (
            "crash=after_lunch",
            StatusCode::UNPROCESSABLE_ENTITY,
            "unknown_crash_point",
        ),
        (
            "crash=AFTER_UPDATE",
            StatusCode::UNPROCESSABLE_ENTITY,
            "unknown_crash_point",
        ),
        (
            "commit_fate=1%3BDROP+TABLE+tickets",
            StatusCode::UNPROCESSABLE_ENTITY,
            "unknown_commit_fate",
        ),
        (
            &long_id,
            StatusCode::UNPROCESSABLE_ENTITY,
            "event_id_too_long",
        ),
        (
            "event_id=a%0Ab",
            StatusCode::UNPROCESSABLE_ENTITY,
            "event_id_control_char",
        ),
        (
            "event_id=a%00b",
            StatusCode::UNPROCESSABLE_ENTITY,
            "event_id_control_char",
        ),
        (
            &big_payload,
            StatusCode::UNPROCESSABLE_ENTITY,
            "payload_too_long",
        ),
        (
            "mode=sideways",
            StatusCode::UNPROCESSABLE_ENTITY,
            "unknown_mode",
        ),
        (
            "mistakes=forgot_commit",
            StatusCode::UNPROCESSABLE_ENTITY,
            "unknown_mistake",
        ),
        (
            "mode=naive&crash=after_insert",
            StatusCode::UNPROCESSABLE_ENTITY,
            "crash_point_not_in_mode",
        ),
        (
            "mode=naive_publish_first&mistakes=unguarded_update",
            StatusCode::UNPROCESSABLE_ENTITY,
            "mistakes_need_outbox",
        ),
        (
            "mistakes=insert_outside_tx%2Cupdate_outside_tx",
            StatusCode::UNPROCESSABLE_ENTITY,
            "both_outside_tx",
        ),
        (
            "payload=%7B%7D%00",
            StatusCode::UNPROCESSABLE_ENTITY,
            "payload_nul_byte",
        ),
        (
            "predict_client=maybe",
            StatusCode::UNPROCESSABLE_ENTITY,
            "unknown_prediction",
        ),
        (
            "crash=after_update&predict_ticket=RESOLVED",
            StatusCode::UNPROCESSABLE_ENTITY,
            "unknown_prediction",
        ),
        (
            "predict_outbox=row&predict_kafka=%3Cscript%3E",
            StatusCode::UNPROCESSABLE_ENTITY,
            "unknown_prediction",
        ),
        // Percent-encoded bytes that are not UTF-8 decode to U+FFFD, an unknown value.
        (
            "crash=%FF%FE",
            StatusCode::UNPROCESSABLE_ENTITY,
            "unknown_crash_point",
        ),
    ];
    for (form, status, code) in cases {
        let a = post(&app, "/api/attempt", form, &[("cookie", &v.cookie)]).await;
        assert_refused_with(&a, *status, code, form);
        // The victim sends the bad request itself: its tables still must not move.
        assert_untouched(&app, &v).await;
    }
    // Nor its progress: only the victim's first attempt is on the map, with no prediction.
    let progress = post(&app, "/api/progress", "", &[("cookie", &v.cookie)]).await;
    assert_eq!(progress.status, StatusCode::OK);
    assert_eq!(progress.json["explored"], 1, "{}", progress.json);
    assert_eq!(progress.json["predictions"]["made"], 0, "{}", progress.json);
    let a = post(
        &app,
        "/api/predict_first",
        "on=maybe",
        &[("cookie", &v.cookie)],
    )
    .await;
    assert_refused_with(
        &a,
        StatusCode::UNPROCESSABLE_ENTITY,
        "unknown_value",
        "on=maybe",
    );
    let progress = post(&app, "/api/progress", "", &[("cookie", &v.cookie)]).await;
    assert_eq!(
        progress.json["predict_first"],
        Value::Null,
        "{}",
        progress.json
    );
    // After COMMIT: a crash point of another actor, or a switch that is neither on nor off.
    for (path, form) in [
        ("/api/restart", "crash=after_apply"),
        ("/api/restart", "crash=AFTER_SEND"),
        ("/api/consume", "crash=before_send"),
        ("/api/consume", "inbox=maybe"),
        ("/api/publish_race", "skip_locked=%3Cscript%3E"),
    ] {
        let a = post(&app, path, form, &[("cookie", &v.cookie)]).await;
        assert_refused_with(&a, StatusCode::UNPROCESSABLE_ENTITY, "unknown_value", form);
        assert_untouched(&app, &v).await;
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn unknown_fields_are_refused_by_name_on_every_endpoint_and_change_nothing(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    // Each check reads the victim's sandbox once: more reads than its default request budget.
    let config = outbox_lab::pg::LabConfig {
        rate: outbox_lab::pg::RateLimit {
            per_second: 1000.0,
            burst: 1000.0,
        },
        ..Default::default()
    };
    let app = common::app_with(opts, config, Default::default());
    let v = victim(&app).await;
    for path in ENDPOINTS {
        for form in [
            "mistake=insert_outside_tx",
            "crash=none&Crash=after_update",
            "__proto__=1",
            "%27%3B+DROP+TABLE+tickets%3B--=1",
        ] {
            let a = post(&app, path, form, &[("cookie", &v.cookie)]).await;
            assert_refused_with(&a, StatusCode::UNPROCESSABLE_ENTITY, "unknown_field", form);
            assert_untouched(&app, &v).await;
        }
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn unreadable_bodies_get_a_400_in_the_learners_language(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts);
    let v = victim(&app).await;
    let ru = post_raw(
        &app,
        "/api/attempt",
        FORM,
        vec![b'c', 0xff, b'=', 0xfe],
        &[],
    )
    .await;
    assert_refused_with(&ru, StatusCode::BAD_REQUEST, "bad_request", "invalid UTF-8");
    assert!(
        ru.json["message"]
            .as_str()
            .unwrap()
            .starts_with("Запрос не удалось прочитать"),
        "{}",
        ru.json
    );
    let referer = ("referer", "http://127.0.0.1:3000/?lang=en");
    let en = post_raw(&app, "/api/attempt", FORM, vec![0xff], &[referer]).await;
    assert_refused(&en, "invalid UTF-8, English");
    assert!(
        en.json["message"]
            .as_str()
            .unwrap()
            .starts_with("The request could not be read"),
        "{}",
        en.json
    );
    let json = post_raw(
        &app,
        "/api/attempt",
        "application/json",
        br#"{"crash": ["#.to_vec(),
        &[("cookie", &v.cookie)],
    )
    .await;
    assert!(
        json.status.is_client_error() || json.status == StatusCode::OK,
        "a JSON body: {} {}",
        json.status,
        json.json
    );
    assert!(!json.status.is_server_error());
    assert_untouched(&app, &v).await;
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn an_oversized_body_is_refused_before_it_is_read(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts);
    let v = victim(&app).await;
    let huge = format!("payload={}", "a".repeat(2 * 1024 * 1024));
    let a = post(&app, "/api/attempt", &huge, &[("cookie", &v.cookie)]).await;
    assert_eq!(a.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", a.json);
    assert_untouched(&app, &v).await;
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn sql_and_html_in_values_are_stored_as_data(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let app = app(opts);
    let v = victim(&app).await;
    let event_id = "'; DROP TABLE tickets; -- <img src=x onerror=alert(1)>";
    let form = format!(
        "event_id={}&payload={}",
        urlencode(event_id),
        urlencode(r#"{"html": "<script>alert(1)</script>"}"#)
    );
    let a = post(&app, "/api/attempt", &form, &[]).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.json);
    assert_eq!(a.json["outcome"], "committed");
    assert_eq!(a.json["snapshot"]["outbox"][0]["event_id"], event_id);
    assert_eq!(a.json["snapshot"]["tickets"][0]["status"], "resolved");
    assert_ne!(a.json["sandbox"], v.sandbox);
    assert_untouched(&app, &v).await;
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn forged_and_foreign_cookies_never_reach_another_sandbox(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts);
    let v = victim(&app).await;
    let token = v.cookie.trim_start_matches("sandbox=").to_owned();
    let mut flipped = token.clone().into_bytes();
    flipped[0] = if flipped[0] == b'0' { b'1' } else { b'0' };
    let flipped = String::from_utf8(flipped).unwrap();
    let schema = v.sandbox.as_str().unwrap().to_owned();
    let forged = [
        "sandbox=zzz".to_owned(),
        format!("sandbox={flipped}"),
        format!("sandbox={schema}"),
        format!("sandbox={}", token.to_uppercase()),
        format!("sandbox={token}x"),
        "sandbox=' OR 1=1 --".to_owned(),
    ];
    for cookie in &forged {
        let a = post(&app, "/api/reset", "", &[("cookie", cookie)]).await;
        assert!(!a.status.is_server_error(), "{cookie}: {}", a.status);
        if a.status == StatusCode::OK {
            assert_ne!(a.json["sandbox"], v.sandbox, "{cookie} reached the victim");
            assert!(
                a.cookie.is_some(),
                "{cookie}: a stranger gets a sandbox of its own"
            );
        } else {
            assert_refused(&a, cookie);
        }
        assert_untouched(&app, &v).await;
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn unknown_routes_and_methods_are_client_errors(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts);
    let a = post(&app, "/api/drop_everything", "", &[]).await;
    assert!(a.status.is_client_error(), "{}", a.status);
    let response = tower::ServiceExt::oneshot(
        app.clone(),
        http::Request::get("/api/attempt")
            .body(axum::body::Body::empty())
            .unwrap(),
    )
    .await
    .unwrap();
    assert!(response.status().is_client_error(), "{}", response.status());
}

/// Values a fuzzer should try: hostile, odd, wrongly typed, and a few valid ones.
const DICTIONARY: &[&str] = &[
    "none",
    "after_update",
    "after_insert",
    "after_commit",
    "commit_reply_lost",
    "applied",
    "not_applied",
    "random",
    "event-ticket-900",
    "'; DROP SCHEMA lab CASCADE; --",
    "<script>alert(1)</script>",
    "%FF",
    "%00",
    "%E2%80%AE",
    "{\"a\":1}",
    "{not json",
    "[]",
    "-1",
    "1e999",
    "true",
    "",
];
const FIELDS: &[&str] = &[
    "crash",
    "commit_fate",
    "event_id",
    "payload",
    "crash[]",
    "lang",
    "x",
];

fn random_body(rng: &mut StdRng) -> Vec<u8> {
    let mut body = Vec::new();
    for i in 0..rng.random_range(0..5) {
        if i > 0 {
            body.push(b'&');
        }
        body.extend_from_slice(FIELDS[rng.random_range(0..FIELDS.len())].as_bytes());
        if rng.random_bool(0.9) {
            body.push(b'=');
        }
        body.extend_from_slice(DICTIONARY[rng.random_range(0..DICTIONARY.len())].as_bytes());
    }
    // Now and then, raw bytes that are not text at all.
    if rng.random_bool(0.2) {
        let at = rng.random_range(0..=body.len());
        let noise: Vec<u8> = (0..rng.random_range(1..16)).map(|_| rng.random()).collect();
        body.splice(at..at, noise);
    }
    body
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_bounded_fuzz_never_gets_a_server_error_or_touches_the_victim(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let iterations: usize = std::env::var("FUZZ_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let seed: u64 = std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8_2);
    let app = app(opts);
    let v = victim(&app).await;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut attacker_cookie: Option<String> = None;
    for i in 0..iterations {
        let path = ENDPOINTS[rng.random_range(0..ENDPOINTS.len())];
        let body = random_body(&mut rng);
        let content_type = if rng.random_bool(0.9) {
            FORM
        } else {
            "application/json"
        };
        let mut headers = Vec::new();
        if let Some(c) = &attacker_cookie {
            headers.push(("cookie", c.as_str()));
        }
        let a = post_raw(&app, path, content_type, body.clone(), &headers).await;
        let what = format!(
            "seed {seed} (FUZZ_SEED), request {i}: {path} {:?}",
            String::from_utf8_lossy(&body)
        );
        assert!(
            !a.status.is_server_error(),
            "{what}: {} {}",
            a.status,
            a.json
        );
        if a.status.is_client_error() {
            assert_refused(&a, &what);
        } else {
            assert_ne!(a.json["sandbox"], v.sandbox, "{what}");
        }
        if let Some(c) = a.cookie {
            attacker_cookie = Some(cookie_pair(&c));
        }
    }
    assert_untouched(&app, &v).await;
}

fn urlencode(raw: &str) -> String {
    raw.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
