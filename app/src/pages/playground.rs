//! The playground page: its two views (the ticket function, after COMMIT) and the panels
//! they share: outcome, tables, trace, guarantee.

use leptos::either::Either;
use leptos::prelude::*;
use leptos_i18n::td_string;
use leptos_meta::{Meta, Title};
use leptos_router::hooks::use_query_map;
use outbox_lab::catalog::{ActionKind, CommitFate, CrashPoint, Mode, names};
use outbox_lab::input::AttemptSettings;
use outbox_lab::input::{AttemptFields, AttemptSpec, Mistakes};
use outbox_lab::progress::Progress as ProgressReport;
use outbox_lab::report::{CompareReport, Report};

use crate::api::{
    self, ApiError, Attempt, Consume, PublishRace, Race, Reconcile, Reopen, Reset, Restart,
};
use crate::components::actions::Actions;
use crate::components::after_commit::{
    AfterCommitForms, AfterCommitResult, AfterCommitStrip, PublisherFailures,
};
use crate::components::compare::ComparePanel;
use crate::components::controls::Controls;
use crate::components::error_line::ErrorNote;
use crate::components::failure_table::FailureTable;
use crate::components::guarantee::Guarantee;
use crate::components::header::Header;
use crate::components::outcome::Outcome;
use crate::components::tables::{OutsideTables, Tables};
use crate::components::trace::Trace;
use crate::components::view_switch::{PageView, VIEW_PARAM, view_switch};
use crate::links::param;

#[component]
pub fn PlaygroundPage() -> impl IntoView {
    let l = crate::locale::use_locale();
    view! {
        <Title text=td_string!(l, meta_title) />
        <Meta name="description" content=td_string!(l, meta_description) />
        <div class="page">
            <Header />
            <main id="main">
                <Playground />
            </main>
            <footer class="footer">
                <p>{td_string!(l, intro_real)} " " {td_string!(l, footer)}</p>
            </footer>
        </div>
    }
}

/// The playground itself, as the page and the embed show it. Settings in the URL preset the
/// form; `autorun=1` runs that attempt on load, from the initial state.
#[component]
pub fn Playground() -> impl IntoView {
    let l = crate::locale::use_locale();
    let query = use_query_map().get_untracked();
    let preset = Preset::from_query(&query);
    let chosen = crate::components::quest::chosen(
        query.get(crate::components::quest::QUEST_PARAM).as_deref(),
    );
    let leave_quest = leave_quest_href(&query, in_embed_path());
    let asked_view = query.get(VIEW_PARAM);
    // Inside an embed the frame's token travels in every form's address (see `links`).
    let in_embed = leptos_router::hooks::use_location()
        .pathname
        .get_untracked()
        == "/embed";
    provide_context(crate::links::ActionOrigin {
        frame_token: query.get("s").filter(|_| in_embed),
        lang: Some(crate::locale::id(l).to_owned()),
    });
    // The page is rendered whole on the server (`SsrMode::Async`) and this part is never
    // hydrated, so a bare `Suspend` is enough: the stream waits for it. A `<Suspense>` would
    // add, per request, an effect task that walks the rendered view on a tokio worker, and a
    // fallback no one ever sees.
    let panels = async move {
        let report = if preset.autorun {
            let p = preset.clone();
            api::autorun(p.mode, p.mistakes, p.crash, p.commit_fate).await
        } else {
            api::current().await
        };
        match report {
            Ok(report) => {
                // A comparison that cannot be read is simply not shown.
                let compare = api::last_compare().await.ok().flatten();
                // Read after the action above (an autorun's attempt is on the map).
                // Without its map the page still works: it shows an empty one.
                let progress = api::progress()
                    .await
                    .unwrap_or_else(|_| ProgressReport::empty());
                let initial = preset
                    .settings()
                    .or_else(|| report.attempt.clone().filter(|_| report.race.is_none()));
                let autorun = preset.autorun;
                // Only a page with a chosen quest reads the quests (one more query).
                let quests = if chosen.is_empty() {
                    Vec::new()
                } else {
                    let list = crate::quest_api::quests().await.unwrap_or_default();
                    chosen
                        .iter()
                        .filter_map(|id| list.get(id).cloned())
                        .collect()
                };
                // Erased: the whole page's view type is otherwise too deep for the compiler.
                view! {
                    <Panels report compare initial progress embed=in_embed autorun quests leave_quest asked_view />
                }
                .into_any()
            }
            Err(err) => view! { <ErrorNote err /> }.into_any(),
        }
    };
    view! {
        <div data-playground>{Suspend::new(panels)}</div>
        <script inner_html=crate::enhance::SCRIPT></script>
        <script inner_html=crate::enhance::STEPPER></script>
    }
}

