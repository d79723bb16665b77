//! Sharing a run: keeping a sandbox's last report for a replay link, reading it back, and
//! forgetting expired ones. What is kept, and its id, are in `replays`.

use super::super::error::LabError;
use super::super::names::SchemaName;
use super::super::replays::{ReplayId, read_stored, stored_text};
use super::super::runner::Lab;
use crate::report::Report;

impl Lab {
    /// Keeps the sandbox's last run for a replay link, paid from `client`'s share budget.
    pub async fn share(&self, sandbox: &SchemaName, client: &str) -> Result<ReplayId, LabError> {
        let report = self.current_report(sandbox).await?;
        if report.trace.is_empty() {
            return Err(LabError::NothingToShare);
        }
        let policy = self.config().replays;
        let text = stored_text(&report).map_err(LabError::Report)?;
        if text.len() > policy.max_bytes {
            return Err(LabError::ReplayTooLarge {
                bytes: text.len(),
                limit: policy.max_bytes,
            });
        }
        // Its own bucket in the claim budgets' table: a space never starts an address.
        let spent: bool = sqlx::query_scalar("SELECT lab.spend_claim($1, $2, $3)")
            .bind(format!("share {client}"))
            .bind(policy.per_client.per_second)
            .bind(policy.per_client.burst)
            .fetch_one(self.pool())
            .await
            .map_err(LabError::from_sqlx)?;
        if !spent {
            return Err(LabError::ShareRateLimited);
        }
        let id = ReplayId::of(&text);
        sqlx::query(
            "INSERT INTO lab.replays (id, report, expires_at) \
             VALUES ($1, $2, now() + make_interval(secs => $3)) \
             ON CONFLICT (id) DO UPDATE SET expires_at = greatest(lab.replays.expires_at, \
             excluded.expires_at)",
        )
        .bind(id.as_str())
        .bind(&text)
        .bind(policy.keep_for.as_secs_f64())
        .execute(self.pool())
        .await
        .map_err(LabError::from_sqlx)?;
        Ok(id)
    }

    /// A shared run, while it is kept.
    pub async fn replay(&self, id: &ReplayId) -> Result<Option<Report>, LabError> {
        let text: Option<String> = sqlx::query_scalar(
            "SELECT report FROM lab.replays WHERE id = $1 AND expires_at > now()",
        )
        .bind(id.as_str())
        .fetch_optional(self.pool())
        .await
        .map_err(LabError::from_sqlx)?;
        text.map(|t| read_stored(&t).map_err(LabError::Report))
            .transpose()
    }

    /// Forgets shared runs past their time; answers how many.
    pub async fn forget_expired_replays(&self) -> Result<u64, LabError> {
        sqlx::query("DELETE FROM lab.replays WHERE expires_at <= now()")
            .execute(self.pool())
            .await
            .map(|r| r.rows_affected())
            .map_err(LabError::from_sqlx)
    }
}
