//! What the last action did, in words, announced to screen readers as it changes.

use leptos::prelude::*;
use leptos_i18n::td_string;
use outbox_lab::report::{RaceReport, Reconciliation, Report};
use outbox_lab::stepped::{Stepped, WaiterState};

use crate::api::ApiError;
use crate::i18n::*;
use crate::texts::{self, Tone};

#[component]
pub fn Outcome(report: Signal<Report>, error: Signal<Option<ApiError>>) -> impl IntoView {
    let l = crate::locale::use_locale();
    let tone = move || Tone::of(report.read().outcome);
    let texts = move || {
        let r = report.read();
        match r.outcome {
            Some(o) => texts::outcome_text(l, o),
            None => texts::action_text(l, r.action),
        }
    };
    let verdict = move || {
        report.read().matches_model.map(|ok| {
            let text = if ok {
                td_string!(l, outcome.model_ok)
            } else {
                td_string!(l, outcome.model_mismatch)
            };
            view! {
                <p class="verdict" data-matches-model=ok.to_string()>
                    {if ok { "✓ " } else { "✗ " }}
                    {text}
                </p>
            }
        })
    };
    view! {
        <section
            class="panel outcome"
            aria-labelledby="outcome-heading"
            data-tone=move || tone().attr()
            data-outcome=move || report.read().outcome.map(|o| o.id())
            data-action=move || report.read().action.id()
        >
            <h2 id="outcome-heading">{td_string!(l, outcome.heading)}</h2>
            // The live region holds only the sentence that changes, so a screen reader reads
            // exactly the news.
            <div role="status" aria-live="polite" aria-atomic="true">
                <p class="outcome-title">
                    <span class="icon" aria-hidden="true">{move || tone().icon()}</span>
                    <strong>{move || texts().0}</strong>
                </p>
                <p class="outcome-body">{move || texts().1}</p>
                {move || report.read().reconciliation.clone().map(|r| reconciliation(l, r))}
                {move || report.read().race.clone().map(|r| race_summary(l, r))}
                {move || report.read().stepped.clone().map(|s| stepped_summary(l, s))}
                {move || {
                    // A run after COMMIT shows its judgement beside its own result.
                    let r = report.read();
                    r.prediction
                        .clone()
                        .filter(|_| r.after_commit.is_none())
                        .map(|j| crate::components::prediction::judgement(l, j))
                }}
                {verdict}
                {crate::components::error_line::error_line(error)}
            </div>
        </section>
    }
}

fn reconciliation(l: Locale, r: Reconciliation) -> impl IntoView {
    let status = r
        .ticket_status
        .clone()
        .unwrap_or_else(|| td_string!(l, outcome.missing).to_owned());
    let present = if r.outbox_row_present {
        td_string!(l, outcome.present_yes)
    } else {
        td_string!(l, outcome.present_no)
    };
    let xact = r
        .xact_status
        .clone()
        .unwrap_or_else(|| td_string!(l, outcome.unknown_status).to_owned());
    view! {
        <ul class="reconciliation">
            <li data-by="ids">
                {td_string!(l, outcome.by_ids, status = status, event_id = r.event_id.clone(), present = present)}
            </li>
            <li data-by="xid">{td_string!(l, outcome.by_xid, xid = r.xid.clone(), status = xact)}</li>
        </ul>
    }
}

/// What happened beside a stepped run: PostgreSQL ending an idle transaction, another writer.
fn stepped_summary(l: Locale, s: Stepped) -> impl IntoView {
    let idle = s
        .idle_timeout
        .then(|| view! { <li data-stepped="idle">{td_string!(l, stepper.after_idle)}</li> });
    let writer = s.waiter.map(|w| {
        let line = match (w.state, w.rows, w.sqlstate) {
            (WaiterState::Failed, _, code) => {
                let code = code.unwrap_or_default();
                td_string!(l, stepper.after_writer_failed, pid = w.pid, code = code).to_string()
            }
            (_, rows, _) => {
                let rows = rows.unwrap_or_default();
                td_string!(l, stepper.after_writer_done, pid = w.pid, rows = rows).to_string()
            }
        };
        view! { <li data-stepped="writer">{line}</li> }
    });
    view! { <ul class="stepped-summary">{idle} {writer}</ul> }
}

fn race_summary(l: Locale, r: RaceReport) -> impl IntoView {
    let a = texts::outcome_text(l, r.a).0;
    let b = texts::outcome_text(l, r.b).0;
    let wait = r.lock_wait.map(|w| {
        let blockers = crate::components::trace::join_pids(&w.blocked_by);
        view! {
            <li data-race="lock_wait">
                {td_string!(l, outcome.lock_wait, pid = w.waiting_pid, event = w.wait_event, blockers = blockers)}
            </li>
        }
    });
    view! {
        <ul class="race-summary">
            <li data-race="lanes" data-a=r.a.id() data-b=r.b.id()>
                {td_string!(l, outcome.lanes, a = a, b = b)}
            </li>
            {wait}
        </ul>
    }
}
