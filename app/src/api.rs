//! The server functions: the playground's HTTP API at stable endpoints under `/api`.
//!
//! They take the default form encoding (`application/x-www-form-urlencoded`) and answer JSON.
//! Each one is thin: find the learner's sandbox, call the lab, map errors at the edge.

// A form posts flat fields, one server-function argument each; the attempt has ten.
#![allow(clippy::too_many_arguments)]

use leptos::prelude::*;
use outbox_lab::progress::Progress as ProgressReport;
use outbox_lab::report::{CompareReport, Report};
use serde::{Deserialize, Serialize};

pub use crate::api_error::ApiError;

/// The learner's tables and the last action's report (what the page shows on load).
#[server(prefix = "/api", endpoint = "current")]
pub async fn current() -> Result<Report, ApiError> {
    crate::backend::session::in_existing_sandbox(no_sandbox_yet, |lab, sandbox| async move {
        lab.current_report(&sandbox).await
    })
    .await
}

/// The report without acting.
#[server(prefix = "/api", endpoint = "snapshot")]
pub async fn snapshot() -> Result<Report, ApiError> {
    crate::backend::session::in_existing_sandbox(no_sandbox_yet, |lab, sandbox| async move {
        lab.snapshot_report(&sandbox).await
    })
    .await
}

/// The learner's prediction from its four optional fields.
#[cfg(feature = "ssr")]
fn prediction_of(
    ticket: &Option<String>,
    outbox: &Option<String>,
    kafka: &Option<String>,
    client: &Option<String>,
) -> Result<outbox_lab::prediction::Prediction, ApiError> {
    outbox_lab::prediction::Prediction::parse(outbox_lab::prediction::PredictionFields {
        ticket: ticket.as_deref(),
        outbox: outbox.as_deref(),
        kafka: kafka.as_deref(),
        client: client.as_deref(),
        ..Default::default()
    })
    .map_err(ApiError::from_input)
}

/// What a learner without a sandbox sees: the lesson's initial state, which every sandbox is
/// stamped with (`lab_template`); their own sandbox is created by their first action.
#[cfg(feature = "ssr")]
fn no_sandbox_yet() -> Report {
    Report::of_snapshot(
        String::new(),
        outbox_lab::catalog::ActionKind::Snapshot,
        outbox_lab::model::initial_state(),
    )
}

/// Puts the learner's sandbox back to the lesson's initial state.
#[server(prefix = "/api", endpoint = "reset")]
pub async fn reset() -> Result<Report, ApiError> {
    crate::backend::session::in_learner_sandbox(
        |lab, sandbox| async move { lab.reset(&sandbox).await },
    )
    .await
}

/// "Support reopens ticket-42": a separate, committed UPDATE; outbox rows stay.
#[server(prefix = "/api", endpoint = "reopen")]
pub async fn reopen() -> Result<Report, ApiError> {
    crate::backend::session::in_learner_sandbox(
        |lab, sandbox| async move { lab.reopen(&sandbox).await },
    )
    .await
}

/// The lesson's transaction on ticket-42. Absent fields take the lesson's values:
/// `mode` outbox, `mistakes` none, `crash` none, `commit_fate` random, `event_id`
/// event-ticket-900, `payload` the lesson's JSON.
#[server(prefix = "/api", endpoint = "attempt")]
pub async fn attempt(
    mode: Option<String>,
    mistakes: Option<String>,
    crash: Option<String>,
    commit_fate: Option<String>,
    event_id: Option<String>,
    payload: Option<String>,
    predict_ticket: Option<String>,
    predict_outbox: Option<String>,
    predict_kafka: Option<String>,
    predict_client: Option<String>,
) -> Result<Report, ApiError> {
    let spec = outbox_lab::input::AttemptSpec::from_fields(outbox_lab::input::AttemptFields {
        mode: mode.as_deref(),
        mistakes: mistakes.as_deref(),
        crash: crash.as_deref(),
        commit_fate: commit_fate.as_deref(),
        event_id: event_id.as_deref(),
        payload: payload.as_deref(),
    })
    .map_err(ApiError::from_input)?;
    let prediction = prediction_of(
        &predict_ticket,
        &predict_outbox,
        &predict_kafka,
        &predict_client,
    )?;
    crate::backend::session::in_learner_sandbox(|lab, sandbox| async move {
        lab.attempt_predicted(&sandbox, &spec, &prediction).await
    })
    .await
}

/// Decides the last attempt's outcome from the database alone: by the stable ids and by the
/// transaction id noted inside the attempt.
#[server(prefix = "/api", endpoint = "reconcile")]
pub async fn reconcile() -> Result<Report, ApiError> {
    crate::backend::session::in_learner_sandbox(|lab, sandbox| async move {
        lab.reconcile(&sandbox).await
    })
    .await
}

