//! The simulated Kafka topic and the History consumer on PostgreSQL. The broker writes
//! through a pooled connection and a commit of its own, never inside a ticket or publisher
//! transaction: its commit point is independent of the ticket database's, as in real life.

use sqlx::{Acquire, PgConnection, PgPool};

use crate::broker::parse_event;
use crate::catalog::names::TICKET_ID;
use crate::catalog::{ConsumerCrash, PausePoint, Scenario, Step};
use crate::sql_trace::{Actor, Answer, Sent, TxState};

use super::error::LabError;
use super::names::SchemaName;
use super::pauses::{Go, Here, Pauses, Planned};
use super::sandbox_tx;
use super::trace::{Tracer, done, rows};

/// Append to the topic's log; the next offset is one past the highest.
pub const PUBLISH: &str = "INSERT INTO kafka_log (log_offset, key, value) \
     SELECT coalesce(max(log_offset) + 1, 0), $1, $2 FROM kafka_log RETURNING log_offset";
/// The consumer group's committed offset: where its next poll starts.
pub const READ_OFFSET: &str = "SELECT coalesce((SELECT next_offset FROM consumer_offsets \
     WHERE consumer = 'history'), 0)";
pub const POLL: &str =
    "SELECT log_offset, value FROM kafka_log WHERE log_offset >= $1 ORDER BY log_offset";
/// The inbox: the event id goes in with the projection's change; a duplicate inserts nothing.
pub const INBOX: &str =
    "INSERT INTO inbox (event_id) VALUES ($1) ON CONFLICT (event_id) DO NOTHING";
/// The projection's change: one more line in History.
pub const APPLY: &str = "INSERT INTO history (line, event_id, ticket_id, to_status) \
     SELECT coalesce(max(line) + 1, 0), $1, $2, $3 FROM history";
pub const COMMIT_OFFSET: &str = "INSERT INTO consumer_offsets (consumer, next_offset) \
     VALUES ('history', $1) ON CONFLICT (consumer) DO UPDATE SET next_offset = excluded.next_offset";

/// Trace A's service publishes `value` keyed by the ticket; the consumer then runs with its
/// inbox and commits its offset.
pub async fn publish_and_consume(
    pool: &PgPool,
    sandbox: &SchemaName,
    value: &str,
    trace: &mut Tracer,
) -> Result<(), LabError> {
    publish(pool, sandbox, TICKET_ID, value, trace).await?;
    trace.pin();
    let consumed = consume_and_commit(pool, sandbox, trace).await;
    trace.unpin();
    consumed
}

async fn consume_and_commit(
    pool: &PgPool,
    sandbox: &SchemaName,
    trace: &mut Tracer,
) -> Result<(), LabError> {
    // One connection at a time: the caller holds its ticket transaction's meanwhile.
    let polled = {
        let mut conn = pool.acquire().await.map_err(LabError::from_sqlx)?;
        let mut never = Planned(PausePoint::end_of(Scenario::Consumer));
        consume(&mut conn, sandbox, true, &mut never, trace).await?
    };
    commit_offset(pool, sandbox, polled.next_offset, trace).await
}

/// The broker appends a record and acknowledges it; returns its offset.
pub async fn publish(
    pool: &PgPool,
    sandbox: &SchemaName,
    key: &str,
    value: &str,
    trace: &mut Tracer,
) -> Result<i64, LabError> {
    let mut tx = sandbox_tx::begin(pool, sandbox, Actor::Broker, trace).await?;
    let offset: i64 = sqlx::query_scalar(PUBLISH)
        .bind(key)
        .bind(value)
        .fetch_one(&mut *tx)
        .await
        .map_err(|e| LabError::in_sandbox(e, sandbox.as_str()))?;
    trace.sql(
        Actor::Broker,
        PUBLISH,
        &[key, value],
        Answer::Values {
            values: vec![offset.to_string()],
        },
        TxState::Open,
    );
    sandbox_tx::commit(tx, Actor::Broker, trace).await?;
    Ok(offset)
}

/// What one consumer run read and did.
#[derive(Debug, Default)]
pub struct Polled {
    /// The records read (none: nothing past the committed offset).
    pub records: usize,
    /// The offset to commit when the run ends well.
    pub next_offset: i64,
    pub applied: Vec<String>,
    pub skipped: Vec<String>,
    /// It died inside the transaction of the event after `applied` (`before_commit`).
    pub died: bool,
}

