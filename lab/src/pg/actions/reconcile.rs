//! Reconciliation: deciding an unknown COMMIT from the database alone.

use sqlx::Connection;
use sqlx::types::Json;

use crate::catalog::{ActionKind, OutcomeId, names};
use crate::input::AttemptSpec;
use crate::model;
use crate::report::{Reconciliation, Report};
use crate::sql_trace::{Actor, Answer, TxState};

use super::super::budget::Needs;
use super::super::error::LabError;
use super::super::names::SchemaName;
use super::super::pending::{Pending, PendingAttempt};
use super::super::runner::{Lab, Locked};
use super::super::sandbox_tx::enter as enter_sandbox;
use super::super::trace::{Tracer, done};

impl Lab {
    /// Decides an unknown outcome from the database alone: by the stable ids, and by the
    /// transaction id the attempt noted.
    pub async fn reconcile(&self, sandbox: &SchemaName) -> Result<Report, LabError> {
        self.locked(sandbox, Needs::ONE, [], |locked| {
            self.reconcile_locked(locked, sandbox)
        })
        .await
    }

    async fn reconcile_locked(
        &self,
        locked: Locked,
        sandbox: &SchemaName,
    ) -> Result<Report, LabError> {
        const TICKET_STATUS: &str = "SELECT status FROM tickets WHERE id = $1";
        const OUTBOX_ROW: &str = "SELECT count(*) FROM outbox WHERE event_id = $1";
        const XACT_STATUS: &str = "SELECT pg_xact_status($1::xid8)";
        // FOR SHARE: the previous action lets the lock go just before its report commits.
        // The same statement asks PostgreSQL what the attempt's payload became (the model's
        // input, see `model::predict_attempt`), so asking costs no round trip.
        let pending: Option<(Option<Json<PendingAttempt>>, Option<String>)> = sqlx::query_as(
            "SELECT pending, lab.jsonb_text(pending->'settings'->>'payload') \
               FROM lab.sandbox_notes WHERE schema_name = $1 FOR SHARE",
        )
        .bind(sandbox.as_str())
        .fetch_optional(self.pool())
        .await
        .map_err(LabError::from_sqlx)?;
        let (pending, stored_payload) = match pending {
            Some((Some(Json(pending)), stored_payload)) => (pending, stored_payload),
            _ => return Err(LabError::NothingToReconcile),
        };
        let Locked { lock, before, .. } = locked;
        let event_id = pending.settings.event_id.as_str();

        let mut trace = Tracer::new();
        let mut conn = self.pool().acquire().await.map_err(LabError::from_sqlx)?;
        let mut tx = conn.begin().await.map_err(LabError::from_sqlx)?;
        trace.sql(Actor::Service, "BEGIN", &[], done(), TxState::Open);
        enter_sandbox(&mut tx, sandbox, &mut trace).await?;
        let status: Option<String> = sqlx::query_scalar(TICKET_STATUS)
            .bind(names::TICKET_ID)
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| LabError::in_sandbox(e, sandbox.as_str()))?;
        let values = status.iter().cloned().collect();
        trace.sql(
            Actor::Service,
            TICKET_STATUS,
            &[names::TICKET_ID],
            Answer::Values { values },
            TxState::Open,
        );
        let count: i64 = sqlx::query_scalar(OUTBOX_ROW)
            .bind(event_id)
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| LabError::in_sandbox(e, sandbox.as_str()))?;
        let values = vec![count.to_string()];
        trace.sql(
            Actor::Service,
            OUTBOX_ROW,
            &[event_id],
            Answer::Values { values },
            TxState::Open,
        );
        let xact_status: Option<String> = sqlx::query_scalar(XACT_STATUS)
            .bind(pending.xid.as_str())
            .fetch_one(&mut *tx)
            .await
            .map_err(LabError::from_sqlx)?;
        let values = vec![xact_status.clone().unwrap_or_else(|| "NULL".into())];
        trace.sql(
            Actor::Service,
            XACT_STATUS,
            &[pending.xid.as_str()],
            Answer::Values { values },
            TxState::Open,
        );
        tx.commit().await.map_err(LabError::from_sqlx)?;
        trace.sql(Actor::Service, "COMMIT", &[], done(), TxState::Committed);
        drop(conn);

        let by_ids_committed = status.as_deref() == Some(names::STATUS_RESOLVED) && count == 1;
        let by_xid_committed = match xact_status.as_deref() {
            Some("committed") => Some(true),
            Some("aborted") => Some(false),
            _ => None,
        };
        // The transaction id is PostgreSQL's own record; the ids are the fallback when it is
        // too old to be known. A transaction that never got an id never wrote anything, so
        // nothing of it committed, whatever earlier attempts left behind the same ids.
        let committed = by_xid_committed.unwrap_or(!pending.xid.is_empty() && by_ids_committed);
        let outcome = if committed {
            OutcomeId::ReconciledCommitted
        } else {
            OutcomeId::ReconciledNotCommitted
        };
        let reconciliation = Reconciliation {
            event_id: event_id.to_owned(),
            xid: pending.xid.clone(),
            xact_status,
            ticket_status: status,
            outbox_row_present: count > 0,
            by_ids_committed,
            by_xid_committed,
        };
        // The model judges the tables against what the attempt leaves from the state before
        // it; only a lost COMMIT reply's fate comes from PostgreSQL's answer.
        let spec = AttemptSpec::from_settings(&pending.settings)
            .map_err(|e| LabError::Config(format!("the stored attempt is no longer valid: {e}")))?;
        let expected = model::predict_reconcile(
            &pending.before,
            &spec,
            stored_payload.as_deref(),
            committed,
            pending.writer_after,
        );
        self.finish(
            lock,
            sandbox,
            ActionKind::Reconcile,
            Some(pending.settings.clone()),
            before,
            trace,
            Some(outcome),
            expected,
            Pending::Keep,
            |r| r.reconciliation = Some(reconciliation),
        )
        .await
    }
}
