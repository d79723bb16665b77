//! The sandbox's progress through the lesson: read it, start over, and the "predict first"
//! switch. What an action explores is written with its report (`lab.save_report`).

use crate::progress::{Predictions, Progress, QuestsDone};

use super::super::error::LabError;
use super::super::names::SchemaName;
use super::super::runner::Lab;

impl Lab {
    /// What the sandbox has explored and how its predictions went.
    pub async fn progress(&self, sandbox: &SchemaName) -> Result<Progress, LabError> {
        // The quests' sums ride on the registry's row: one read, not two, per page view.
        type Head = (i32, i32, Option<bool>, i64, i64, i64, i64);
        let head: Option<Head> = sqlx::query_as(
            "SELECT s.predictions_made, s.predictions_right, s.predict_first, q.* \
             FROM lab.sandboxes s, LATERAL ( \
                 SELECT count(*) FILTER (WHERE reached), count(*) FILTER (WHERE explained), \
                        count(*) FILTER (WHERE NOT explained), coalesce(sum(hints_used), 0) \
                 FROM lab.quest_progress WHERE schema_name = s.schema_name) q \
             WHERE s.schema_name = $1",
        )
        .bind(sandbox.as_str())
        .fetch_optional(self.pool())
        .await
        .map_err(LabError::from_sqlx)?;
        let Some((made, right, predict_first, reached, explained, explained_wrong, hints_used)) =
            head
        else {
            return Err(LabError::SandboxGone(sandbox.to_string()));
        };
        let found: Vec<(String, String, Option<bool>)> =
            sqlx::query_as("SELECT kind, id, predicted FROM lab.explored WHERE schema_name = $1")
                .bind(sandbox.as_str())
                .fetch_all(self.pool())
                .await
                .map_err(LabError::from_sqlx)?;
        let predictions = Predictions {
            made: u32::try_from(made).unwrap_or(0),
            right: u32::try_from(right).unwrap_or(0),
        };
        let n = |v: i64| u32::try_from(v).unwrap_or(0);
        let mut progress = Progress::from_found(&found, predictions, predict_first);
        progress.quests = QuestsDone {
            reached: n(reached),
            explained: n(explained),
            explained_wrong: n(explained_wrong),
            hints_used: n(hints_used),
            total: u32::try_from(self.config().quests.quests.len()).unwrap_or(0),
        };
        Ok(progress)
    }

    /// Remembers the learner's "predict first" choice for this sandbox.
    pub async fn set_predict_first(
        &self,
        sandbox: &SchemaName,
        on: bool,
    ) -> Result<Progress, LabError> {
        sqlx::query("UPDATE lab.sandboxes SET predict_first = $2 WHERE schema_name = $1")
            .bind(sandbox.as_str())
            .bind(on)
            .execute(self.pool())
            .await
            .map_err(LabError::from_sqlx)?;
        self.progress(sandbox).await
    }
}
