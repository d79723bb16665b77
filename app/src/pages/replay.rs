//! A shared run, played back step by step (`/replay/<id>?step=k`, or `/embed?replay=<id>` in a
//! course page's frame). It runs nothing on PostgreSQL: the tables at each step are rebuilt
//! from the stored report (`outbox_lab::replay`). Each step has its own URL, so it works
//! without JavaScript; with it, ← and → swap the server's rendering of the next step in.

use leptos::either::Either;
use leptos::prelude::*;
use leptos_i18n::td_string;
use leptos_meta::{Meta, Title};
use leptos_router::hooks::{use_location, use_params_map, use_query_map};
use outbox_lab::catalog::Step;
use outbox_lab::replay::StepView;
use outbox_lab::report::Report;
use outbox_lab::snapshot::Snapshot;
use outbox_lab::sql_trace::{Sent, TraceStep};

use crate::components::header::Header;
use crate::components::outcome::Outcome;
use crate::components::tables::{OutsideTables, Tables};
use crate::components::trace::Trace;
use crate::i18n::*;

/// The query parameter that names a step (0: before the run; k: after the trace's k-th step).
pub const STEP_PARAM: &str = "step";
pub use crate::links::REPLAY_PARAM;

#[component]
pub fn ReplayPage() -> impl IntoView {
    let l = crate::locale::use_locale();
    let id = use_params_map()
        .get_untracked()
        .get("id")
        .unwrap_or_default();
    view! {
        <Title text=td_string!(l, replay.title) />
        <Meta name="description" content=td_string!(l, meta_description) />
        // A shared run is nobody's data, but its links are not meant for search engines.
        <Meta name="robots" content="noindex" />
        <div class="page">
            <Header />
            <main id="main">
                <Replay id embed=false />
            </main>
        </div>
    }
}

/// The replay itself, as the replay page and the embed show it.
#[component]
pub fn Replay(id: String, embed: bool) -> impl IntoView {
    let l = crate::locale::use_locale();
    let query = use_query_map().get_untracked();
    let asked: Option<usize> = query.get(STEP_PARAM).and_then(|s| s.parse().ok());
    let base = if embed {
        format!(
            "{}?{REPLAY_PARAM}={id}&{}={}&{STEP_PARAM}=",
            use_location().pathname.get_untracked(),
            crate::locale::LANG_PARAM,
            crate::locale::id(l)
        )
    } else {
        format!(
            "/replay/{id}?{}={}&{STEP_PARAM}=",
            crate::locale::LANG_PARAM,
            crate::locale::id(l)
        )
    };
    let body = async move {
        match crate::api::replay(id).await {
            Ok(report) => view! { <Played report asked base /> }.into_any(),
            Err(err) => view! { <crate::components::error_line::ErrorNote err /> }.into_any(),
        }
    };
    view! {
        <div data-replay>{Suspend::new(body)}</div>
        <script inner_html=REPLAY_KEYS></script>
    }
}

/// The positions a learner can stand at, with the tables at each.
struct Positions {
    /// `views[k]`: after the trace's k-th step (k ≥ 1); `views[0]` is before the run.
    views: Vec<StepView>,
    /// Rebuilt step by step; otherwise only the first and the last position are real, and the
    /// steps between show the tables as they were before the run.
    rebuilt: bool,
}

fn positions(report: &Report) -> Positions {
    let start = StepView {
        outside: report
            .before
            .clone()
            .unwrap_or_else(|| report.snapshot.clone()),
        inside: None,
    };
    match outbox_lab::replay::views(report) {
        Some(after) => Positions {
            views: std::iter::once(start).chain(after).collect(),
            rebuilt: true,
        },
        None => {
            let n = report.trace.len();
            let mut views = vec![start.clone(); n + 1];
            if let Some(last) = views.last_mut() {
                *last = StepView {
                    outside: report.snapshot.clone(),
                    inside: None,
                };
            }
            Positions {
                views,
                rebuilt: false,
            }
        }
    }
}

