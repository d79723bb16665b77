//! The simulated Kafka topic and the History consumer on PostgreSQL. Each writes through a
//! pooled connection and a commit of its own, never inside the ticket transaction: the
//! broker's commit point is independent of the ticket database's, as it is in real life.

use sqlx::PgPool;

use crate::broker::parse_event;
use crate::catalog::names::TICKET_ID;
use crate::outcome::{Actor, Answer, Sent, TxState};

use super::error::LabError;
use super::names::SchemaName;
use super::sandbox_tx;
use super::trace::{Tracer, rows};

/// Append to the topic's log; the next offset is one past the highest.
pub const PUBLISH: &str = "INSERT INTO kafka_log (log_offset, key, value) \
     SELECT coalesce(max(log_offset) + 1, 0), $1, $2 FROM kafka_log RETURNING log_offset";
pub const READ_RECORD: &str = "SELECT value FROM kafka_log WHERE log_offset = $1";
/// The consumer's inbox: one History entry per event_id, a redelivery changes nothing.
pub const APPLY: &str = "INSERT INTO history (event_id, ticket_id, to_status) VALUES ($1, $2, $3) \
     ON CONFLICT (event_id) DO NOTHING";

/// The service publishes `value` keyed by the ticket; the consumer then reads and applies it.
pub async fn publish_and_consume(
    pool: &PgPool,
    sandbox: &SchemaName,
    value: &str,
    trace: &mut Tracer,
) -> Result<(), LabError> {
    let offset = publish(pool, sandbox, value, trace).await?;
    consume(pool, sandbox, offset, trace).await
}

async fn publish(
    pool: &PgPool,
    sandbox: &SchemaName,
    value: &str,
    trace: &mut Tracer,
) -> Result<i64, LabError> {
    let mut tx = sandbox_tx::begin(pool, sandbox, Actor::Broker, trace).await?;
    let offset: i64 = sqlx::query_scalar(PUBLISH)
        .bind(TICKET_ID)
        .bind(value)
        .fetch_one(&mut *tx)
        .await
        .map_err(|e| LabError::in_sandbox(e, sandbox.as_str()))?;
    trace.sql(
        Actor::Broker,
        PUBLISH,
        &[TICKET_ID, value],
        Answer::Values {
            values: vec![offset.to_string()],
        },
        TxState::Open,
    );
    sandbox_tx::commit(tx, Actor::Broker, trace).await?;
    Ok(offset)
}

async fn consume(
    pool: &PgPool,
    sandbox: &SchemaName,
    offset: i64,
    trace: &mut Tracer,
) -> Result<(), LabError> {
    let mut tx = sandbox_tx::begin(pool, sandbox, Actor::Consumer, trace).await?;
    let value: String = sqlx::query_scalar(READ_RECORD)
        .bind(offset)
        .fetch_one(&mut *tx)
        .await
        .map_err(|e| LabError::in_sandbox(e, sandbox.as_str()))?;
    let offset_text = offset.to_string();
    trace.sql(
        Actor::Consumer,
        READ_RECORD,
        &[&offset_text],
        Answer::Values {
            values: vec![value.clone()],
        },
        TxState::Open,
    );
    match parse_event(&value) {
        Some(e) => {
            let applied = sqlx::query(APPLY)
                .bind(&e.event_id)
                .bind(&e.ticket_id)
                .bind(&e.to_status)
                .execute(&mut *tx)
                .await
                .map_err(|err| LabError::in_sandbox(err, sandbox.as_str()))?
                .rows_affected();
            trace.sql(
                Actor::Consumer,
                APPLY,
                &[&e.event_id, &e.ticket_id, &e.to_status],
                rows(applied),
                TxState::Open,
            );
        }
        None => trace.push(
            Actor::Consumer,
            Sent::ConsumerSkipped { offset },
            Answer::Nothing,
            TxState::Open,
        ),
    }
    sandbox_tx::commit(tx, Actor::Consumer, trace).await
}
