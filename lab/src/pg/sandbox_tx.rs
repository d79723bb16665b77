//! Transactions inside a learner's sandbox: the sandbox goes on the search_path for the
//! transaction only, so the lesson's unqualified table names point at the learner's tables.

use sqlx::{PgConnection, PgPool, Postgres, Transaction};

use crate::sql_trace::{Actor, TxState};

use super::error::LabError;
use super::names::SchemaName;
use super::trace::{Tracer, done};

pub const ENTER: &str = "SELECT set_config('search_path', $1, true)";

/// The playground's plumbing at the start of a transaction: the sandbox on the search_path.
pub async fn enter(
    conn: &mut PgConnection,
    sandbox: &SchemaName,
    trace: &mut Tracer,
) -> Result<(), LabError> {
    sqlx::query(ENTER)
        .bind(sandbox.as_str())
        .execute(&mut *conn)
        .await
        .map_err(LabError::from_sqlx)?;
    trace.sql(
        Actor::Playground,
        ENTER,
        &[sandbox.as_str()],
        done(),
        TxState::Open,
    );
    Ok(())
}

/// A transaction of its own on a pooled connection, already inside the sandbox.
pub async fn begin(
    pool: &PgPool,
    sandbox: &SchemaName,
    actor: Actor,
    trace: &mut Tracer,
) -> Result<Transaction<'static, Postgres>, LabError> {
    let mut tx = pool.begin().await.map_err(LabError::from_sqlx)?;
    trace.sql(actor, "BEGIN", &[], done(), TxState::Open);
    enter(&mut tx, sandbox, trace).await?;
    Ok(tx)
}

/// Commits a transaction of its own and records it.
pub async fn commit(
    tx: Transaction<'_, Postgres>,
    actor: Actor,
    trace: &mut Tracer,
) -> Result<(), LabError> {
    tx.commit().await.map_err(LabError::from_sqlx)?;
    trace.sql(actor, "COMMIT", &[], done(), TxState::Committed);
    Ok(())
}

/// Rolls a transaction of its own back and records it.
pub async fn rollback(
    tx: Transaction<'_, Postgres>,
    actor: Actor,
    trace: &mut Tracer,
) -> Result<(), LabError> {
    tx.rollback().await.map_err(LabError::from_sqlx)?;
    trace.sql(actor, "ROLLBACK", &[], done(), TxState::RolledBack);
    Ok(())
}
