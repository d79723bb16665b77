//! Reset and reopen: the two actions that move the sandbox to a known state outside the
//! lesson's function (the playground's reset, and support reopening ticket-42).

use sqlx::Connection;

use crate::catalog::{ActionKind, names};
use crate::model;
use crate::report::Report;
use crate::snapshot::Snapshot;
use crate::sql_trace::{Actor, TxState};

use super::super::budget::Needs;
use super::super::error::LabError;
use super::super::names::SchemaName;
use super::super::pending::Pending;
use super::super::runner::{Lab, Locked};
use super::super::sandbox_tx::enter as enter_sandbox;
use super::super::trace::{Tracer, done, rows};

impl Lab {
    /// Puts the sandbox back to the lesson's initial state.
    pub async fn reset(&self, sandbox: &SchemaName) -> Result<Report, LabError> {
        self.locked(sandbox, Needs::RESET, [], |locked| {
            self.reset_locked(locked, sandbox, false)
        })
        .await
    }

    /// "Start over": the reset, and an empty map, under the same lock, so that no concurrent
    /// action's progress row is written between the two and lost.
    pub async fn start_over(&self, sandbox: &SchemaName) -> Result<Report, LabError> {
        self.locked(sandbox, Needs::RESET, [], |locked| {
            self.reset_locked(locked, sandbox, true)
        })
        .await
    }

    async fn reset_locked(
        &self,
        locked: Locked,
        sandbox: &SchemaName,
        forget_progress: bool,
    ) -> Result<Report, LabError> {
        let Locked {
            mut lock, before, ..
        } = locked;
        if forget_progress {
            sqlx::query("SELECT lab.forget_progress($1)")
                .bind(sandbox.as_str())
                .execute(lock.conn()?)
                .await
                .map_err(LabError::from_sqlx)?;
        }
        let mut trace = Tracer::new();
        const RESET: &str = "SELECT lab.reset_tables($1, $2)";
        let changed = changed_tables(&before, &model::initial_state());
        let changed_text = format!("{{{}}}", changed.join(","));
        // On the lock's connection: one checkout fewer; the reset commits as the server does.
        sqlx::query(RESET)
            .bind(sandbox.as_str())
            .bind(&changed)
            .execute(lock.conn()?)
            .await
            .map_err(|e| LabError::in_sandbox(e, sandbox.as_str()))?;
        trace.sql(
            Actor::Playground,
            RESET,
            &[sandbox.as_str(), changed_text.as_str()],
            done(),
            TxState::Committed,
        );
        let expected = model::predict_state(model::initial_state());
        self.finish(
            lock,
            sandbox,
            ActionKind::Reset,
            None,
            before,
            trace,
            None,
            expected,
            Pending::Clear,
            |_| {},
        )
        .await
    }

    /// "Support reopens ticket-42": a separate, committed UPDATE; outbox rows stay.
    pub async fn reopen(&self, sandbox: &SchemaName) -> Result<Report, LabError> {
        self.locked(sandbox, Needs::ONE, [], |locked| {
            self.reopen_locked(locked, sandbox)
        })
        .await
    }

    async fn reopen_locked(
        &self,
        locked: Locked,
        sandbox: &SchemaName,
    ) -> Result<Report, LabError> {
        const REOPEN: &str = "UPDATE tickets SET status = 'open' WHERE id = $1";
        let Locked { lock, before, .. } = locked;
        let mut trace = Tracer::new();
        let mut conn = self.pool().acquire().await.map_err(LabError::from_sqlx)?;
        let mut tx = conn.begin().await.map_err(LabError::from_sqlx)?;
        trace.sql(Actor::Support, "BEGIN", &[], done(), TxState::Open);
        enter_sandbox(&mut tx, sandbox, &mut trace).await?;
        let n = sqlx::query(REOPEN)
            .bind(names::TICKET_ID)
            .execute(&mut *tx)
            .await
            .map_err(|e| LabError::in_sandbox(e, sandbox.as_str()))?
            .rows_affected();
        trace.sql(
            Actor::Support,
            REOPEN,
            &[names::TICKET_ID],
            rows(n),
            TxState::Open,
        );
        tx.commit().await.map_err(LabError::from_sqlx)?;
        trace.sql(Actor::Support, "COMMIT", &[], done(), TxState::Committed);
        drop(conn);
        let expected = model::predict_state(model::reopened(&before));
        self.finish(
            lock,
            sandbox,
            ActionKind::Reopen,
            None,
            before,
            trace,
            None,
            expected,
            Pending::Clear,
            |_| {},
        )
        .await
    }
}

/// The sandbox tables whose rows differ from the lesson's initial state, as read under the
/// sandbox's lock just before the reset. The consumer's offset row goes whenever anything after
/// COMMIT differs: a row at offset 0 reads the same as none.
fn changed_tables(now: &Snapshot, initial: &Snapshot) -> Vec<&'static str> {
    let after_commit = now.kafka != initial.kafka
        || now.history != initial.history
        || now.inbox != initial.inbox
        || now.consumer_offset != initial.consumer_offset;
    [
        ("tickets", now.tickets != initial.tickets),
        ("outbox", now.outbox != initial.outbox),
        ("kafka_log", now.kafka != initial.kafka),
        ("history", now.history != initial.history),
        ("inbox", now.inbox != initial.inbox),
        ("consumer_offsets", after_commit),
    ]
    .into_iter()
    .filter_map(|(table, changed)| changed.then_some(table))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::OutboxRow;

    #[test]
    fn only_the_tables_an_attempt_changed_are_reset() {
        let initial = model::initial_state();
        assert!(changed_tables(&initial, &initial).is_empty());
        let mut attempted = model::reopened(&initial);
        attempted.tickets[0].status = "resolved".into();
        attempted.outbox.push(OutboxRow {
            event_id: "event-ticket-900".into(),
            aggregate_id: "ticket-42".into(),
            payload: "{}".into(),
            published_at: None,
        });
        assert_eq!(changed_tables(&attempted, &initial), ["tickets", "outbox"]);
        let mut consumed = initial.clone();
        consumed.inbox.push("event-ticket-900".into());
        assert_eq!(
            changed_tables(&consumed, &initial),
            ["inbox", "consumer_offsets"]
        );
    }
}