fn in_embed_path() -> bool {
    leptos_router::hooks::use_location()
        .pathname
        .get_untracked()
        == "/embed"
}

/// The page's address without its `quest` parameter (the embed keeps its frame token).
fn leave_quest_href(query: &leptos_router::params::ParamsMap, embed: bool) -> String {
    let kept: Vec<String> = query
        .clone()
        .into_iter()
        .filter(|(k, _)| k != crate::components::quest::QUEST_PARAM)
        .map(|(k, v)| format!("{k}={}", crate::links::encode(&v)))
        .collect();
    let path = if embed { "/embed" } else { "/" };
    if kept.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{}", kept.join("&"))
    }
}

/// The attempt's settings as a link carries them.
#[derive(Clone, Debug, Default)]
pub struct Preset {
    pub mode: Option<String>,
    pub mistakes: Option<String>,
    pub crash: Option<String>,
    pub commit_fate: Option<String>,
    pub autorun: bool,
}

impl Preset {
    pub fn from_query(q: &leptos_router::params::ParamsMap) -> Self {
        Preset {
            mode: q.get(param::MODE),
            mistakes: q.get(param::MISTAKES),
            crash: q.get(param::CRASH),
            commit_fate: q.get(param::COMMIT_FATE),
            autorun: q.get(param::AUTORUN).as_deref() == Some("1"),
        }
    }

    /// The settings the link asks for; none when it asks for nothing or for something invalid
    /// (the form then starts as usual, and an autorun reports the error).
    fn settings(&self) -> Option<AttemptSettings> {
        if self.mode.is_none()
            && self.mistakes.is_none()
            && self.crash.is_none()
            && self.commit_fate.is_none()
        {
            return None;
        }
        AttemptSpec::from_fields(AttemptFields {
            mode: self.mode.as_deref(),
            mistakes: self.mistakes.as_deref(),
            crash: self.crash.as_deref(),
            commit_fate: self.commit_fate.as_deref(),
            ..Default::default()
        })
        .ok()
        .map(|spec| spec.settings())
    }
}

/// The refusal a plain form post came back with: the server function put it in the URL it
/// redirected to, and each action reads its own.
fn refusal() -> Option<ApiError> {
    fn of<A>(action: ServerAction<A>) -> Option<ApiError>
    where
        A: leptos::server_fn::ServerFn<Output = Report, Error = ApiError>
            + Clone
            + Send
            + Sync
            + 'static,
    {
        action.value().get_untracked().and_then(Result::err)
    }
    of(ServerAction::<Race>::new())
        .or_else(|| of(ServerAction::<Attempt>::new()))
        .or_else(|| of(ServerAction::<Reset>::new()))
        .or_else(|| of(ServerAction::<Reopen>::new()))
        .or_else(|| of(ServerAction::<Reconcile>::new()))
        .or_else(|| of(ServerAction::<Restart>::new()))
        .or_else(|| of(ServerAction::<PublishRace>::new()))
        .or_else(|| of(ServerAction::<Consume>::new()))
}

