//! The SQL trace: what was sent, what PostgreSQL answered, and the transaction's state.

use leptos::prelude::*;
use leptos_i18n::td_string;
use outbox_lab::outcome::{Actor, Answer, Report, Sent, TraceStep};

use crate::i18n::*;
use crate::texts;

#[component]
pub fn Trace(report: Signal<Report>) -> impl IntoView {
    let l = use_i18n().get_locale_untracked();
    let steps = move || {
        let trace = report.read().trace.clone();
        if trace.is_empty() {
            return view! { <p class="trace-empty">{td_string!(l, trace.empty)}</p> }.into_any();
        }
        view! { <ol class="trace">{trace.into_iter().map(|s| step(l, s)).collect_view()}</ol> }
            .into_any()
    };
    view! {
        <section class="panel" aria-labelledby="trace-heading">
            <h2 id="trace-heading">{td_string!(l, trace.heading)}</h2>
            <p class="intro">{td_string!(l, trace.intro)}</p>
            {steps}
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
    }
}

fn step(l: Locale, s: TraceStep) -> impl IntoView {
    // Integer arithmetic: float formatting would add kilobytes to the WASM.
    let ms = format!("{}.{}", s.at_us / 1000, (s.at_us % 1000) / 100);
    let sent = match &s.sent {
        Sent::Sql { sql, params } => {
            let params = (!params.is_empty()).then(|| {
                let list = params
                    .iter()
                    .enumerate()
                    .map(|(i, p)| view! { <li><code>{format!("${} = {p}", i + 1)}</code></li> })
                    .collect_view();
                view! {
                    <div class="trace-params">
                        {td_string!(l, trace.params)} ":"
                        <ul>{list}</ul>
                    </div>
                }
            });
            view! {
                <pre class="trace-sql"><code>{sql.clone()}</code></pre>
                {params}
            }
            .into_any()
        }
        Sent::ProcessCrashed => {
            view! { <p class="trace-event">{td_string!(l, trace.sent.process_crashed)}</p> }
                .into_any()
        }
        Sent::ConnectionCut => {
            view! { <p class="trace-event">{td_string!(l, trace.sent.connection_cut)}</p> }
                .into_any()
        }
        Sent::BackendGone { pid } => view! {
            <p class="trace-event">{td_string!(l, trace.sent.backend_gone, pid = pid)}</p>
        }
        .into_any(),
    };
    let (kind, answer) = match &s.answer {
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
    };
    view! {
        <li data-actor=actor_id(s.actor)>
            <span class="trace-who">
                {texts::actor(l, s.actor)} " · " {td_string!(l, trace.at, ms = ms)}
            </span>
            {sent}
            <span class="trace-answer" data-kind=kind>
                {td_string!(l, trace.answer)} ": " {answer}
            </span>
            <span class="trace-tx">
                {td_string!(l, trace.tx)} ": "
                <span class="tx-state" data-tx=format!("{:?}", s.tx).to_lowercase()>
                    {texts::tx_state(l, s.tx)}
                </span>
            </span>
        </li>
    }
}
