//! Shared set-up for the integration tests: a Lab on the fresh database `#[sqlx::test]` made.

#![allow(dead_code)]

pub mod replay;
pub mod witness;

use outbox_lab::catalog::{CommitFate, CrashPoint, PausePoint};
use outbox_lab::input::{AttemptSpec, EventId, Payload};
use outbox_lab::pg::{Lab, LabConfig, SchemaName};
use sqlx::postgres::PgConnectOptions;

/// A Lab without a warm pool, so no background work runs beside a test's own actions.
pub async fn lab(options: PgConnectOptions) -> Lab {
    let config = LabConfig {
        warm_sandboxes: 0,
        ..LabConfig::default()
    };
    Lab::with_options(options, config)
}

pub async fn lab_with_sandbox(options: PgConnectOptions) -> (Lab, SchemaName) {
    let lab = lab(options).await;
    let (_, sandbox) = lab.claim_sandbox().await.expect("claim a sandbox");
    (lab, sandbox)
}

pub fn attempt(crash: CrashPoint) -> AttemptSpec {
    AttemptSpec::lesson(crash)
}

pub fn lost_reply(fate: CommitFate) -> AttemptSpec {
    AttemptSpec {
        commit_fate: fate,
        ..AttemptSpec::lesson(CrashPoint::CommitReplyLost)
    }
}

pub fn with_payload(payload: &str) -> AttemptSpec {
    AttemptSpec {
        payload: Payload::parse(payload).expect("payload within limits"),
        ..AttemptSpec::lesson(CrashPoint::None)
    }
}

pub fn with_event_id(id: &str) -> AttemptSpec {
    AttemptSpec {
        event_id: EventId::parse(id).expect("valid event id"),
        ..AttemptSpec::lesson(CrashPoint::None)
    }
}

/// Waits until `condition` holds, checking every few milliseconds, for at most `limit`.
pub async fn eventually<F, Fut>(limit: std::time::Duration, mut condition: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = std::time::Instant::now();
    loop {
        if condition().await {
            return true;
        }
        if start.elapsed() >= limit {
            return false;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

/// The sandbox's tables read with the test's own plain SELECTs — not through
/// `lab.snapshot`, which built the report being checked, so a bug there cannot hide itself.
pub async fn plain_snapshot(
    pool: &sqlx::PgPool,
    sandbox: &SchemaName,
) -> Result<outbox_lab::snapshot::Snapshot, sqlx::Error> {
    // The schema name is the server's own, validated by `SchemaName`.
    tables_in(pool, sandbox.as_str()).await
}

/// The lesson's tables (and the simulated topic's) in `schema`, read in one snapshot with
/// plain SELECTs. `schema` is a name of the tests' or the server's own, never input.
pub async fn tables_in(
    pool: &sqlx::PgPool,
    sandbox: &str,
) -> Result<outbox_lab::snapshot::Snapshot, sqlx::Error> {
    use outbox_lab::snapshot::{HistoryEntry, KafkaRecord, OutboxRow, Snapshot, TicketRow};
    let mut tx = pool.begin().await?;
    sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        .execute(&mut *tx)
        .await?;
    let tickets: Vec<(String, String)> = sqlx::query_as(&format!(
        "SELECT id, status FROM {sandbox}.tickets ORDER BY id COLLATE \"C\""
    ))
    .fetch_all(&mut *tx)
    .await?;
    let outbox: Vec<(String, String, String, Option<String>)> = sqlx::query_as(&format!(
        "SELECT event_id, aggregate_id, payload::text, published_at::text \
         FROM {sandbox}.outbox ORDER BY event_id COLLATE \"C\""
    ))
    .fetch_all(&mut *tx)
    .await?;
    let kafka: Vec<(i64, String, String)> = sqlx::query_as(&format!(
        "SELECT log_offset, key, value FROM {sandbox}.kafka_log ORDER BY log_offset"
    ))
    .fetch_all(&mut *tx)
    .await?;
    let history: Vec<(String, String, String)> = sqlx::query_as(&format!(
        "SELECT event_id, ticket_id, to_status FROM {sandbox}.history ORDER BY line"
    ))
    .fetch_all(&mut *tx)
    .await?;
    let inbox: Vec<String> = sqlx::query_scalar(&format!(
        "SELECT event_id FROM {sandbox}.inbox ORDER BY event_id COLLATE \"C\""
    ))
    .fetch_all(&mut *tx)
    .await?;
    let consumer_offset: Option<i64> = sqlx::query_scalar(&format!(
        "SELECT next_offset FROM {sandbox}.consumer_offsets WHERE consumer = 'history'"
    ))
    .fetch_optional(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Snapshot {
        tickets: tickets
            .into_iter()
            .map(|(id, status)| TicketRow { id, status })
            .collect(),
        outbox: outbox
            .into_iter()
            .map(
                |(event_id, aggregate_id, payload, published_at)| OutboxRow {
                    event_id,
                    aggregate_id,
                    payload,
                    published_at,
                },
            )
            .collect(),
        kafka: kafka
            .into_iter()
            .map(|(offset, key, value)| KafkaRecord { offset, key, value })
            .collect(),
        history: history
            .into_iter()
            .map(|(event_id, ticket_id, to_status)| HistoryEntry {
                event_id,
                ticket_id,
                to_status,
            })
            .collect(),
        inbox,
        consumer_offset: consumer_offset.unwrap_or(0),
    })
}

/// Drives the stepper: next at every pause, another writer at the pause after the UPDATE.
pub async fn stepped_with_writer(
    lab: &Lab,
    sb: &SchemaName,
    crash_at_insert: bool,
) -> outbox_lab::report::Report {
    let (cmd_tx, mut cmd_rx) = tokio::sync::mpsc::channel(8);
    let (out_tx, mut out_rx) = tokio::sync::mpsc::channel(8);
    let spec = attempt(CrashPoint::None);
    let prediction = outbox_lab::prediction::Prediction::none();
    let run = lab.step(sb, &spec, &prediction, &mut cmd_rx, &out_tx);
    let drive = async {
        let mut writer_sent = false;
        while let Some(message) = out_rx.recv().await {
            let outbox_lab::step::Message::Pause(pause) = message else {
                continue;
            };
            let PausePoint::Ticket(at) = pause.point else {
                panic!("a ticket run paused at {:?}", pause.point);
            };
            let command = match at {
                CrashPoint::AfterUpdate if !writer_sent => {
                    writer_sent = true;
                    outbox_lab::step::Command::OtherWriter
                }
                CrashPoint::AfterInsert if crash_at_insert => outbox_lab::step::Command::Crash,
                _ => outbox_lab::step::Command::Next,
            };
            if cmd_tx.send(command).await.is_err() {
                break;
            }
        }
    };
    tokio::select! {
        report = run => report.unwrap(),
        _ = drive => panic!("the stepper stopped talking before its report"),
    }
}
