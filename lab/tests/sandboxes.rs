//! Learner sandboxes: stamped from the template, isolated, pooled warm, reaped when idle.

mod common;

use std::time::Duration;

use common::*;
use outbox_lab::catalog::CrashPoint;
use outbox_lab::model;
use outbox_lab::pg::{Lab, LabConfig, LabError, RateLimit, SandboxToken};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_new_sandbox_holds_the_lessons_initial_state_and_schema(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let (lab, sb) = lab_with_sandbox(opts).await;
    assert_eq!(lab.snapshot(&sb).await.unwrap(), model::initial_state());
    // Same columns, types, nullability and keys as the template (and so as the lesson).
    let shape = |schema: String| {
        let pool = lab.pool().clone();
        async move {
            let rows: Vec<(String, String, String, String)> = sqlx::query_as(
                "SELECT table_name::text, column_name::text, data_type::text, is_nullable::text \
                 FROM information_schema.columns WHERE table_schema = $1 ORDER BY 1, ordinal_position",
            )
            .bind(schema)
            .fetch_all(&pool)
            .await
            .unwrap();
            rows
        }
    };
    assert_eq!(
        shape(sb.to_string()).await,
        shape("lab_template".into()).await
    );
    let fk: String = sqlx::query_scalar(
        "SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c \
         WHERE c.contype = 'f' AND c.connamespace = $1::regnamespace",
    )
    .bind(sb.as_str())
    .fetch_one(lab.pool())
    .await
    .unwrap();
    assert_eq!(
        fk,
        format!("FOREIGN KEY (aggregate_id) REFERENCES {sb}.tickets(id)")
    );
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn learners_get_different_sandboxes_and_tokens_find_their_own(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let lab = lab(opts).await;
    let (token_a, a) = lab.claim_sandbox().await.unwrap();
    let (token_b, b) = lab.claim_sandbox().await.unwrap();
    assert_ne!(a, b);
    assert_eq!(lab.find_sandbox(&token_a).await.unwrap(), Some(a.clone()));
    assert_eq!(lab.find_sandbox(&token_b).await.unwrap(), Some(b.clone()));
    assert_eq!(
        lab.find_sandbox(&SandboxToken::generate()).await.unwrap(),
        None
    );

    lab.attempt(&a, &attempt(CrashPoint::None)).await.unwrap();
    assert_eq!(lab.snapshot(&b).await.unwrap(), model::initial_state());
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn the_warm_pool_is_topped_up_and_claimed_first(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let lab = Lab::with_options(
        opts,
        LabConfig {
            warm_sandboxes: 3,
            ..LabConfig::default()
        },
    );
    assert_eq!(lab.refill_warm_pool().await.unwrap(), 3);
    assert_eq!(lab.refill_warm_pool().await.unwrap(), 0, "already full");
    let warm: Vec<String> = sqlx::query_scalar(
        "SELECT schema_name FROM lab.sandboxes WHERE token_hash IS NULL ORDER BY created_at",
    )
    .fetch_all(lab.pool())
    .await
    .unwrap();
    let (_, claimed) = lab.claim_sandbox().await.unwrap();
    assert_eq!(
        claimed.as_str(),
        warm[0],
        "the oldest warm sandbox is handed out"
    );
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn the_reaper_drops_idle_sandboxes_with_their_schemas(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let lab = lab(opts).await;
    let (token_old, old) = lab.claim_sandbox().await.unwrap();
    let (_, fresh) = lab.claim_sandbox().await.unwrap();
    sqlx::query(
        "UPDATE lab.sandboxes SET last_used_at = now() - interval '2 hours' WHERE schema_name = $1",
    )
    .bind(old.as_str())
    .execute(lab.pool())
    .await
    .unwrap();
    assert_eq!(lab.reap_idle(Duration::from_secs(3600)).await.unwrap(), 1);
    assert_eq!(lab.find_sandbox(&token_old).await.unwrap(), None);
    let schema_left: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)")
            .bind(old.as_str())
            .fetch_one(lab.pool())
            .await
            .unwrap();
    assert!(!schema_left, "the schema is dropped with its registry row");
    assert!(lab.snapshot(&fresh).await.is_ok(), "a used sandbox stays");
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn a_sandbox_that_spends_its_budget_is_slowed_down_alone(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    // Two replicas share the database, and so the budget.
    let config = LabConfig {
        warm_sandboxes: 0,
        rate: RateLimit {
            per_second: 0.001,
            burst: 3.0,
        },
        ..LabConfig::default()
    };
    let a = Lab::with_options(opts.clone(), config.clone());
    let b = Lab::with_options(opts, config);
    let (greedy, schema) = a.claim_sandbox().await.unwrap();
    let (calm, _) = a.claim_sandbox().await.unwrap();
    for lab in [&a, &b, &a] {
        assert_eq!(
            lab.find_sandbox(&greedy).await.unwrap(),
            Some(schema.clone())
        );
    }
    assert!(matches!(
        b.find_sandbox(&greedy).await,
        Err(LabError::RateLimited)
    ));
    assert!(
        a.find_sandbox(&calm).await.unwrap().is_some(),
        "others are not slowed down"
    );
    assert_eq!(
        a.find_sandbox(&SandboxToken::generate()).await.unwrap(),
        None
    );
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn actions_on_one_sandbox_take_turns_across_replicas(
    _pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    // Two runners with their own pools stand for two server processes.
    let a = lab(opts.clone()).await;
    let b = lab(opts).await;
    let (_, sb) = a.claim_sandbox().await.unwrap();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..24 {
        let lab = if i % 2 == 0 { a.clone() } else { b.clone() };
        let sb = sb.clone();
        tasks.spawn(async move {
            match i % 3 {
                0 => lab.reset(&sb).await,
                1 => lab.attempt(&sb, &attempt(CrashPoint::None)).await,
                _ => lab.attempt(&sb, &attempt(CrashPoint::AfterUpdate)).await,
            }
        });
    }
    while let Some(joined) = tasks.join_next().await {
        let report = joined.unwrap().expect("the action ran");
        // Judged against the tables read just before it: only true if no action overlapped.
        assert_eq!(report.matches_model, Some(true), "{report:#?}");
    }
}