/// Two requests resolve ticket-42 at the same moment on two connections (A with
/// event-ticket-900, B with event-ticket-901). `mistakes` may be `unguarded_update`.
#[server(prefix = "/api", endpoint = "race")]
pub async fn race(mistakes: Option<String>) -> Result<Report, ApiError> {
    let mistakes =
        outbox_lab::input::race_mistakes(mistakes.as_deref()).map_err(ApiError::from_input)?;
    crate::backend::session::in_learner_sandbox(|lab, sandbox| async move {
        lab.race(&sandbox, &mistakes).await
    })
    .await
}

/// After COMMIT (a preview of lesson 8.3): the service restarts and its publisher runs once.
/// `crash`: one of [`outbox_lab::catalog::PublisherCrash`] — `none`, `before_send` (dies holding
/// the rows' locks), `after_send` (dies after the broker took the first event, before its mark)
/// or `after_mark` (dies after the mark, before COMMIT).
/// `predict_sends` (`none`, `one`, `more`) and `predict_mark` (`null`, `set`): the learner's
/// prediction, judged from the tables afterwards.
#[server(prefix = "/api", endpoint = "restart")]
pub async fn restart(
    crash: Option<String>,
    predict_sends: Option<String>,
    predict_mark: Option<String>,
) -> Result<Report, ApiError> {
    let crash =
        outbox_lab::input::publisher_crash(crash.as_deref()).map_err(ApiError::from_input)?;
    let prediction =
        outbox_lab::prediction::Prediction::parse(outbox_lab::prediction::PredictionFields {
            sends: predict_sends.as_deref(),
            mark: predict_mark.as_deref(),
            ..Default::default()
        })
        .map_err(ApiError::from_input)?;
    crate::backend::session::in_learner_sandbox(|lab, sandbox| async move {
        lab.restart(&sandbox, crash, &prediction).await
    })
    .await
}

/// Two publishers at once on two connections; `skip_locked`: `on` (default) or `off` (a plain
/// `FOR UPDATE`: the second waits for the first).
#[server(prefix = "/api", endpoint = "publish_race")]
pub async fn publish_race(skip_locked: Option<String>) -> Result<Report, ApiError> {
    let skip_locked = outbox_lab::input::switch("skip_locked", skip_locked.as_deref(), true)
        .map_err(ApiError::from_input)?;
    crate::backend::session::in_learner_sandbox(|lab, sandbox| async move {
        lab.publish_race(&sandbox, skip_locked).await
    })
    .await
}

/// After COMMIT (a preview of lesson 8.4): the History consumer reads the topic from its
/// committed offset. `inbox`: `on` (default) or `off`; `crash`: one of
/// [`outbox_lab::catalog::ConsumerCrash`] — `none`, `before_commit` or `after_apply`;
/// `predict_history` (`none`, `once`, `twice`): the learner's prediction.
#[server(prefix = "/api", endpoint = "consume")]
pub async fn consume(
    inbox: Option<String>,
    crash: Option<String>,
    predict_history: Option<String>,
) -> Result<Report, ApiError> {
    let inbox =
        outbox_lab::input::switch("inbox", inbox.as_deref(), true).map_err(ApiError::from_input)?;
    let crash =
        outbox_lab::input::consumer_crash(crash.as_deref()).map_err(ApiError::from_input)?;
    let prediction =
        outbox_lab::prediction::Prediction::parse(outbox_lab::prediction::PredictionFields {
            history: predict_history.as_deref(),
            ..Default::default()
        })
        .map_err(ApiError::from_input)?;
    crate::backend::session::in_learner_sandbox(|lab, sandbox| async move {
        lab.consume(&sandbox, inbox, crash, &prediction).await
    })
    .await
}

/// The same attempt the outbox way and a wrong way (`way`: `naive`, `naive_publish_first`, or
/// comma-separated mistakes), each in a sandbox of its own, from the same starting state.
#[server(prefix = "/api", endpoint = "compare")]
pub async fn compare(
    way: Option<String>,
    crash: Option<String>,
    commit_fate: Option<String>,
    event_id: Option<String>,
    payload: Option<String>,
    predict_ticket: Option<String>,
    predict_outbox: Option<String>,
    predict_kafka: Option<String>,
    predict_client: Option<String>,
) -> Result<CompareReport, ApiError> {
    let spec = outbox_lab::input::AttemptSpec::from_way(
        way.as_deref(),
        outbox_lab::input::AttemptFields {
            crash: crash.as_deref(),
            commit_fate: commit_fate.as_deref(),
            event_id: event_id.as_deref(),
            payload: payload.as_deref(),
            ..Default::default()
        },
    )
    .map_err(ApiError::from_input)?;
    let prediction = prediction_of(
        &predict_ticket,
        &predict_outbox,
        &predict_kafka,
        &predict_client,
    )?;
    // A comparison's own sandboxes are new sandboxes too: the learner's address pays.
    let client = crate::backend::session::client_address();
    crate::backend::session::in_learner_sandbox(|lab, sandbox| async move {
        lab.compare_predicted(&sandbox, &spec, &prediction, client.as_deref())
            .await
    })
    .await
}

