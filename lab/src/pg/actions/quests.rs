//! Quests: the sandbox's standing, hints, answers, and the class's counts for the author.
//! What an action reaches is written with its report (`lab.leave_action`).

use crate::catalog::FailureRow;
use crate::progress::WRONG_WAYS;
use crate::quest::author::{AuthorCounts, QuestCounts, RowCounts};
use crate::quest::{Choice, Quest, QuestState};

use super::super::error::LabError;
use super::super::names::SchemaName;
use super::super::runner::Lab;

/// What an answer to a quest's question got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerVerdict {
    pub choice: Choice,
    /// Whether the quest now counts as explained (a right answer was given, now or before).
    pub explained: bool,
    pub state: QuestState,
}

type StateRow = (String, i32, bool, i32, i32, Option<bool>, Option<String>);

impl Lab {
    pub fn quest(&self, id: &str) -> Result<&Quest, LabError> {
        self.config()
            .quests
            .get(id)
            .ok_or_else(|| LabError::UnknownQuest(id.to_owned()))
    }

    /// Every quest, in the file's order, with this sandbox's standing; `None` for a learner
    /// without a sandbox (nothing reached).
    pub async fn quests(&self, sandbox: Option<&SchemaName>) -> Result<Vec<QuestState>, LabError> {
        let rows: Vec<StateRow> = match sandbox {
            None => Vec::new(),
            Some(sandbox) => sqlx::query_as(
                "SELECT quest, stage, reached, tries, hints_used, explained, last_answer \
                 FROM lab.quest_progress WHERE schema_name = $1",
            )
            .bind(sandbox.as_str())
            .fetch_all(self.pool())
            .await
            .map_err(LabError::from_sqlx)?,
        };
        Ok(self
            .config()
            .quests
            .quests
            .iter()
            .map(|q| match rows.iter().find(|r| r.0 == q.id) {
                Some(row) => state_of(row),
                None => QuestState::fresh(&q.id),
            })
            .collect())
    }

    async fn quest_state(&self, sandbox: &SchemaName, id: &str) -> Result<QuestState, LabError> {
        let row: Option<StateRow> = sqlx::query_as(
            "SELECT quest, stage, reached, tries, hints_used, explained, last_answer \
             FROM lab.quest_progress WHERE schema_name = $1 AND quest = $2",
        )
        .bind(sandbox.as_str())
        .bind(id)
        .fetch_optional(self.pool())
        .await
        .map_err(LabError::from_sqlx)?;
        Ok(row.as_ref().map_or_else(|| QuestState::fresh(id), state_of))
    }

    /// Shows one more hint (up to the quest's last) and answers the standing with the count.
    pub async fn quest_hint(&self, sandbox: &SchemaName, id: &str) -> Result<QuestState, LabError> {
        let quest = self.quest(id)?;
        let available = i32::try_from(quest.hints.len()).unwrap_or(i32::MAX);
        sqlx::query_scalar::<_, i32>("SELECT lab.quest_hint($1, $2, $3)")
            .bind(sandbox.as_str())
            .bind(id)
            .bind(available)
            .fetch_one(self.pool())
            .await
            .map_err(|e| LabError::in_sandbox(e, sandbox.as_str()))?;
        self.quest_state(sandbox, id).await
    }

    /// Judges an answer to a reached quest's question.
    pub async fn quest_answer(
        &self,
        sandbox: &SchemaName,
        id: &str,
        answer: &str,
    ) -> Result<AnswerVerdict, LabError> {
        let quest = self.quest(id)?;
        let choice = quest
            .question
            .choice(answer)
            .ok_or_else(|| LabError::UnknownAnswer {
                quest: id.to_owned(),
                answer: answer.to_owned(),
            })?
            .clone();
        let explained: Option<bool> = sqlx::query_scalar("SELECT lab.quest_answer($1, $2, $3, $4)")
            .bind(sandbox.as_str())
            .bind(id)
            .bind(&choice.id)
            .bind(choice.right)
            .fetch_one(self.pool())
            .await
            .map_err(|e| LabError::in_sandbox(e, sandbox.as_str()))?;
        let explained = explained.ok_or_else(|| LabError::QuestNotReached(id.to_owned()))?;
        let state = self.quest_state(sandbox, id).await?;
        Ok(AnswerVerdict {
            choice,
            explained,
            state,
        })
    }

