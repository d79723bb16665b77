//! What one action did for one quest, as the report carries it to the browser. Plain data;
//! the judging that fills it in is in `quest::judge`.

use serde::{Deserialize, Serialize};

/// What one action did for one quest: the checks of each stage it met, and whether it was an
/// attempt along the quest's dead end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestSeen {
    pub quest: String,
    /// Per stage, per check: held.
    pub held: Vec<Vec<bool>>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tried: bool,
}

impl QuestSeen {
    /// Bit `k` set: every check of stage `k` held.
    pub fn met(&self) -> u32 {
        self.held
            .iter()
            .enumerate()
            .filter(|(_, checks)| !checks.is_empty() && checks.iter().all(|&h| h))
            .fold(0, |mask, (k, _)| mask | (1 << k))
    }
}
