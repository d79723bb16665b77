//! A whole classroom at once: every learner presses the same button at the same moment
//! (released together by a barrier), more of them than the pools hold; sockets that flood,
//! idle or declare huge frames; payloads that amplify; a socket whose sandbox was recycled;
//! and the smaller holes a class (or a script) finds. What PostgreSQL holds is read from
//! PostgreSQL.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use app::backend::request::WebSettings;
use common::socket::{PATIENCE, Socket, pool, serve, tables, until};
use common::{Answer, app_with, cookie_pair, post, post_raw};
use futures_util::SinkExt;
use http::StatusCode;
use outbox_lab::pg::{Lab, LabConfig, RateLimit};
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Barrier;
use tokio_tungstenite::tungstenite::Message as Frame;

/// Small pools, so that a handful of learners is already "more than the pool holds"; the
/// acquire timeout short, so that an action waiting for itself fails the test quickly.
fn small_pools() -> LabConfig {
    LabConfig {
        pool_max: 6,
        lock_connections: 4,
        crash_connections: 2,
        acquire_timeout: Duration::from_secs(2),
        // Many learners from one test address, acting fast.
        ..common::socket::config()
    }
}

/// `n` learners, each with a sandbox of their own (claimed by a reset).
async fn learners(app: &axum::Router, n: usize) -> Vec<String> {
    let mut cookies = Vec::new();
    for _ in 0..n {
        let first = post(app, "/api/reset", "", &[]).await;
        assert_eq!(first.status, StatusCode::OK, "{}", first.json);
        cookies.push(cookie_pair(&first.cookie.expect("a newcomer's cookie")));
    }
    cookies
}

/// Every learner posts `form` to `path` at the same moment; answers in learner order.
async fn together(app: &axum::Router, cookies: &[String], path: &str, form: &str) -> Vec<Answer> {
    let barrier = Arc::new(Barrier::new(cookies.len()));
    let tasks: Vec<_> = cookies
        .iter()
        .map(|cookie| {
            let (app, barrier) = (app.clone(), Arc::clone(&barrier));
            let (cookie, path, form) = (cookie.clone(), path.to_owned(), form.to_owned());
            tokio::spawn(async move {
                barrier.wait().await;
                post(&app, &path, &form, &[("cookie", &cookie)]).await
            })
        })
        .collect();
    let mut answers = Vec::new();
    for task in tasks {
        answers.push(task.await.expect("a learner's request ran"));
    }
    answers
}