/// A report that shows `tables` (changes marked against `before`) and the trace so far.
fn at(report: &Report, k: usize, before: &Snapshot, tables: &Snapshot) -> Report {
    let mut r = report.clone();
    r.trace.truncate(k);
    r.before = Some(before.clone());
    r.snapshot = tables.clone();
    r
}

#[component]
fn Played(report: Report, asked: Option<usize>, base: String) -> impl IntoView {
    let l = crate::locale::use_locale();
    let n = report.trace.len();
    let k = asked.unwrap_or(0).min(n);
    let Positions { views, rebuilt } = positions(&report);
    let here = views[k].clone();
    let previous = views[k.saturating_sub(1)].clone();
    let outside = Signal::stored(at(&report, k, &previous.outside, &here.outside));
    // Inside, the marks show what this transaction has changed that nobody else sees yet;
    // outside, what this step made visible to everyone.
    let inside = here
        .inside
        .clone()
        .map(|inside| Signal::stored(at(&report, k, &here.outside, &inside)));
    let link = |to: usize| format!("{base}{to}");
    let step_line = (k > 0).then(|| describe(l, &report.trace[k - 1]));
    let strip = replay_strip(l, &report.trace, k);
    let outcome = (k == n).then(|| {
        let report = Signal::stored(report.clone());
        view! { <Outcome report error=Signal::stored(None) /> }
    });
    let nav = view! {
        <nav class="replay-nav" aria-label=td_string!(l, replay.nav_label)>
            {nav_link((k > 0).then(|| link(0)), td_string!(l, replay.first), "first")}
            {nav_link((k > 0).then(|| link(k - 1)), td_string!(l, replay.back), "back")}
            <span class="replay-at" aria-live="polite" data-step=k data-steps=n>
                {if k == 0 {
                    td_string!(l, replay.at_start).to_owned()
                } else {
                    td_string!(l, replay.step_of, k = k, n = n).to_string()
                }}
            </span>
            {nav_link((k < n).then(|| link(k + 1)), td_string!(l, replay.forward), "forward")}
            {nav_link((k < n).then(|| link(n)), td_string!(l, replay.last), "last")}
        </nav>
    };
    let steps = report
        .trace
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let pos = i + 1;
            let current = (pos == k).then_some("step");
            view! {
                <li>
                    <a href=link(pos) aria-current=current data-to=pos>
                        {describe(l, s)}
                    </a>
                </li>
            }
        })
        .collect_view();
    let tables = match inside {
        Some(inside) => Either::Left(view! {
            <div class="replay-views">
                <section class="panel replay-inside" aria-labelledby="replay-inside-heading">
                    <h3 id="replay-inside-heading">{td_string!(l, replay.inside_heading)}</h3>
                    <p class="action-hint">{td_string!(l, replay.inside_hint)}</p>
                    <Tables report=inside nested="replay-inside" db_only=true recorded=true />
                </section>
                <section class="panel replay-outside" aria-labelledby="replay-outside-heading">
                    <h3 id="replay-outside-heading">{td_string!(l, replay.outside_heading)}</h3>
                    <p class="action-hint">{td_string!(l, replay.outside_hint)}</p>
                    <Tables report=outside nested="replay-outside" db_only=true recorded=true />
                </section>
            </div>
        }),
        None => Either::Right(view! {
            <div class="replay-views">
                <section class="panel replay-outside" aria-labelledby="replay-outside-heading">
                    <h3 id="replay-outside-heading">{td_string!(l, replay.committed_heading)}</h3>
                    <Tables report=outside nested="replay-outside" db_only=true recorded=true />
                </section>
            </div>
        }),
    };
    view! {
        <section class="panel replay-head" aria-labelledby="replay-heading">
            <h2 id="replay-heading">{td_string!(l, replay.heading)}</h2>
            <p class="intro">{td_string!(l, replay.intro)}</p>
            {(!rebuilt).then(|| view! { <p class="note" data-rebuilt="false">{td_string!(l, replay.not_rebuilt)}</p> })}
            {strip}
            {nav}
            <p class="replay-now">
                {step_line.unwrap_or_else(|| td_string!(l, replay.before_run).to_owned())}
            </p>
            <p class="action-hint replay-keys">{td_string!(l, replay.keys_hint)}</p>
        </section>
        {outcome}
        {tables}
        <div class="panel replay-topic">
            <OutsideTables report=outside />
        </div>
        <details class="panel replay-steps">
            <summary>{td_string!(l, replay.all_steps)}</summary>
            <ol>{steps}</ol>
        </details>
        <Trace report=outside />
        <p class="replay-open">
            <a href=format!("/?{}={}", crate::locale::LANG_PARAM, crate::locale::id(l))>
                {td_string!(l, replay.open_playground)}
            </a>
        </p>
    }
}