    /// The class's counts for the author's page, every row, wrong way and quest listed (zero
    /// when nobody got there), aggregated over all sandboxes.
    pub async fn author_counts(&self) -> Result<AuthorCounts, LabError> {
        let pool = self.pool();
        let learners: i64 =
            sqlx::query_scalar("SELECT count(*) FROM lab.sandboxes WHERE token_hash IS NOT NULL")
                .fetch_one(pool)
                .await
                .map_err(LabError::from_sqlx)?;
        let explored: Vec<(String, String, i64, i64, i64)> = sqlx::query_as(
            "SELECT kind, id, count(*), count(predicted), count(*) FILTER (WHERE predicted) \
             FROM lab.explored GROUP BY kind, id",
        )
        .fetch_all(pool)
        .await
        .map_err(LabError::from_sqlx)?;
        let misses: Vec<(String, String, String, i64)> = sqlx::query_as(
            "SELECT kind, id, why, count(*) FROM lab.prediction_misses \
             GROUP BY kind, id, why ORDER BY count(*) DESC, why",
        )
        .fetch_all(pool)
        .await
        .map_err(LabError::from_sqlx)?;
        let quests: Vec<(String, i64, i64, i64, i64, i64)> = sqlx::query_as(
            "SELECT quest, count(*), count(*) FILTER (WHERE reached), \
                    count(*) FILTER (WHERE explained), count(*) FILTER (WHERE NOT explained), \
                    coalesce(sum(hints_used), 0) \
             FROM lab.quest_progress GROUP BY quest",
        )
        .fetch_all(pool)
        .await
        .map_err(LabError::from_sqlx)?;
        let wrong: Vec<(String, String, i64)> = sqlx::query_as(
            "SELECT quest, answer, count(*) FROM lab.quest_progress, unnest(wrong_answers) AS answer \
             GROUP BY quest, answer ORDER BY count(*) DESC, answer",
        )
        .fetch_all(pool)
        .await
        .map_err(LabError::from_sqlx)?;

        let n = |v: i64| u32::try_from(v).unwrap_or(u32::MAX);
        let keys = FailureRow::ALL
            .iter()
            .map(|r| ("row", r.id()))
            .chain(WRONG_WAYS.iter().map(|o| ("wrong", o.id())));
        let rows = keys
            .map(|(kind, id)| {
                let counts = explored.iter().find(|e| e.0 == kind && e.1 == id);
                RowCounts {
                    kind: kind.to_owned(),
                    id: id.to_owned(),
                    explored: counts.map_or(0, |c| n(c.2)),
                    predicted: counts.map_or(0, |c| n(c.3)),
                    right: counts.map_or(0, |c| n(c.4)),
                    misses: misses
                        .iter()
                        .filter(|m| m.0 == kind && m.1 == id)
                        .map(|m| (m.2.clone(), n(m.3)))
                        .collect(),
                }
            })
            .collect();
        let quests = self
            .config()
            .quests
            .quests
            .iter()
            .map(|q| {
                let counts = quests.iter().find(|c| c.0 == q.id);
                QuestCounts {
                    id: q.id.clone(),
                    touched: counts.map_or(0, |c| n(c.1)),
                    reached: counts.map_or(0, |c| n(c.2)),
                    explained_right: counts.map_or(0, |c| n(c.3)),
                    explained_wrong: counts.map_or(0, |c| n(c.4)),
                    hints_used: counts.map_or(0, |c| n(c.5)),
                    wrong_answers: wrong
                        .iter()
                        .filter(|w| w.0 == q.id)
                        .map(|w| (w.1.clone(), n(w.2)))
                        .collect(),
                }
            })
            .collect();
        Ok(AuthorCounts {
            learners: n(learners),
            rows,
            quests,
        })
    }
}

fn state_of(row: &StateRow) -> QuestState {
    let n = |v: i32| u32::try_from(v).unwrap_or(0);
    QuestState {
        id: row.0.clone(),
        stage: n(row.1),
        reached: row.2,
        tries: n(row.3),
        hints_used: n(row.4),
        explained: row.5,
        last_answer: row.6.clone(),
    }
}
