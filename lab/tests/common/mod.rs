//! Shared set-up for the integration tests: a Lab on the fresh database `#[sqlx::test]` made.

#![allow(dead_code)]

use outbox_lab::catalog::{CommitFate, CrashPoint};
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
