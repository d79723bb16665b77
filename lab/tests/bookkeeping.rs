//! The playground's bookkeeping around an action, on a real PostgreSQL: the tables an action
//! starts from come from the last kept report only while nothing can have touched them since,
//! and an action that died half-way makes the next one read them afresh.

mod common;

use common::*;
use outbox_lab::catalog::{CrashPoint, OutcomeId, names};
use outbox_lab::pg::SchemaName;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Connection, PgConnection, PgPool};

async fn notes(pool: &PgPool, sb: &SchemaName) -> (bool, serde_json::Value) {
    sqlx::query_as("SELECT current, tables FROM lab.sandbox_notes WHERE schema_name = $1")
        .bind(sb.as_str())
        .fetch_one(pool)
        .await
        .unwrap()
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn the_kept_tables_are_current_after_an_action_and_are_what_the_next_one_starts_from(
    pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let pool = pool.connect_with(opts.clone()).await.unwrap();
    let (lab, sb) = lab_with_sandbox(opts).await;
    let first = lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    let (current, tables) = notes(&pool, &sb).await;
    assert!(current, "a finished action leaves its tables current");
    assert_eq!(tables, serde_json::to_value(&first.snapshot).unwrap());

    // Proof that the next action starts from the kept copy and does not read the tables: a
    // copy altered behind the playground's back shows up as the next action's "before".
    sqlx::query(
        "UPDATE lab.sandbox_notes SET tables = jsonb_set(tables, '{tickets,0,status}', '\"altered\"') \
         WHERE schema_name = $1",
    )
    .bind(sb.as_str())
    .execute(&pool)
    .await
    .unwrap();
    let reset = lab.reset(&sb).await.unwrap();
    let before = reset.before.as_ref().expect("a reset keeps its before");
    assert_eq!(before.ticket(names::TICKET_ID).unwrap().status, "altered");
    assert_eq!(reset.matches_model, Some(true), "{reset:#?}");
    let fresh = plain_snapshot(&pool, &sb).await.unwrap();
    assert_eq!(fresh, reset.snapshot, "the tables after are always read");
}

#[sqlx::test(migrator = "outbox_lab::pg::database::MIGRATOR")]
async fn an_action_that_died_half_way_makes_the_next_one_read_the_tables(
    pool: PgPoolOptions,
    opts: PgConnectOptions,
) {
    let pool = pool.connect_with(opts.clone()).await.unwrap();
    let (lab, sb) = lab_with_sandbox(opts.clone()).await;
    lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    assert!(notes(&pool, &sb).await.0);

    // An action enters, changes the tables, and its process dies before keeping a report.
    let mut dying = PgConnection::connect_with(&opts).await.unwrap();
    let entered: Option<serde_json::Value> =
        sqlx::query_scalar("SELECT lab.enter_action($1, true)")
            .bind(sb.as_str())
            .fetch_one(&mut dying)
            .await
            .unwrap();
    assert!(entered.is_some());
    sqlx::query(&format!(
        "UPDATE {sb}.tickets SET status = 'open' WHERE id = $1"
    ))
    .bind(names::TICKET_ID)
    .execute(&mut dying)
    .await
    .unwrap();
    dying.close().await.unwrap();
    assert!(
        !notes(&pool, &sb).await.0,
        "an entered action is not current"
    );

    // The next attempt must start from the reopened ticket, as PostgreSQL has it: the guard
    // lets it through and the same event_id meets the row already there. Judged from the
    // stale copy (resolved), the model would have expected the guard to refuse.
    let again = lab.attempt(&sb, &attempt(CrashPoint::None)).await.unwrap();
    let before = again.before.as_ref().expect("an attempt keeps its before");
    assert_eq!(before.ticket(names::TICKET_ID).unwrap().status, "open");
    assert_eq!(again.outcome, Some(OutcomeId::InsertConflict), "{again:#?}");
    assert_eq!(again.matches_model, Some(true), "{again:#?}");
}