fn nav_link(href: Option<String>, text: &'static str, rel: &'static str) -> impl IntoView + use<> {
    match href {
        Some(href) => Either::Left(view! {
            <a class="button" href=href data-nav=rel>
                {text}
            </a>
        }),
        // Kept in place (and out of the tab order) so the buttons do not jump.
        None => Either::Right(view! {
            <span class="button" aria-disabled="true" data-nav=rel>
                {text}
            </span>
        }),
    }
}

/// The function's steps the run went through, the current one marked.
fn replay_strip(l: Locale, trace: &[TraceStep], k: usize) -> impl IntoView + use<> {
    let mut seen: Vec<(Step, usize)> = Vec::new();
    for (i, s) in trace.iter().enumerate() {
        if let Some(step) = s.step.filter(|st| !matches!(st, Step::Crash | Step::Retry))
            && !seen.iter().any(|(st, _)| *st == step)
        {
            seen.push((step, i + 1));
        }
    }
    let current = trace[..k]
        .iter()
        .rev()
        .find_map(|s| s.step)
        .filter(|st| !matches!(st, Step::Crash | Step::Retry));
    let items = seen
        .into_iter()
        .map(|(step, first)| {
            let state = if Some(step) == current {
                "current"
            } else if first <= k {
                "done"
            } else {
                "ahead"
            };
            view! {
                <li class="replay-slot" data-step=step.id() data-state=state>
                    {crate::components::strip::step_name(l, step)}
                </li>
            }
        })
        .collect_view();
    view! {
        <ol class="replay-strip" aria-label=td_string!(l, replay.strip_label)>
            {items}
        </ol>
    }
}

/// One step in a few words: who, and what they sent.
fn describe(l: Locale, s: &TraceStep) -> String {
    let who = crate::texts::actor(l, s.actor);
    let what = match &s.sent {
        Sent::Sql { sql, .. } => short(sql),
        Sent::ProcessCrashed => td_string!(l, replay.what.crashed).to_owned(),
        Sent::ConnectionCut => td_string!(l, replay.what.cut).to_owned(),
        Sent::BackendGone { pid } => td_string!(l, replay.what.backend_gone, pid = pid).to_string(),
        Sent::LockWait { pid, .. } => td_string!(l, replay.what.lock_wait, pid = pid).to_string(),
        Sent::RetryWithNewId { event_id } => {
            td_string!(l, replay.what.retry, event_id = event_id).to_string()
        }
        Sent::ConsumerSkipped { offset } => {
            td_string!(l, replay.what.skipped, offset = offset).to_string()
        }
    };
    format!("{who}: {what}")
}

/// The start of a statement, on one line.
fn short(sql: &str) -> String {
    const LIMIT: usize = 64;
    let one_line = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

/// ← and → (and the step links) swap in the server's rendering of another step, without a
/// reload; the address follows, so a step can be shared and Back works.
const REPLAY_KEYS: &str = include_str!("../replay.js");
