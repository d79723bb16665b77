//! The SQL trace: what was sent, what PostgreSQL answered, and the transaction's state.

use leptos::either::{EitherOf3, EitherOf7};
use leptos::prelude::*;
use leptos_i18n::td_string;
use outbox_lab::catalog::Step;
use outbox_lab::report::Report;
use outbox_lab::sql_trace::{Actor, Answer, Lane, Sent, TraceStep};

use crate::i18n::*;
use crate::texts;

#[component]
pub fn Trace(report: Signal<Report>) -> impl IntoView {
    let l = crate::locale::use_locale();
    let steps = move || {
        let trace = report.read().trace.clone();
        if trace.is_empty() {
            return EitherOf3::A(view! { <p class="trace-empty">{td_string!(l, trace.empty)}</p> });
        }
        if let Some(race) = report.read().race.clone() {
            return EitherOf3::B(lanes(l, trace, race.a_event_id, race.b_event_id));
        }
        EitherOf3::C(table(l, trace))
    };
    // A run after COMMIT is read from its strip, its outcome and the tables; its statements
    // stay one click away, so that its view stays one page tall. The fold is the server's
    // choice after every action (`data-fresh`), not the state before it.
    let open = report.read_untracked().after_commit.is_none();
    view! {
        <section class="panel trace-panel" aria-labelledby="trace-heading">
            <details class="trace-fold" open=open data-fresh>
                // What the rows are, said beside the heading: folded, it says what is inside.
                <summary>
                    <h2 id="trace-heading">{td_string!(l, trace.heading)}</h2>
                    " "
                    <span class="trace-intro">{td_string!(l, trace.intro)}</span>
                </summary>
                // A plain checkbox: the style sheet unfolds the plumbing rows, no script needed.
                <label class="choice inline show-plumbing">
                    <input type="checkbox" />
                    <span>{td_string!(l, trace.show_plumbing)}</span>
                </label>
                {steps}
            </details>
        </section>
    }
}

fn actor_id(a: Actor) -> &'static str {
    match a {
        Actor::Service => "service",
        Actor::Network => "network",
        Actor::Postgres => "postgres",
        Actor::Support => "support",
        Actor::Playground => "playground",
        Actor::ServicePool => "service_pool",
        Actor::Broker => "broker",
        Actor::Consumer => "consumer",
        Actor::Publisher => "publisher",
        Actor::OtherWriter => "other-writer",
    }
}

fn lane_id(lane: Option<Lane>) -> &'static str {
    match lane {
        Some(Lane::A) => "a",
        Some(Lane::B) => "b",
        None => "both",
    }
}

fn lane_label(l: Locale, lane: Option<Lane>) -> &'static str {
    match lane {
        Some(Lane::A) => td_string!(l, trace.lane_a),
        Some(Lane::B) => td_string!(l, trace.lane_b),
        None => td_string!(l, trace.lane_both),
    }
}

/// A race's steps as two lanes: each step sits in its request's column, one row per step in
/// time order, so the wait between B's UPDATE and its answer is visible at a glance.
fn lanes(l: Locale, trace: Vec<TraceStep>, a_event: String, b_event: String) -> impl IntoView {
    let rows = trace
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let lane = s.lane;
            let actor = actor_id(s.actor);
            view! {
                <li
                    class="lane-step"
                    data-actor=actor
                    data-lane=lane_id(lane)
                    style:grid-row=(i + 2).to_string()
                >
                    <span class="lane-tag">{lane_label(l, lane)}</span>
                    {step(l, s)}
                </li>
            }
        })
        .collect_view();
    view! {
        <p class="lanes-caption">{td_string!(l, trace.lanes_caption)}</p>
        <ol class="trace lanes" data-race="true">
            <li class="lane-head" data-lane="a" aria-hidden="true">
                {td_string!(l, trace.lane_a)} " · " <code>{a_event}</code>
            </li>
            <li class="lane-head" data-lane="b" aria-hidden="true">
                {td_string!(l, trace.lane_b)} " · " <code>{b_event}</code>
            </li>
            {rows}
        </ol>
    }
}

/// Integer arithmetic: float formatting would add kilobytes to the WASM.
fn ms_of(us: u64) -> String {
    format!("{}.{}", us / 1000, (us % 1000) / 100)
}

/// A trace as a compact table: one row per statement or event, the rows of each step of the
/// function under that step's name, in the order the strip draws them.
pub fn table(l: Locale, trace: Vec<TraceStep>) -> impl IntoView {
    let mut groups: Vec<(Option<Step>, Vec<TraceStep>)> = Vec::new();
    for s in trace {
        match groups.last_mut() {
            Some((step, rows)) if *step == s.step => rows.push(s),
            _ => groups.push((s.step, vec![s])),
        }
    }
    let bodies = groups
        .into_iter()
        .map(|(step, rows)| {
            // The step's name stands in its own column, on the group's first row that is
            // shown by default (the playground's plumbing rows are folded).
            let named = rows
                .iter()
                .position(|s| s.actor != Actor::Playground)
                .unwrap_or(0);
            let name = step.map(|st| crate::components::strip::step_name(l, st));
            let rows = rows
                .into_iter()
                .enumerate()
                .map(|(i, s)| row(l, s, if i == named { name } else { None }))
                .collect_view();
            view! { <tbody data-step=step.map(|s| s.id()).unwrap_or("other")>{rows}</tbody> }
        })
        .collect_view();
    view! {
        <div class="table-wrap" tabindex="0">
            <table class="trace">
                <thead>
                    <tr>
                        <th scope="col">{td_string!(l, trace.col_step)}</th>
                        <th scope="col">{td_string!(l, trace.col_who)}</th>
                        <th scope="col">{td_string!(l, trace.col_sent)}</th>
                        <th scope="col">{td_string!(l, trace.col_answer)}</th>
                        <th scope="col">{td_string!(l, trace.col_tx)}</th>
                        <th scope="col">{td_string!(l, trace.col_time)}</th>
                    </tr>
                </thead>
                {bodies}
            </table>
        </div>
    }
}

