//! The quests' server functions (`/api/quests`, `/api/quest_hint`, `/api/quest_answer`,
//! `/api/author`) and what they answer, in the learner's language.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::api::ApiError;

/// One quest as the learner sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestEntry {
    pub id: String,
    /// `ticket`, `trace_a`, `race` or `after_commit`.
    pub area: String,
    pub title: String,
    pub goal: String,
    pub reached: bool,
    /// `null` until answered; then whether a right answer has been given.
    pub explained: Option<bool>,
    pub hints_used: u32,
    pub hints_total: u32,
    /// The hints shown so far, in order.
    pub hints: Vec<String>,
    /// Stages met so far.
    pub stage: u32,
    /// Each stage's checks, as sentences.
    pub stages: Vec<Vec<String>>,
    /// Said once the learner has tried the way that cannot reach the goal often enough.
    pub dead_end: Option<String>,
    /// Asked once the goal holds.
    pub question: Option<QuestionView>,
    /// The learner's latest answer, judged.
    pub last_answer: Option<AnswerView>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionView {
    pub ask: String,
    /// `(id, text)` in the file's order.
    pub choices: Vec<(String, String)>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerView {
    pub id: String,
    pub right: bool,
    /// For a wrong answer: the misunderstanding it shows.
    pub why: Option<String>,
}

/// The answer of `/api/quests`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestList {
    pub quests: Vec<QuestEntry>,
}

impl QuestList {
    pub fn get(&self, id: &str) -> Option<&QuestEntry> {
        self.quests.iter().find(|q| q.id == id)
    }

    pub fn reached(&self) -> usize {
        self.quests.iter().filter(|q| q.reached).count()
    }
}

#[cfg(feature = "ssr")]
mod build {
    use outbox_lab::quest::{Quest, QuestState};

    use super::*;

    pub fn entry(quest: &Quest, state: &QuestState, lang: &str) -> QuestEntry {
        let dead_end = quest
            .dead_end
            .as_ref()
            .filter(|d| !state.reached && state.tries >= d.after)
            .map(|d| d.says.get(lang).to_owned());
        let question = state.reached.then(|| QuestionView {
            ask: quest.question.ask.get(lang).to_owned(),
            choices: quest
                .question
                .choices
                .iter()
                .map(|c| (c.id.clone(), c.text.get(lang).to_owned()))
                .collect(),
        });
        let last_answer = state
            .last_answer
            .as_deref()
            .and_then(|id| quest.question.choice(id))
            .map(|c| AnswerView {
                id: c.id.clone(),
                right: c.right,
                why: c.why.as_ref().map(|w| w.get(lang).to_owned()),
            });
        let shown = (state.hints_used as usize).min(quest.hints.len());
        QuestEntry {
            id: quest.id.clone(),
            area: quest.area.id().to_owned(),
            title: quest.title.get(lang).to_owned(),
            goal: quest.goal.get(lang).to_owned(),
            reached: state.reached,
            explained: state.explained,
            hints_used: state.hints_used,
            hints_total: u32::try_from(quest.hints.len()).unwrap_or(u32::MAX),
            hints: quest.hints[..shown]
                .iter()
                .map(|h| h.get(lang).to_owned())
                .collect(),
            stage: state.stage,
            stages: quest
                .stages
                .iter()
                .map(|s| {
                    s.checks
                        .iter()
                        .map(|c| c.says.get(lang).to_owned())
                        .collect()
                })
                .collect(),
            dead_end,
            question,
            last_answer,
        }
    }

    pub fn lang() -> &'static str {
        crate::locale::id(crate::locale::current())
    }
}

/// Every quest with this learner's standing: done or not yet, hints used, explained. A learner
/// without a sandbox gets the list with nothing reached, and claims none.
#[server(prefix = "/api", endpoint = "quests")]
pub async fn quests() -> Result<QuestList, ApiError> {
    let states = crate::backend::session::in_existing_sandbox(
        || None,
        |lab, sandbox| async move { lab.quests(Some(&sandbox)).await.map(Some) },
    )
    .await?;
    let state = crate::backend::state::AppState::get()?;
    let book = &state.lab.config().quests;
    let lang = build::lang();
    let quests = book
        .quests
        .iter()
        .map(|q| {
            let fresh = outbox_lab::quest::QuestState::fresh(&q.id);
            let s = states
                .as_ref()
                .and_then(|all| all.iter().find(|s| s.id == q.id))
                .unwrap_or(&fresh);
            build::entry(q, s, lang)
        })
        .collect();
    Ok(QuestList { quests })
}

/// The quest's next hint (up to its last); answers the quest with the hints shown so far.
#[server(prefix = "/api", endpoint = "quest_hint")]
pub async fn quest_hint(quest: String) -> Result<QuestEntry, ApiError> {
    crate::backend::session::in_learner_sandbox(|lab, sandbox| async move {
        let state = lab.quest_hint(&sandbox, &quest).await?;
        Ok(build::entry(lab.quest(&quest)?, &state, build::lang()))
    })
    .await
}

/// What an answer got.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerResult {
    pub right: bool,
    /// Whether the quest counts as explained (a right answer given, now or before).
    pub explained: bool,
    /// For a wrong answer: the misunderstanding it shows.
    pub why: Option<String>,
    pub quest: QuestEntry,
}

/// Judges the answer to a reached quest's question (`409 quest_not_reached` before).
#[server(prefix = "/api", endpoint = "quest_answer")]
pub async fn quest_answer(quest: String, answer: Option<String>) -> Result<AnswerResult, ApiError> {
    let answer = answer.unwrap_or_default();
    crate::backend::session::in_learner_sandbox(|lab, sandbox| async move {
        let verdict = lab.quest_answer(&sandbox, &quest, &answer).await?;
        let lang = build::lang();
        Ok(AnswerResult {
            right: verdict.choice.right,
            explained: verdict.explained,
            why: verdict.choice.why.as_ref().map(|w| w.get(lang).to_owned()),
            quest: build::entry(lab.quest(&quest)?, &verdict.state, lang),
        })
    })
    .await
}

/// Whether `given` is the configured author token; none configured, no author's page.
#[cfg(feature = "ssr")]
pub fn author_allowed(
    state: &crate::backend::state::AppState,
    l: crate::i18n::Locale,
    given: &str,
) -> Result<(), ApiError> {
    let Some(token) = state.web.author_token.as_deref() else {
        return Err(ApiError::new(
            http::StatusCode::NOT_FOUND,
            "no_author_page",
            leptos_i18n::td_string!(l, errors.no_author_page).to_owned(),
        ));
    };
    // Compared in time independent of where the two differ.
    let same = token.len() == given.len()
        && token
            .bytes()
            .zip(given.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0;
    if same {
        Ok(())
    } else {
        tracing::info!("author's page: wrong token");
        Err(ApiError::new(
            http::StatusCode::FORBIDDEN,
            "author_token_wrong",
            leptos_i18n::td_string!(l, errors.author_token_wrong).to_owned(),
        ))
    }
}

/// What the class got wrong, aggregated over every sandbox (no personal data), for the course
/// author holding `PLAYGROUND_AUTHOR_TOKEN`.
#[server(prefix = "/api", endpoint = "author")]
pub async fn author(
    token: Option<String>,
) -> Result<outbox_lab::quest::author::AuthorCounts, ApiError> {
    let state = crate::backend::state::AppState::get()?;
    author_allowed(
        &state,
        crate::locale::current(),
        token.as_deref().unwrap_or_default(),
    )?;
    state.lab.author_counts().await.map_err(ApiError::from_lab)
}