/// The History consumer on `conn`: polls from its committed offset, then applies each event
/// in a transaction of its own (with the inbox row when `inbox`), held before each COMMIT by
/// `pauses`. The offset is not committed here: the caller does that, or dies first.
pub async fn consume<P: Pauses>(
    conn: &mut PgConnection,
    sandbox: &SchemaName,
    inbox: bool,
    pauses: &mut P,
    trace: &mut Tracer,
) -> Result<Polled, LabError> {
    let in_sandbox = |e| LabError::in_sandbox(e, sandbox.as_str());
    trace.enter(Step::Poll);
    let mut tx = conn.begin().await.map_err(LabError::from_sqlx)?;
    trace.sql(Actor::Consumer, "BEGIN", &[], done(), TxState::Open);
    sandbox_tx::enter(&mut tx, sandbox, trace).await?;
    let from: i64 = sqlx::query_scalar(READ_OFFSET)
        .fetch_one(&mut *tx)
        .await
        .map_err(in_sandbox)?;
    trace.sql(
        Actor::Consumer,
        READ_OFFSET,
        &[],
        Answer::Values {
            values: vec![from.to_string()],
        },
        TxState::Open,
    );
    let records: Vec<(i64, String)> = sqlx::query_as(POLL)
        .bind(from)
        .fetch_all(&mut *tx)
        .await
        .map_err(in_sandbox)?;
    let from_text = from.to_string();
    trace.sql(
        Actor::Consumer,
        POLL,
        &[&from_text],
        Answer::Values {
            values: records.iter().map(|(o, _)| o.to_string()).collect(),
        },
        TxState::Open,
    );
    sandbox_tx::commit(tx, Actor::Consumer, trace).await?;
    let mut polled = Polled {
        records: records.len(),
        next_offset: records.last().map_or(from, |(o, _)| o + 1),
        ..Polled::default()
    };
    for (offset, value) in records {
        let Some(e) = parse_event(&value) else {
            trace.push(
                Actor::Consumer,
                Sent::ConsumerSkipped { offset },
                Answer::Nothing,
                TxState::Idle,
            );
            continue;
        };
        trace.enter(Step::Apply);
        let mut tx = conn.begin().await.map_err(LabError::from_sqlx)?;
        trace.sql(Actor::Consumer, "BEGIN", &[], done(), TxState::Open);
        sandbox_tx::enter(&mut tx, sandbox, trace).await?;
        if inbox {
            let new = sqlx::query(INBOX)
                .bind(&e.event_id)
                .execute(&mut *tx)
                .await
                .map_err(in_sandbox)?
                .rows_affected();
            trace.sql(
                Actor::Consumer,
                INBOX,
                &[&e.event_id],
                rows(new),
                TxState::Open,
            );
            if new == 0 {
                // Applied before: nothing to change, and the consumer knows why.
                sandbox_tx::commit(tx, Actor::Consumer, trace).await?;
                polled.skipped.push(e.event_id);
                continue;
            }
        }
        let applied = sqlx::query(APPLY)
            .bind(&e.event_id)
            .bind(&e.ticket_id)
            .bind(&e.to_status)
            .execute(&mut *tx)
            .await
            .map_err(in_sandbox)?
            .rows_affected();
        trace.sql(
            Actor::Consumer,
            APPLY,
            &[&e.event_id, &e.ticket_id, &e.to_status],
            rows(applied),
            TxState::Open,
        );
        let here = Here {
            point: PausePoint::Consumer(ConsumerCrash::BeforeCommit),
            next: Some(Step::Commit),
        };
        if pauses.at(here, Some(&mut *tx), trace).await? == Go::Die {
            // The process dies inside the transaction: no COMMIT, no ROLLBACK.
            std::mem::forget(tx);
            polled.died = true;
            return Ok(polled);
        }
        sandbox_tx::commit(tx, Actor::Consumer, trace).await?;
        polled.applied.push(e.event_id);
    }
    Ok(polled)
}

/// The broker records the consumer group's offset, in a commit of its own.
pub async fn commit_offset(
    pool: &PgPool,
    sandbox: &SchemaName,
    next_offset: i64,
    trace: &mut Tracer,
) -> Result<(), LabError> {
    trace.enter(Step::Offset);
    let mut tx = sandbox_tx::begin(pool, sandbox, Actor::Broker, trace).await?;
    let n = sqlx::query(COMMIT_OFFSET)
        .bind(next_offset)
        .execute(&mut *tx)
        .await
        .map_err(|e| LabError::in_sandbox(e, sandbox.as_str()))?
        .rows_affected();
    let shown = next_offset.to_string();
    trace.sql(
        Actor::Broker,
        COMMIT_OFFSET,
        &[&shown],
        rows(n),
        TxState::Open,
    );
    sandbox_tx::commit(tx, Actor::Broker, trace).await
}
