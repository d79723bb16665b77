//! What the class got wrong: counts over every sandbox, no personal data (the author's page).

use serde::{Deserialize, Serialize};

/// One failure-table row or wrong way, over the class.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowCounts {
    /// `row` (a failure-table row) or `wrong` (a wrong way).
    pub kind: String,
    pub id: String,
    /// Learners who produced it.
    pub explored: u32,
    /// Of those, learners whose last prediction for it was judged.
    pub predicted: u32,
    /// Of those, learners whose last prediction for it was right.
    pub right: u32,
    /// Wrong predictions by the sentence naming their misunderstanding: (why id, learners),
    /// most frequent first.
    pub misses: Vec<(String, u32)>,
}

/// One quest, over the class.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestCounts {
    pub id: String,
    /// Learners who touched it (a stage met, a hint, an attempt along its dead end).
    pub touched: u32,
    pub reached: u32,
    /// Learners who gave a right answer.
    pub explained_right: u32,
    /// Learners who answered, but only wrongly so far.
    pub explained_wrong: u32,
    /// Hints taken, summed over learners.
    pub hints_used: u32,
    /// Wrong choices: (choice id, learners), most frequent first.
    pub wrong_answers: Vec<(String, u32)>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthorCounts {
    /// Sandboxes held by a learner.
    pub learners: u32,
    pub rows: Vec<RowCounts>,
    pub quests: Vec<QuestCounts>,
}

impl AuthorCounts {
    /// The counts as CSV: one line per failure-table row, wrong way and quest; a column that
    /// does not apply to the line's kind is empty; the lists are `id:learners` joined by `;`.
    /// Ids are `[a-z0-9_]`, so nothing needs quoting.
    pub fn to_csv(&self) -> String {
        let list = |v: &[(String, u32)]| {
            v.iter()
                .map(|(id, n)| format!("{id}:{n}"))
                .collect::<Vec<_>>()
                .join(";")
        };
        let mut out = String::from(
            "kind,id,explored,predicted,predicted_right,touched,reached,explained_right,explained_wrong,hints_used,wrong\n",
        );
        for r in &self.rows {
            out.push_str(&format!(
                "{},{},{},{},{},,,,,,{}\n",
                r.kind,
                r.id,
                r.explored,
                r.predicted,
                r.right,
                list(&r.misses)
            ));
        }
        for q in &self.quests {
            out.push_str(&format!(
                "quest,{},,,,{},{},{},{},{},{}\n",
                q.id,
                q.touched,
                q.reached,
                q.explained_right,
                q.explained_wrong,
                q.hints_used,
                list(&q.wrong_answers)
            ));
        }
        out
    }
}