/// The learner's last comparison, or null.
#[server(prefix = "/api", endpoint = "last_compare")]
pub async fn last_compare() -> Result<Option<CompareReport>, ApiError> {
    crate::backend::session::in_existing_sandbox(
        || None,
        |lab, sandbox| async move { lab.last_compare(&sandbox).await },
    )
    .await
}

/// What a link with `autorun=1` runs on load: the sandbox back to the initial state, then
/// the attempt the link describes.
#[server(prefix = "/api", endpoint = "autorun")]
pub async fn autorun(
    mode: Option<String>,
    mistakes: Option<String>,
    crash: Option<String>,
    commit_fate: Option<String>,
) -> Result<Report, ApiError> {
    let spec = outbox_lab::input::AttemptSpec::from_fields(outbox_lab::input::AttemptFields {
        mode: mode.as_deref(),
        mistakes: mistakes.as_deref(),
        crash: crash.as_deref(),
        commit_fate: commit_fate.as_deref(),
        ..Default::default()
    })
    .map_err(ApiError::from_input)?;
    crate::backend::session::in_learner_sandbox(|lab, sandbox| async move {
        lab.reset(&sandbox).await?;
        lab.attempt(&sandbox, &spec).await
    })
    .await
}

/// What this sandbox has explored of the failure table and the wrong ways, and how its
/// predictions went.
#[server(prefix = "/api", endpoint = "progress")]
pub async fn progress() -> Result<ProgressReport, ApiError> {
    let mut progress = crate::backend::session::in_existing_sandbox(
        ProgressReport::empty,
        |lab, sandbox| async move { lab.progress(&sandbox).await },
    )
    .await?;
    // A newcomer's empty map still knows how many quests there are.
    let state = crate::backend::state::AppState::get()?;
    progress.quests.total = u32::try_from(state.lab.config().quests.quests.len()).unwrap_or(0);
    Ok(progress)
}

/// "Start over": the lesson's initial tables and an empty progress map (reset keeps the map).
#[server(prefix = "/api", endpoint = "start_over")]
pub async fn start_over() -> Result<Report, ApiError> {
    crate::backend::session::in_learner_sandbox(|lab, sandbox| async move {
        lab.start_over(&sandbox).await
    })
    .await
}

/// The "predict first" switch (`on`: `true` | `false`), remembered for this sandbox.
#[server(prefix = "/api", endpoint = "predict_first")]
pub async fn predict_first(on: Option<String>) -> Result<ProgressReport, ApiError> {
    // Every on/off field parses through one function and is refused with one code.
    let on = outbox_lab::input::switch("on", on.as_deref(), false).map_err(ApiError::from_input)?;
    crate::backend::session::in_learner_sandbox(|lab, sandbox| async move {
        lab.set_predict_first(&sandbox, on).await
    })
    .await
}

/// A replay link to a shared run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shared {
    /// The link's id: 32 hex digits, the start of the stored run's SHA-256.
    pub id: String,
    /// The replay page's address (absolute when `PLAYGROUND_PUBLIC_URL` is set).
    pub url: String,
}

/// Keeps the sandbox's last run for a replay link (`/replay/<id>`): the same run always gets
/// the same link. A plain form post (no script) is sent on to the replay page itself.
#[server(prefix = "/api", endpoint = "share")]
pub async fn share() -> Result<Shared, ApiError> {
    let client = crate::backend::session::client_address().unwrap_or_else(|| "unknown".to_owned());
    let id = crate::backend::session::in_existing_sandbox(
        || None,
        |lab, sandbox| async move { lab.share(&sandbox, &client).await.map(Some) },
    )
    .await?
    .ok_or_else(|| ApiError::from_lab(outbox_lab::pg::LabError::NothingToShare))?;
    let path = crate::links::replay_path(id.as_str(), None);
    let url = crate::backend::session::public_url(&path);
    if crate::backend::session::wants_page() {
        let l = crate::locale::current();
        // From a course page's frame, the replay stays in the frame's own layout.
        let page = if crate::backend::session::posted_from_frame() {
            crate::links::embedded_replay_path(id.as_str(), l)
        } else {
            crate::links::replay_path(id.as_str(), Some(l))
        };
        leptos_axum::redirect(&page);
    }
    Ok(Shared {
        id: id.to_string(),
        url,
    })
}

/// A shared run's report, as the replay page shows it; `replay_not_found` once it has expired
/// (or never existed).
#[server(prefix = "/api", endpoint = "replay")]
pub async fn replay(id: String) -> Result<Report, ApiError> {
    let state = crate::backend::state::AppState::get()?;
    let found = match outbox_lab::pg::ReplayId::parse(&id) {
        Some(id) => state.lab.replay(&id).await.map_err(ApiError::from_lab)?,
        None => None,
    };
    found.ok_or_else(|| ApiError::replay_not_found(crate::locale::current()))
}
