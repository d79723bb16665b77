//! The History consumer (lesson 8.4, previewed) as a scenario of its own: it polls from its
//! committed offset, applies each event in a transaction of its own, then commits the offset —
//! held at each pause by a [`Pauses`], and killed for real where it dies.

use std::time::Duration;

use sqlx::{Connection, PgConnection, PgPool};

use crate::catalog::{ConsumerCrash, PausePoint, Step};
use crate::report::AfterCommitRun;
use crate::sql_trace::{Actor, Answer, Sent, TxState};

use super::crash;
use super::error::LabError;
use super::kafka_topic::{self, Polled};
use super::names::SchemaName;
use super::pauses::{Go, Here, Pauses};
use super::trace::Tracer;

/// What a consumer run did, and where it died (after how many applied events).
pub struct Consumed {
    pub polled: Polled,
    pub died: Option<(ConsumerCrash, usize)>,
}

impl Consumed {
    /// The run as its report names it, with the crash point it was run with.
    pub fn into_run(self, inbox: bool, crash: ConsumerCrash) -> AfterCommitRun {
        AfterCommitRun::Consumer {
            inbox,
            crash,
            applied: self.polled.applied,
            skipped: self.polled.skipped,
        }
    }
}

/// One consumer run on `conn`, a connection of its own; the offset goes through `pool`.
pub async fn run<P: Pauses>(
    mut conn: PgConnection,
    pool: &PgPool,
    sandbox: &SchemaName,
    inbox: bool,
    pauses: &mut P,
    exit_limit: Duration,
    trace: &mut Tracer,
) -> Result<Consumed, LabError> {
    // To watch its backend go if it dies; not one of the consumer's own statements.
    let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut conn)
        .await
        .map_err(LabError::from_sqlx)?;
    let polled = kafka_topic::consume(&mut conn, sandbox, inbox, pauses, trace).await?;
    let died = if polled.died {
        Some((ConsumerCrash::BeforeCommit, polled.applied.len()))
    } else {
        let here = Here {
            point: PausePoint::Consumer(ConsumerCrash::AfterApply),
            next: Some(Step::Offset),
        };
        (pauses.at(here, None, trace).await? == Go::Die).then_some((ConsumerCrash::AfterApply, 0))
    };
    let Some((point, _)) = died else {
        conn.close().await.map_err(LabError::from_sqlx)?;
        kafka_topic::commit_offset(pool, sandbox, polled.next_offset, trace).await?;
        return Ok(Consumed { polled, died });
    };
    crash::kill(conn).await;
    // Inside an event's transaction PostgreSQL rolls that event back; after the last COMMIT
    // nothing is open, and only the offset is never committed.
    let (open, ended) = if point == ConsumerCrash::BeforeCommit {
        (TxState::Abandoned, TxState::RolledBack)
    } else {
        (TxState::Idle, TxState::Idle)
    };
    trace.enter(Step::Crash);
    trace.push(Actor::Consumer, Sent::ProcessCrashed, Answer::Nothing, open);
    crash::wait_until_gone(pool, pid, exit_limit).await?;
    trace.push(
        Actor::Postgres,
        Sent::BackendGone { pid },
        Answer::Nothing,
        ended,
    );
    Ok(Consumed { polled, died })
}