fn row(l: Locale, s: TraceStep, step: Option<&'static str>) -> impl IntoView {
    let (kind, answer) = answer_text(l, &s.answer);
    let sent = sent_view(l, s.sent, true);
    let answered = s
        .answered_us
        .filter(|a| a / 100 != s.at_us / 100)
        .map(|a| format!(" → {}", ms_of(a)));
    view! {
        <tr class="trace-row" data-actor=actor_id(s.actor)>
            <td class="trace-step">{step}</td>
            <td class="trace-who">{texts::actor(l, s.actor)}</td>
            <td class="trace-sent">{sent}</td>
            <td class="trace-answer" data-kind=kind>{answer}</td>
            <td class="trace-tx">
                <span class="tx-state" data-tx=format!("{:?}", s.tx).to_lowercase()>
                    {texts::tx_state(l, s.tx)}
                </span>
            </td>
            <td class="trace-time">{td_string!(l, trace.at, ms = ms_of(s.at_us))} {answered}</td>
        </tr>
    }
}

fn answer_text(l: Locale, a: &Answer) -> (&'static str, String) {
    match a {
        Answer::Ok { rows: Some(n) } => ("ok", td_string!(l, trace.ok_rows, rows = n).to_string()),
        Answer::Ok { rows: None } => ("ok", td_string!(l, trace.ok).to_owned()),
        Answer::Values { values } => (
            "values",
            td_string!(l, trace.values, values = values.join(", ")).to_string(),
        ),
        Answer::Error { sqlstate, message } => (
            "error",
            td_string!(l, trace.error, sqlstate = sqlstate, message = message).to_string(),
        ),
        Answer::Io { message } => ("io", td_string!(l, trace.io, message = message).to_string()),
        Answer::Nothing => ("nothing", td_string!(l, trace.nothing).to_owned()),
    }
}

/// What a step sent: a statement with its parameters, or what happened instead.
fn sent_view(l: Locale, sent: Sent, inline: bool) -> impl IntoView {
    match sent {
        Sent::Sql { sql, params } => {
            let params = (!params.is_empty()).then(|| {
                let list = params
                    .iter()
                    .enumerate()
                    .map(|(i, p)| view! { <li><code>{format!("${} = {p}", i + 1)}</code></li> })
                    .collect_view();
                view! {
                    <div class="trace-params">
                        <span class="visually-hidden">{td_string!(l, trace.params)} ": "</span>
                        <ul>{list}</ul>
                    </div>
                }
            });
            EitherOf7::A(view! {
                <pre class="trace-sql" class:inline=inline><code>{sql}</code></pre>
                {params}
            })
        }
        Sent::ProcessCrashed => EitherOf7::B(
            view! { <p class="trace-event">{td_string!(l, trace.sent.process_crashed)}</p> },
        ),
        Sent::ConnectionCut => EitherOf7::C(
            view! { <p class="trace-event">{td_string!(l, trace.sent.connection_cut)}</p> },
        ),
        Sent::BackendGone { pid } => EitherOf7::D(view! {
            <p class="trace-event">{td_string!(l, trace.sent.backend_gone, pid = pid)}</p>
        }),
        Sent::LockWait { pid, blocked_by } => {
            let blockers = join_pids(&blocked_by);
            EitherOf7::E(view! {
                <p class="trace-event" data-event="lock_wait">
                    {td_string!(l, trace.sent.lock_wait, pid = pid, blockers = blockers)}
                </p>
            })
        }
        Sent::RetryWithNewId { event_id } => EitherOf7::F(view! {
            <p class="trace-event" data-event="retry">
                {td_string!(l, trace.sent.retry_with_new_id, event_id = event_id)}
            </p>
        }),
        Sent::ConsumerSkipped { offset } => EitherOf7::G(view! {
            <p class="trace-event">{td_string!(l, trace.sent.consumer_skipped, offset = offset)}</p>
        }),
    }
}

/// One step of a race's lanes, as a card.
fn step(l: Locale, s: TraceStep) -> impl IntoView {
    let ms = ms_of(s.at_us);
    let answered = s.answered_us.filter(|a| a / 100 != s.at_us / 100).map(|a| {
        view! {
            <span class="trace-answered">
                " → " {td_string!(l, trace.answered_at, ms = ms_of(a))}
            </span>
        }
    });
    let (kind, answer) = answer_text(l, &s.answer);
    let sent = sent_view(l, s.sent, false);
    view! {
        <span class="trace-who">
                {texts::actor(l, s.actor)} " · " {td_string!(l, trace.at, ms = ms)}
            </span>
            {sent}
            <span class="trace-answer" data-kind=kind>
                {td_string!(l, trace.answer)} ": " {answer} {answered}
            </span>
            <span class="trace-tx">
                {td_string!(l, trace.tx)} ": "
                <span class="tx-state" data-tx=format!("{:?}", s.tx).to_lowercase()>
                    {texts::tx_state(l, s.tx)}
                </span>
            </span>
    }
}

pub fn join_pids(pids: &[i32]) -> String {
    pids.iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
