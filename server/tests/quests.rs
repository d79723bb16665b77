//! The quests over HTTP: the list (also for a learner without a sandbox, who claims none),
//! hints, answers judged once PostgreSQL holds the goal, refusals that change nothing, the
//! playground with a chosen quest, and the author's page and CSV behind their token.

mod common;

use app::backend::request::WebSettings;
use common::{app, app_with, claimed_sandboxes, cookie_pair, get, post};
use http::StatusCode;
use outbox_lab::pg::LabConfig;
use serde_json::Value;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

const JSON: (&str, &str) = ("accept", "application/json");
const TOKEN: &str = "author-token-for-tests-0123";

/// The answer is the refusal `code` with `status`.
fn refused(answer: &common::Answer, status: StatusCode, code: &str) {
    assert_eq!(answer.status, status, "{}", answer.json);
    assert_eq!(answer.json["code"].as_str(), Some(code), "{}", answer.json);
}

fn quest<'a>(list: &'a Value, id: &str) -> &'a Value {
    list["quests"]
        .as_array()
        .and_then(|a| a.iter().find(|q| q["id"] == id))
        .unwrap_or_else(|| panic!("no quest {id} in {list}"))
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_newcomer_sees_every_quest_with_nothing_reached_and_claims_nothing(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts.clone());
    let list = post(&app, "/api/quests", "", &[JSON]).await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.json);
    let quests = list.json["quests"].as_array().unwrap();
    assert!((8..=12).contains(&quests.len()));
    for q in quests {
        for field in ["id", "reached", "explained", "hints_used", "goal"] {
            assert!(q.get(field).is_some(), "{field} missing in {q}");
        }
        assert_eq!(q["reached"], false);
    }
    assert_eq!(quests[0]["id"], "status_without_intent");
    assert!(list.cookie.is_none());
    assert_eq!(claimed_sandboxes(&opts).await, 0);
    let en = post(&app, "/api/quests?lang=en", "", &[JSON]).await;
    assert_eq!(
        quest(&en.json, "history_twice")["goal"],
        "Get event-ticket-900 into History twice."
    );
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn hints_then_the_goal_then_a_wrong_and_a_right_answer(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts);
    let first = post(&app, "/api/reset", "", &[JSON]).await;
    let cookie = cookie_pair(&first.cookie.expect("a cookie"));
    let me = [("cookie", cookie.as_str()), JSON];

    let hint = post(
        &app,
        "/api/quest_hint?lang=en",
        "quest=commit_not_kafka",
        &me,
    )
    .await;
    assert_eq!(hint.status, StatusCode::OK, "{}", hint.json);
    assert_eq!(hint.json["hints_used"], 1);
    assert_eq!(hint.json["hints"].as_array().unwrap().len(), 1);

    // Refusals name the problem and change nothing.
    let unknown = post(&app, "/api/quest_hint", "quest=no_such_quest", &me).await;
    refused(&unknown, StatusCode::NOT_FOUND, "unknown_quest");
    let early = post(
        &app,
        "/api/quest_answer",
        "quest=commit_not_kafka&answer=durable_intent",
        &me,
    )
    .await;
    refused(&early, StatusCode::CONFLICT, "quest_not_reached");
    let list = post(&app, "/api/quests", "", &me).await;
    assert_eq!(
        quest(&list.json, "commit_not_kafka")["explained"],
        Value::Null
    );
    assert_eq!(quest(&list.json, "commit_not_kafka")["hints_used"], 1);

    // The crash right after COMMIT: confirmed, outbox row unpublished, nothing in Kafka.
    let run = post(&app, "/api/attempt", "crash=after_commit", &me).await;
    assert_eq!(run.status, StatusCode::OK, "{}", run.json);
    let seen = run.json["quests"].as_array().unwrap();
    assert!(seen.iter().any(|s| s["quest"] == "commit_not_kafka"));
    let list = post(&app, "/api/quests", "", &me).await;
    let q = quest(&list.json, "commit_not_kafka");
    assert_eq!(q["reached"], true);
    assert!(q["question"]["choices"].as_array().unwrap().len() >= 3);

    let bad = post(
        &app,
        "/api/quest_answer",
        "quest=commit_not_kafka&answer=nope",
        &me,
    )
    .await;
    refused(&bad, StatusCode::UNPROCESSABLE_ENTITY, "unknown_answer");
    let wrong = post(
        &app,
        "/api/quest_answer?lang=en",
        "quest=commit_not_kafka&answer=delivered",
        &me,
    )
    .await;
    assert_eq!(wrong.status, StatusCode::OK, "{}", wrong.json);
    assert_eq!(
        (
            wrong.json["right"].as_bool(),
            wrong.json["explained"].as_bool()
        ),
        (Some(false), Some(false))
    );
    assert!(wrong.json["why"].as_str().unwrap().contains("PostgreSQL"));
    let right = post(
        &app,
        "/api/quest_answer",
        "quest=commit_not_kafka&answer=durable_intent",
        &me,
    )
    .await;
    assert_eq!(
        (
            right.json["right"].as_bool(),
            right.json["explained"].as_bool()
        ),
        (Some(true), Some(true))
    );

    // The page with the quest chosen shows its goal and the question's verdict.
    let (status, _, _, page) = get(
        &app,
        "/?quest=commit_not_kafka&lang=en",
        &[("cookie", cookie.as_str())],
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("class=\"quest-goal\""), "no goal bar");
    assert!(page.contains("Show that a confirmed COMMIT has not put event-ticket-900 in Kafka."));
    assert!(page.contains("Quest explained."));
    // An unknown quest id in a link is simply not shown.
    let (status, _, _, page) = get(&app, "/?quest=nope", &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert!(!page.contains("class=\"quest-goal\""));
    let (status, _, _, page) = get(&app, "/quests?lang=en", &[("cookie", cookie.as_str())]).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("reached and explained"));
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn without_a_token_configured_there_is_no_author_s_page(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let app = app(opts);
    let api = post(&app, "/api/author", "token=anything", &[JSON]).await;
    refused(&api, StatusCode::NOT_FOUND, "no_author_page");
    let (status, _, _, body) = get(&app, "/author.csv?token=anything", &[]).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, _, _, _) = get(&app, "/author", &[]).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn the_author_s_page_and_csv_open_with_the_token_only(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let web = WebSettings {
        author_token: Some(TOKEN.to_owned()),
        ..WebSettings::default()
    };
    let app = app_with(opts, LabConfig::default(), web);
    // Two learners: one reaches commit_not_kafka and answers wrong; both crash after UPDATE.
    for reach in [true, false] {
        let first = post(
            &app,
            "/api/attempt",
            "crash=after_update&predict_ticket=resolved",
            &[JSON],
        )
        .await;
        assert_eq!(first.status, StatusCode::OK, "{}", first.json);
        let cookie = cookie_pair(&first.cookie.expect("a cookie"));
        let me = [("cookie", cookie.as_str()), JSON];
        if reach {
            post(&app, "/api/reset", "", &me).await;
            post(&app, "/api/attempt", "crash=none", &me).await;
            let a = post(
                &app,
                "/api/quest_answer",
                "quest=commit_not_kafka&answer=applied",
                &me,
            )
            .await;
            assert_eq!(a.status, StatusCode::OK, "{}", a.json);
        }
    }
    let wrong = post(&app, "/api/author", "token=not-the-token-at-all", &[JSON]).await;
    refused(&wrong, StatusCode::FORBIDDEN, "author_token_wrong");
    let counts = post(&app, "/api/author", &format!("token={TOKEN}"), &[JSON]).await;
    assert_eq!(counts.status, StatusCode::OK, "{}", counts.json);
    assert_eq!(counts.json["learners"], 2);
    let row = counts.json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "crash_after_update")
        .unwrap();
    assert_eq!(
        (
            row["explored"].as_u64(),
            row["predicted"].as_u64(),
            row["right"].as_u64()
        ),
        (Some(2), Some(2), Some(0))
    );

    let (status, _, _, csv) = get(
        &app,
        "/author.csv",
        &[("authorization", &format!("Bearer {TOKEN}"))],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{csv}");
    assert!(csv.starts_with("kind,id,"), "{csv}");
    assert!(
        csv.contains("quest,commit_not_kafka,,,,1,1,0,1,0,applied:1\n"),
        "{csv}"
    );
    let (status, _, _, _) = get(&app, "/author.csv?token=wrong", &[]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    let (status, _, _, page) = get(&app, &format!("/author?token={TOKEN}&lang=en"), &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("What the class got wrong") && page.contains("crash_after_update"));
    let (status, _, _, page) = get(&app, "/author?lang=en", &[]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(
        page.contains("name=\"token\""),
        "the page asks for the token"
    );
}

/// The server binary with a quest file that names an unknown column refuses to start, and
/// says which line; nothing is served.
#[test]
fn a_quest_file_with_an_unknown_column_refuses_the_start_naming_its_line() {
    let shipped = outbox_lab::quest::file::BUILT_IN;
    let find = "equal = { aggregate_id = \"ticket-42\" }";
    let line = shipped[..shipped.find(find).expect("the shipped file has it")]
        .matches('\n')
        .count()
        + 1;
    let broken = shipped.replacen(find, "equal = { aggregate = \"ticket-42\" }", 1);
    let dir = std::env::temp_dir().join(format!("quests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("quests.toml");
    std::fs::write(&path, broken).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_server"))
        .env("PLAYGROUND_QUESTS", &path)
        // Nothing may be reached: the start must fail before the database is asked.
        .env("DATABASE_URL", "postgres://nobody@127.0.0.1:1/none")
        .env("LEPTOS_SITE_ADDR", "127.0.0.1:0")
        .output()
        .expect("the server binary runs");
    std::fs::remove_dir_all(&dir).ok();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("PLAYGROUND_QUESTS"), "{stderr}");
    assert!(stderr.contains(&format!("line {line}:")), "{stderr}");
    assert!(stderr.contains("no column \\\"aggregate\\\""), "{stderr}");
}