/// Everything below the controls is plain server HTML: after an action the page's script
/// swaps in the server's new rendering (see `enhance`), so none of it is hydrated.
#[component]
fn Panels(
    report: Report,
    compare: Option<CompareReport>,
    /// The form's starting settings: the link's, else the last attempt's, else the lesson's.
    initial: Option<AttemptSettings>,
    /// The learner's map of the failure table.
    progress: ProgressReport,
    /// Inside a course page's frame: "predict first" is on unless the learner turned it off.
    embed: bool,
    /// The attempt a link ran on load: the author's demonstration, shown in full.
    autorun: bool,
    /// The quests the link chose, with the learner's standing.
    quests: Vec<crate::quest_api::QuestEntry>,
    /// The same page without its quests.
    leave_quest: String,
    /// The view the link asks for (`?view=`), if any.
    asked_view: Option<String>,
) -> impl IntoView {
    let l = crate::locale::use_locale();
    let initial = initial.unwrap_or_else(|| AttemptSettings {
        mode: Mode::Outbox,
        mistakes: Mistakes::none(),
        crash: CrashPoint::None,
        commit_fate: CommitFate::Random,
        event_id: names::EVENT_ID.to_owned(),
        payload: names::PAYLOAD.to_owned(),
    });
    let trail = outbox_lab::trail::Trail::of(&report);
    let page_view = PageView::chosen(asked_view.as_deref(), &report);
    let error = Signal::stored(refusal());
    let report = Signal::stored(report);
    let frame = use_context::<crate::links::ActionOrigin>().and_then(|o| o.frame_token);
    let predict_first = progress.predict_first.unwrap_or(embed);
    let unpredicted = {
        let r = report.read_untracked();
        r.action == ActionKind::Attempt && r.prediction.is_none() && !autorun
    };
    // Predict first: an attempt the learner did not predict keeps its tables folded until
    // they choose to look (a <details>, so it works without JavaScript too). Predicting first
    // folds Kafka and History too; otherwise they stand under the outcome.
    let (tables, outside) = if predict_first && unpredicted {
        let folded = view! {
            <details class="panel reveal" data-fresh>
                <summary>{td_string!(l, prediction.reveal)}</summary>
                <p class="action-hint">{td_string!(l, prediction.hidden_note)}</p>
                <Tables report db_only=true />
                <OutsideTables report />
            </details>
        };
        (Either::Left(folded), None)
    } else {
        let outside = view! {
            <div class="panel">
                <OutsideTables report />
            </div>
        };
        (
            Either::Right(view! { <Tables report db_only=true /> }),
            Some(outside),
        )
    };
    let message = progress_message(&progress, &report.get_untracked(), &quests);
    let quest_panels: Vec<_> = quests
        .into_iter()
        .map(|entry| {
            let report = report.get_untracked();
            let leave_href = leave_quest.clone();
            view! { <crate::components::quest::QuestPanel entry report leave_href /> }
        })
        .collect();
    // Each panel belongs to the ticket function's view, to the after-COMMIT view, or to both
    // (the outcome, the tables, the ladder, the trace): see `view_switch`. Each part is erased
    // (`into_any`): the whole page's view type is otherwise too deep for the compiler.
    let ticket_top = view! {
        <div class="for-ticket">
            <Controls initial trail lang=crate::locale::id(l).to_owned() frame>
                {crate::components::prediction::prediction_fields(l, predict_first)}
            </Controls>
            {crate::components::prediction::predict_first_form(predict_first)}
        </div>
    }
    .into_any();
    let after_top = view! {
        <div class="for-after-commit">
            <AfterCommitStrip report />
            <AfterCommitForms />
        </div>
    }
    .into_any();
    let results = view! {
        <div class="results">
            <div class="results-side">
                <Outcome report error />
                <div class="for-after-commit">
                    <AfterCommitResult report />
                </div>
                <Actions />
                {outside}
            </div>
            <div class="results-main">
                {tables}
                <Guarantee report />
            </div>
        </div>
    }
    .into_any();
    let failures = view! {
        <div class="for-ticket">
            <ComparePanel initial=compare />
            <FailureTable report progress />
        </div>
        <div class="for-after-commit">
            <PublisherFailures report />
        </div>
    }
    .into_any();
    view! {
        {quest_panels}
        {view_switch(l, page_view)}
        <div class="workbench">
            {ticket_top}
            {after_top}
            <crate::components::stepper::StepperPanel />
            {results}
        </div>
        <Trace report />
        {failures}
        <crate::components::share::ShareForm report />
        {message}
    }
}

/// What the embed tells its course page after each action (`outbox-playground:progress`, sent
/// by the embed's script from these attributes).
fn progress_message(
    p: &ProgressReport,
    r: &Report,
    quests: &[crate::quest_api::QuestEntry],
) -> impl IntoView + use<> {
    // `id:reached:explained:hints` per chosen quest, `;`-separated (ids are [a-z0-9_]).
    let quests = quests
        .iter()
        .map(|q| {
            let explained = q
                .explained
                .map_or("null", |e| if e { "true" } else { "false" });
            format!("{}:{}:{}:{}", q.id, q.reached, explained, q.hints_used)
        })
        .collect::<Vec<_>>()
        .join(";");
    let row = r.outcome.and_then(|o| o.failure_row()).map(|row| row.id());
    // "scenario:explored:total" per scenario after COMMIT.
    let after_commit = p
        .after_commit
        .iter()
        .map(|m| format!("{}:{}:{}", m.scenario.id(), m.explored.len(), m.cases.len()))
        .collect::<Vec<_>>()
        .join(";");
    let predicted_right = r
        .prediction
        .as_ref()
        .map(|j| j.all_right().to_string())
        .unwrap_or_default();
    view! {
        <div
            hidden
            id="progress-message"
            data-explored=p.explored
            data-total=p.total
            data-made=p.predictions.made
            data-right=p.predictions.right
            data-wrong-ways=p.wrong_ways.found.len()
            data-outcome=r.outcome.map(|o| o.id()).unwrap_or_default()
            data-row=row.unwrap_or_default()
            data-predicted-right=predicted_right
            data-quests=quests
            data-quests-reached=p.quests.reached
            data-quests-explained=p.quests.explained
            data-quests-total=p.quests.total
            data-after-commit=after_commit
        ></div>
    }
}
