//! Reset and reopen: the two actions that move the sandbox to a known state outside the
//! lesson's function (the playground's reset, and support reopening ticket-42).

use sqlx::Connection;

use crate::catalog::{ActionKind, names};
use crate::model;
use crate::outcome::{Actor, Report, TxState};

use super::super::error::LabError;
use super::super::names::SchemaName;
use super::super::runner::{Lab, Locked, Pending};
use super::super::sandbox_tx::enter as enter_sandbox;
use super::super::trace::{Tracer, done, rows};

impl Lab {
    /// Puts the sandbox back to the lesson's initial state.
    pub async fn reset(&self, sandbox: &SchemaName) -> Result<Report, LabError> {
        self.locked(sandbox, |locked| self.reset_locked(locked, sandbox))
            .await
    }

    async fn reset_locked(&self, locked: Locked, sandbox: &SchemaName) -> Result<Report, LabError> {
        let Locked { mut lock, before } = locked;
        let mut trace = Tracer::new();
        const RESET: &str = "SELECT lab.reset_sandbox($1)";
        // On the lock's connection: one checkout fewer; the reset commits as the server does.
        sqlx::query(RESET)
            .bind(sandbox.as_str())
            .execute(lock.conn()?)
            .await
            .map_err(|e| LabError::in_sandbox(e, sandbox.as_str()))?;
        trace.sql(
            Actor::Playground,
            RESET,
            &[sandbox.as_str()],
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
        self.locked(sandbox, |locked| self.reopen_locked(locked, sandbox))
            .await
    }

    async fn reopen_locked(
        &self,
        locked: Locked,
        sandbox: &SchemaName,
    ) -> Result<Report, LabError> {
        const REOPEN: &str = "UPDATE tickets SET status = 'open' WHERE id = $1";
        let Locked { lock, before } = locked;
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