fn assert_all_served(answers: &[Answer], what: &str) {
    for (i, a) in answers.iter().enumerate() {
        assert_eq!(
            a.status,
            StatusCode::OK,
            "{what}: learner {i} of {} got {}",
            answers.len(),
            a.json
        );
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_class_pressing_race_compare_trace_a_publish_race_and_quests_together_is_served(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    // Twelve learners on a pool of six: each race holds three connections at once, so taken
    // one by one they would wait for each other until the pool's acquire timeout.
    let app = app_with(opts.clone(), small_pools(), WebSettings::default());
    let class = learners(&app, 12).await;
    for (path, form) in [
        ("/api/race", ""),
        ("/api/race", "mistakes=unguarded_update"),
        ("/api/attempt", "mode=naive"),
        ("/api/attempt", "mode=naive_publish_first"),
        ("/api/attempt", "mistakes=insert_outside_tx"),
        ("/api/attempt", "crash=after_commit"),
        // The crash right after COMMIT reached this quest for everyone: all answer at once.
        (
            "/api/quest_answer",
            "quest=commit_not_kafka&answer=durable_intent",
        ),
        ("/api/quest_hint", "quest=two_winners"),
        ("/api/quests", ""),
        ("/api/publish_race", "skip_locked=off"),
        ("/api/compare", "way=naive"),
        ("/api/reset", ""),
    ] {
        let answers = together(&app, &class, path, form).await;
        assert_all_served(&answers, &format!("{path} {form}"));
        // Each learner's report is about their own sandbox, and the tables say so too.
        let pg = pool(&opts).await;
        for a in &answers {
            if let Some(sandbox) = a.json["sandbox"].as_str() {
                let (status, _) = tables(&pg, sandbox).await;
                assert_eq!(status, a.json["snapshot"]["tickets"][0]["status"]);
            }
        }
        pg.close().await;
        // A busy pool is not an outage: the server stays healthy.
        let (status, _, _, _) = common::get(&app, "/healthz", &[]).await;
        assert_eq!(status, StatusCode::OK, "after {path} {form}");
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn past_the_bound_of_waiting_actions_a_learner_is_told_busy_at_once(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let config = LabConfig {
        max_waiting: 0,
        ..small_pools()
    };
    let app = app_with(opts.clone(), config, WebSettings::default());
    let class = learners(&app, 8).await;
    let answers = together(&app, &class, "/api/race", "").await;
    let busy: Vec<&Answer> = answers
        .iter()
        .filter(|a| a.status == StatusCode::SERVICE_UNAVAILABLE)
        .collect();
    // Four races need twelve connections; the pool lends four: with nobody allowed to wait,
    // some are refused — clearly, as busy, in the learner's language — and none fails.
    assert!(!busy.is_empty(), "nobody was refused");
    for a in &answers {
        assert!(
            a.status == StatusCode::OK || a.status == StatusCode::SERVICE_UNAVAILABLE,
            "{} {}",
            a.status,
            a.json
        );
    }
    for a in busy {
        assert_eq!(a.json["code"], "busy", "{}", a.json);
        assert!(
            a.json["message"].as_str().unwrap().contains("соединения"),
            "{}",
            a.json
        );
    }
    // Busy is no outage: the next action of anybody runs.
    let again = post(&app, "/api/race", "", &[("cookie", &class[0])]).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.json);
}

#[tokio::test]
async fn a_configuration_over_postgresqls_connection_limit_refuses_to_start() {
    let Ok(url) = std::env::var("DATABASE_URL") else {
        return;
    };
    let opts: PgConnectOptions = url.parse().expect("a database URL");
    let lab = Lab::with_options(
        opts,
        LabConfig {
            step_sessions: 100_000,
            ..LabConfig::default()
        },
    );
    let refused = lab.check_connection_budget().await;
    let message = refused.expect_err("refused").to_string();
    assert!(message.contains("max_connections"), "{message}");
    assert!(message.contains("PLAYGROUND_STEP_SESSIONS"), "{message}");
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn the_defaults_fit_postgresqls_default_hundred_connections(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let config = LabConfig::default();
    assert!(config.connections() <= 97, "{}", config.connections());
    let lab = Lab::with_options(opts, config);
    let (available, needs) = lab.check_connection_budget().await.expect("fits");
    assert!(needs <= available);
}

// ----- sockets -------------------------------------------------------------------------

/// The stepped backend of `sandbox` and the sandbox's own answer to an action.
async fn stepped_backends(pg: &sqlx::PgPool, sandbox: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1")
        .bind(format!("outbox-step:{sandbox}"))
        .fetch_one(pg)
        .await
        .unwrap()
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_command_flood_then_a_close_frees_the_run_within_a_second(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (addr, app) = serve(opts.clone(), common::socket::config()).await;
    let pg = pool(&opts).await;
    // On the old code the wedge depended on timing (one flood in eight in the classroom
    // benchmark); several rounds of a large flood give it every chance.
    for round in 0..8 {
        let mut s = Socket::open(addr, None).await;
        let pause = s.begin(outbox_lab::catalog::Mode::Outbox).await;
        assert_eq!(pause["at"], "after_begin");
        let sandbox = s.cookie.clone();
        // Refused commands, sent far faster than the server answers, none read.
        let bad = json!({"cmd": "commit_reply_lost", "commit_fate": "x"}).to_string();
        for _ in 0..1500 {
            if s.ws.feed(Frame::Text(bad.clone().into())).await.is_err() {
                break;
            }
        }
        let _ = s.ws.flush().await;
        let _ = s.ws.close(None).await;
        drop(s);
        let closed = Instant::now();
        // The run ends as a crash: the sandbox answers again, and its backend is gone.
        let mut answered = None;
        while closed.elapsed() < Duration::from_secs(1) {
            let reset = post(&app, "/api/reset", "", &[("cookie", &sandbox)]).await;
            if reset.status == StatusCode::OK {
                answered = Some(reset);
                break;
            }
            assert_eq!(reset.json["code"], "step_in_progress", "round {round}");
            // Polled: nothing tells a client that another's run has ended.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let reset = answered.unwrap_or_else(|| panic!("round {round}: still held after 1 s"));
        let name = reset.json["sandbox"].as_str().unwrap().to_owned();
        assert_eq!(stepped_backends(&pg, &name).await, 0, "round {round}");
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_frame_declaring_a_huge_payload_is_refused_from_its_header(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (addr, _app) = serve(opts.clone(), common::socket::config()).await;
    let mut s = Socket::open(addr, None).await;
    let tokio_tungstenite::MaybeTlsStream::Plain(tcp) = s.ws.get_mut() else {
        panic!("a plain TCP stream");
    };
    // A masked text frame whose header declares 16 MiB; only a few bytes follow.
    let mut header = vec![0x81u8, 0xFF];
    header.extend_from_slice(&(16u64 * 1024 * 1024).to_be_bytes());
    header.extend_from_slice(&[1, 2, 3, 4]);
    header.extend_from_slice(b"{\"cmd\":");
    tcp.write_all(&header).await.unwrap();
    // The server closes the connection without waiting for the 16 MiB.
    let mut buf = [0u8; 1024];
    let start = Instant::now();
    loop {
        let read = tokio::time::timeout(Duration::from_secs(3), tcp.read(&mut buf))
            .await
            .expect("the server ends the connection instead of waiting for the payload");
        match read {
            Ok(0) | Err(_) => break,
            // A close frame first, then the end.
            Ok(_) => continue,
        }
    }
    assert!(start.elapsed() < Duration::from_secs(3));
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_socket_whose_sandbox_was_recycled_cannot_touch_the_newcomers_tables(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    // One sandbox in all, recycled for a newcomer as soon as it is idle.
    let config = LabConfig {
        max_sandboxes: 1,
        recycle_after: Duration::ZERO,
        ..common::socket::config()
    };
    let (addr, app) = serve(opts.clone(), config).await;
    let mut old = Socket::open(addr, None).await;
    let first = post(&app, "/api/snapshot", "", &[("cookie", &old.cookie)]).await;
    let sandbox = first.json["sandbox"].as_str().unwrap().to_owned();
    // A newcomer arrives; the registry is full; the idle sandbox becomes theirs.
    let newcomer = post(&app, "/api/attempt", "crash=after_insert", &[]).await;
    assert_eq!(newcomer.status, StatusCode::OK, "{}", newcomer.json);
    assert_eq!(newcomer.json["sandbox"], sandbox, "recycled");
    let newcomer_cookie = cookie_pair(&newcomer.cookie.unwrap());
    let pg = pool(&opts).await;
    let before = tables(&pg, &sandbox).await;
    // The old socket tries to begin: it is told its sandbox is gone, and nothing runs.
    old.send(json!({"cmd": "begin"})).await;
    let error = old.error().await;
    assert_eq!(error["code"], "sandbox_gone", "{error}");
    assert_eq!(tables(&pg, &sandbox).await, before);
    assert_eq!(stepped_backends(&pg, &sandbox).await, 0);
    let now = post(&app, "/api/current", "", &[("cookie", &newcomer_cookie)]).await;
    assert_eq!(now.json["action"], "attempt", "{}", now.json);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_class_steps_together_while_other_learners_act(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    // The defaults: thirty learners hold a stepped transaction at once.
    let (addr, app) = serve(opts.clone(), common::socket::config()).await;
    let n = 30;
    let barrier = Arc::new(Barrier::new(n));
    let held = Arc::new(Barrier::new(n + 1));
    let go_on = Arc::new(Barrier::new(n + 1));
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            let (barrier, held, go_on) = (barrier.clone(), held.clone(), go_on.clone());
            tokio::spawn(async move {
                let mut s = Socket::open(addr, None).await;
                barrier.wait().await;
                s.send(json!({"cmd": "begin"})).await;
                let first = s.recv().await;
                held.wait().await;
                go_on.wait().await;
                let Some(mut pause) = first.get("pause").cloned() else {
                    return Err(first);
                };
                while pause["at"] != "after_commit" {
                    s.send(json!({"cmd": "next"})).await;
                    pause = s.pause().await;
                }
                s.send(json!({"cmd": "next"})).await;
                Ok(s.report().await)
            })
        })
        .collect();
    held.wait().await;
    // Every learner holds a transaction now; another learner's actions still run.
    let other = post(&app, "/api/attempt", "", &[]).await;
    assert_eq!(other.status, StatusCode::OK, "{}", other.json);
    let pg = pool(&opts).await;
    assert_eq!(
        stepped_here(&pg).await,
        n as i64,
        "one connection per held run"
    );
    go_on.wait().await;
    for task in tasks {
        let report = task
            .await
            .unwrap()
            .unwrap_or_else(|e| panic!("refused: {e}"));
        assert_eq!(report["outcome"], "committed", "{report}");
    }
    until("no stepped backend left", || async {
        stepped_here(&pg).await == 0
    })
    .await;
}

/// Stepped backends on this test's database.
async fn stepped_here(pg: &sqlx::PgPool) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity \
         WHERE datname = current_database() AND application_name LIKE 'outbox-step:%'",
    )
    .fetch_one(pg)
    .await
    .unwrap()
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn one_address_holds_at_most_its_cap_of_held_runs(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (addr, _app) = serve(opts.clone(), common::socket::config()).await;
    let cap = server::config::DEFAULT_STEP_RUNS_PER_CLIENT;
    let mut held = Vec::new();
    for _ in 0..cap {
        let mut s = Socket::open(addr, None).await;
        s.begin(outbox_lab::catalog::Mode::Outbox).await;
        held.push(s);
    }
    let mut one_more = Socket::open(addr, None).await;
    one_more.send(json!({"cmd": "begin"})).await;
    let refused = one_more.error().await;
    assert_eq!(refused["code"], "client_limit", "{refused}");
    // One ends; the next run of that address is served.
    drop(held.pop());
    let start = Instant::now();
    loop {
        one_more.send(json!({"cmd": "begin"})).await;
        let answer = one_more.recv().await;
        if answer.get("pause").is_some() {
            break;
        }
        assert_eq!(answer["error"]["code"], "client_limit", "{answer}");
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "the slot was never freed"
        );
        // Polled: the server tells nobody that another socket's run has ended.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_slow_header_is_cut_off(_pool: PgPoolOptions, opts: PgConnectOptions) {
    let app = app_with(opts, small_pools(), WebSettings::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server::serve::serve(
        listener,
        app,
        std::future::pending(),
        Duration::from_millis(500),
    ));
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(b"GET / HTTP/1.1\r\n").await.unwrap();
    let start = Instant::now();
    let mut buf = [0u8; 256];
    let mut closed = false;
    // A header line now and then, never the end of the headers.
    while start.elapsed() < PATIENCE {
        match tokio::time::timeout(Duration::from_millis(200), tcp.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                closed = true;
                break;
            }
            Ok(Ok(_)) => {}
            Err(_) => {
                if tcp.write_all(b"X-Slow: 1\r\n").await.is_err() {
                    closed = true;
                    break;
                }
            }
        }
    }
    assert!(closed, "the connection stayed open");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
}

// ----- payloads and smaller holes ------------------------------------------------------

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn an_amplifying_payload_is_refused_and_nothing_is_stored(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app_with(opts.clone(), small_pools(), WebSettings::default());
    let cookie = learners(&app, 1).await.remove(0);
    let before = post(&app, "/api/current", "", &[("cookie", &cookie)]).await;
    let numbers = vec!["1e131071"; 910].join(",");
    let form = format!("payload=[{}]", numbers.replace(',', "%2C"));
    let a = post(&app, "/api/attempt", &form, &[("cookie", &cookie)]).await;
    assert_eq!(a.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", a.json);
    assert_eq!(a.json["code"], "payload_text_too_large");
    let after = post(&app, "/api/current", "", &[("cookie", &cookie)]).await;
    assert_eq!(after.json, before.json, "nothing kept");
    let sandbox = after.json["sandbox"].as_str().unwrap();
    let pg = pool(&opts).await;
    assert_eq!(tables(&pg, sandbox).await, ("open".to_owned(), 0));
    // The sandbox goes on working.
    let next = post(&app, "/api/attempt", "", &[("cookie", &cookie)]).await;
    assert_eq!(next.status, StatusCode::OK, "{}", next.json);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn bodies_of_any_declared_type_are_checked_or_refused(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app_with(opts.clone(), small_pools(), WebSettings::default());
    let cookie = learners(&app, 1).await.remove(0);
    let misspelt = b"mistake=insert_outside_tx".to_vec();
    let plain = post_raw(
        &app,
        "/api/attempt",
        "text/plain",
        misspelt.clone(),
        &[("cookie", &cookie)],
    )
    .await;
    assert_eq!(
        plain.status,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "{}",
        plain.json
    );
    assert_eq!(plain.json["code"], "unsupported_content_type");
    let capital = post_raw(
        &app,
        "/api/attempt",
        "Application/X-WWW-Form-Urlencoded; charset=UTF-8",
        misspelt,
        &[("cookie", &cookie)],
    )
    .await;
    assert_eq!(
        capital.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        capital.json
    );
    assert_eq!(capital.json["code"], "unknown_field");
    let now = post(&app, "/api/current", "", &[("cookie", &cookie)]).await;
    assert_eq!(now.json["action"], "reset", "nothing ran: {}", now.json);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn frame_tokens_the_server_did_not_issue_are_never_adopted(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app_with(opts.clone(), small_pools(), WebSettings::default());
    let made_up = outbox_lab::pg::SandboxToken::generate();
    let path = format!("/api/reset?s={}", made_up.as_str());
    let a = post(&app, &path, "", &[]).await;
    assert_eq!(a.status, StatusCode::GONE, "{}", a.json);
    assert_eq!(common::claimed_sandboxes(&opts).await, 0);
    // The embed page swaps it for a token of its own.
    let (status, _, location, _) =
        common::get(&app, &format!("/embed?lang=en&s={}", made_up.as_str()), &[]).await;
    assert!(status.is_redirection());
    let location = location.unwrap();
    assert!(location.starts_with("/embed?lang=en&s="), "{location}");
    assert!(!location.contains(made_up.as_str()));
    // That one is adopted, once, even by two first actions at the same moment.
    let issued = location.rsplit("s=").next().unwrap().to_owned();
    let barrier = Arc::new(Barrier::new(2));
    let tasks: Vec<_> = (0..2)
        .map(|_| {
            let (app, barrier) = (app.clone(), barrier.clone());
            let path = format!("/api/attempt?s={issued}");
            tokio::spawn(async move {
                barrier.wait().await;
                post(&app, &path, "", &[]).await
            })
        })
        .collect();
    let mut sandboxes = Vec::new();
    for task in tasks {
        let a = task.await.unwrap();
        assert!(!a.status.is_server_error(), "{} {}", a.status, a.json);
        if a.status == StatusCode::OK {
            sandboxes.push(a.json["sandbox"].clone());
        }
    }
    assert!(!sandboxes.is_empty());
    assert!(sandboxes.windows(2).all(|w| w[0] == w[1]), "{sandboxes:?}");
    assert_eq!(common::claimed_sandboxes(&opts).await, 1);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn start_over_and_a_concurrent_attempt_never_lose_a_row(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app_with(opts.clone(), small_pools(), WebSettings::default());
    let cookie = learners(&app, 1).await.remove(0);
    for round in 0..20 {
        let barrier = Arc::new(Barrier::new(2));
        let jobs = [
            ("/api/start_over", ""),
            ("/api/attempt", "crash=after_commit"),
        ];
        let tasks: Vec<_> = jobs
            .iter()
            .map(|(path, form)| {
                let (app, barrier, cookie) = (app.clone(), barrier.clone(), cookie.clone());
                let (path, form) = (path.to_string(), form.to_string());
                tokio::spawn(async move {
                    barrier.wait().await;
                    post(&app, &path, &form, &[("cookie", &cookie)]).await
                })
            })
            .collect();
        for task in tasks {
            let a = task.await.unwrap();
            assert_eq!(a.status, StatusCode::OK, "round {round}: {}", a.json);
        }
        // Whatever came last, the map agrees with it: an attempt shown last is on the map.
        let last = post(&app, "/api/current", "", &[("cookie", &cookie)]).await;
        let progress = post(&app, "/api/progress", "", &[("cookie", &cookie)]).await;
        let explored = progress.json["explored"].as_u64().unwrap();
        if last.json["action"] == "attempt" {
            assert_eq!(explored, 1, "round {round}: {}", progress.json);
        } else {
            assert_eq!(explored, 0, "round {round}: {}", progress.json);
        }
    }
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_comparisons_sandboxes_are_paid_from_the_learners_address(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let config = LabConfig {
        claims_per_client: RateLimit {
            per_second: 0.001,
            burst: 2.0,
        },
        ..small_pools()
    };
    let web = WebSettings {
        client_ip_header: Some(http::HeaderName::from_static("x-forwarded-for")),
        ..WebSettings::default()
    };
    let app = app_with(opts.clone(), config, web);
    let from = ("x-forwarded-for", "203.0.113.7");
    let first = post(&app, "/api/reset", "", &[from]).await;
    assert_eq!(first.status, StatusCode::OK);
    let cookie = cookie_pair(&first.cookie.unwrap());
    // The learner's own sandbox took one of two; a comparison needs two more.
    let compare = post(&app, "/api/compare", "", &[from, ("cookie", &cookie)]).await;
    assert_eq!(
        compare.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        compare.json
    );
    assert_eq!(compare.json["code"], "sandbox_rate_limited");
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_shutdown_ends_held_runs_as_a_crash_and_keeps_their_reports(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (app, shutdown) = common::app_and_shutdown(
        opts.clone(),
        common::socket::config(),
        WebSettings::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(server::serve::serve(
        listener,
        app.clone(),
        async {
            let _ = stop_rx.await;
        },
        server::serve::HEADER_READ_LIMIT,
    ));
    let mut s = Socket::open(addr, None).await;
    let pause = s
        .step_to(
            outbox_lab::catalog::Mode::Outbox,
            outbox_lab::catalog::CrashPoint::AfterUpdate,
        )
        .await;
    let pid = pause["backend"]["pid"].as_i64().unwrap();
    // SIGTERM, as main wires it: the sockets are told, and the listener stops.
    shutdown.send(true).unwrap();
    let _ = stop_tx.send(());
    let pg = pool(&opts).await;
    until("the held backend is gone", || async {
        !common::socket::backend_alive(&pg, pid).await
    })
    .await;
    tokio::time::timeout(PATIENCE, served)
        .await
        .expect("the server drained")
        .unwrap();
    // The run ended as the process dying at its pause, and its report was kept.
    until("the crash's report is kept", || async {
        let now = post(&app, "/api/current", "", &[("cookie", &s.cookie)]).await;
        now.json["stepped"]["ended_at"] == "after_update"
    })
    .await;
    let now = post(&app, "/api/current", "", &[("cookie", &s.cookie)]).await;
    assert_eq!(now.json["outcome"], "crashed_after_update", "{}", now.json);
    let sandbox = now.json["sandbox"].as_str().unwrap();
    assert_eq!(tables(&pg, sandbox).await, ("open".to_owned(), 0));
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_recycled_learners_comparison_pair_goes_back_to_the_warm_pool(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    // Room for three sandboxes; an idle one may be recycled at once.
    let config = LabConfig {
        max_sandboxes: 3,
        recycle_after: Duration::ZERO,
        ..small_pools()
    };
    let app = app_with(opts.clone(), config, WebSettings::default());
    let a = learners(&app, 1).await.remove(0);
    let compared = post(&app, "/api/compare", "", &[("cookie", &a)]).await;
    assert_eq!(compared.status, StatusCode::OK, "{}", compared.json);
    assert_eq!(common::claimed_sandboxes(&opts).await, 3);
    // B arrives: A's sandbox is recycled for B, and A's pair goes back to the warm pool.
    let b = learners(&app, 1).await.remove(0);
    let b_sandbox = post(&app, "/api/current", "", &[("cookie", &b)]).await.json["sandbox"].clone();
    assert_eq!(common::claimed_sandboxes(&opts).await, 1);
    // C arrives and takes one of them; B keeps its own.
    let c = learners(&app, 1).await.remove(0);
    let c_sandbox = post(&app, "/api/current", "", &[("cookie", &c)]).await.json["sandbox"].clone();
    assert_ne!(c_sandbox, b_sandbox);
    let b_now = post(&app, "/api/current", "", &[("cookie", &b)]).await;
    assert_eq!(
        b_now.json["sandbox"], b_sandbox,
        "B lost its sandbox: {}",
        b_now.json
    );
    assert_eq!(common::claimed_sandboxes(&opts).await, 2);
}
