//! The stepper's panel: a real transaction held between two statements (`/api/step`, a
//! WebSocket). Server-rendered and empty; the page's small script (`stepper.js`) opens the
//! socket, fills the panel at each pause and, when the run ends, brings in the server's new
//! page with the report. Without JavaScript only a note says the mode needs it.
//!
//! Every word the script shows is rendered here, in the page's language, as `data-t` texts:
//! the script holds no language of its own.

use leptos::prelude::*;
use leptos_i18n::td_string;
use outbox_lab::catalog::{CommitFate, ConsumerCrash, CrashPoint, PublisherCrash, Scenario, Step};

use crate::i18n::*;
use crate::texts;

/// The panel the script fills while a run is held.
#[component]
pub fn StepperPanel() -> impl IntoView {
    let l = crate::locale::use_locale();
    let words: Vec<(&'static str, &'static str)> = vec![
        ("paused", td_string!(l, stepper.paused)),
        ("next_is", td_string!(l, stepper.next_is)),
        ("returns", td_string!(l, stepper.returns)),
        ("none", td_string!(l, stepper.none)),
        ("differs", td_string!(l, stepper.differs)),
        ("same", td_string!(l, stepper.same)),
        ("no_tx", td_string!(l, stepper.no_tx)),
        ("xid_none", td_string!(l, stepper.xid_none)),
        ("locks_none", td_string!(l, stepper.locks_none)),
        ("waiter_none", td_string!(l, stepper.waiter_none)),
        ("waiting", td_string!(l, stepper.waiting)),
        ("lock_waiting", td_string!(l, stepper.lock_waiting)),
        ("backend_pid", td_string!(l, stepper.backend_pid)),
        ("waiter_done", td_string!(l, stepper.waiter_done)),
        ("publisher_done", td_string!(l, stepper.publisher_done)),
        ("waiter_failed", td_string!(l, stepper.waiter_failed)),
        ("model_ok", td_string!(l, stepper.model_ok)),
        ("model_differs", td_string!(l, stepper.model_differs)),
        ("finished", td_string!(l, stepper.finished)),
        ("lost", td_string!(l, stepper.lost)),
        ("working", td_string!(l, stepper.working)),
    ];
    let words = words
        .into_iter()
        .map(|(key, text)| view! { <span data-t=key>{text}</span> })
        .collect_view();
    // A pause is named by its scenario and its crash point ("none" is in all three).
    let label = |scenario: Scenario, id: &'static str, text: &'static str| {
        view! { <span data-scenario=scenario.id() data-at=id>{text}</span> }
    };
    let at_labels = (
        CrashPoint::ALL
            .iter()
            .map(|&c| label(Scenario::Ticket, c.id(), texts::crash_label(l, c)))
            .collect_view(),
        PublisherCrash::ALL
            .iter()
            .map(|&c| {
                label(
                    Scenario::Publisher,
                    c.id(),
                    texts::publisher_crash_text(l, c).1,
                )
            })
            .collect_view(),
        ConsumerCrash::ALL
            .iter()
            .map(|&c| {
                label(
                    Scenario::Consumer,
                    c.id(),
                    texts::consumer_crash_text(l, c).1,
                )
            })
            .collect_view(),
    );
    let step_labels = Step::ALL
        .iter()
        .map(|&s| view! { <span data-step=s.id()>{crate::components::strip::step_name(l, s)}</span> })
        .collect_view();
    let fates = CommitFate::ALL
        .iter()
        .map(|&f| view! { <option value=f.id()>{texts::fate_label(l, f)}</option> })
        .collect_view();
    let rows = [
        ("status", td_string!(l, stepper.status)),
        ("outbox", td_string!(l, stepper.outbox)),
        ("kafka", td_string!(l, stepper.kafka)),
        ("marked", td_string!(l, stepper.marked)),
        ("history", td_string!(l, stepper.history)),
        ("inbox", td_string!(l, stepper.inbox)),
    ]
    .into_iter()
    .map(|(row, label)| {
        view! {
            <tr data-row=row>
                <th scope="row">{label}</th>
                <td data-side="inside"></td>
                <td data-side="outside"></td>
                <td data-side="compare"></td>
            </tr>
        }
    })
    .collect_view();
    view! {
        <section
            class="panel stepper"
            id="stepper"
            data-stepper
            data-ticket=outbox_lab::catalog::names::TICKET_ID
            hidden
            aria-labelledby="stepper-heading"
        >
            <h2 id="stepper-heading" tabindex="-1">
                {td_string!(l, stepper.heading)}
            </h2>
            <p class="step-where" aria-live="polite" data-step-where></p>
            <div class="step-commands" role="group" aria-labelledby="stepper-heading">
                <button type="button" class="primary" data-cmd="next">
                    {td_string!(l, stepper.next)}
                </button>
                <button type="button" data-cmd="crash">
                    {td_string!(l, stepper.crash)}
                </button>
                <button type="button" data-cmd="other_writer" data-only="ticket">
                    {td_string!(l, stepper.other_writer)}
                </button>
                <button type="button" data-cmd="other_publisher" data-skip-locked="true" data-only="publisher" hidden>
                    {td_string!(l, stepper.other_publisher_skip)}
                </button>
                <button type="button" data-cmd="other_publisher" data-skip-locked="false" data-only="publisher" hidden>
                    {td_string!(l, stepper.other_publisher_wait)}
                </button>
                <span class="step-lost" data-step-lost hidden>
                    <button type="button" data-cmd="commit_reply_lost">
                        {td_string!(l, stepper.commit_lost)}
                    </button>
                    <label class="field">
                        <span>{td_string!(l, stepper.fate)}</span>
                        <select data-step-fate>{fates}</select>
                    </label>
                </span>
            </div>
            <p class="error" role="alert" data-step-error></p>
            <div class="step-body">
                <table class="step-views">
                    <caption>{td_string!(l, stepper.views_caption)}</caption>
                    <thead>
                        <tr>
                            <th scope="col">{td_string!(l, stepper.row)}</th>
                            <th scope="col">{td_string!(l, stepper.inside)}</th>
                            <th scope="col">{td_string!(l, stepper.outside)}</th>
                            <th scope="col">
                                <span class="visually-hidden">{td_string!(l, stepper.same)}</span>
                            </th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
                <div class="step-pg">
                    <h3>{td_string!(l, stepper.pg)}</h3>
                    <dl>
                        <dt>{td_string!(l, stepper.pid)}</dt>
                        <dd data-pg="pid"></dd>
                        <dt>{td_string!(l, stepper.state)}</dt>
                        <dd data-pg="state"></dd>
                        <dt>{td_string!(l, stepper.xid)}</dt>
                        <dd data-pg="xid"></dd>
                        <dt>{td_string!(l, stepper.locks)}</dt>
                        <dd data-pg="locks"></dd>
                        <dt>{td_string!(l, stepper.waiter)}</dt>
                        <dd data-pg="waiter"></dd>
                    </dl>
                    <p class="action-hint">{td_string!(l, stepper.locks_note)}</p>
                    <p class="action-hint" data-pg="model"></p>
                </div>
            </div>
            <p class="action-hint">{td_string!(l, stepper.idle_note)}</p>
            <div class="step-texts" hidden>{words} {at_labels} {step_labels}</div>
        </section>
    }
}

/// The button that starts a stepped run, beside the one-shot attempt (inside the form, so it
/// reads the same fields); without JavaScript a note stands in its place.
pub fn start_button(l: Locale) -> impl IntoView {
    view! {
        <button
            type="button"
            class="step-start"
            data-step-start
            aria-describedby="step-start-hint"
        >
            {td_string!(l, stepper.start)}
        </button>
        <span class="visually-hidden" id="step-start-hint">
            {td_string!(l, stepper.start_hint)}
        </span>
        <p class="step-nojs action-hint">{td_string!(l, stepper.nojs)}</p>
    }
}

/// The button that steps the publisher or the consumer, inside its after-COMMIT form (so it
/// reads the form's fields, e.g. `inbox`).
pub fn start_after_commit(l: Locale, scenario: Scenario) -> impl IntoView {
    let (label, hint) = match scenario {
        Scenario::Publisher => (
            td_string!(l, stepper.start_publisher),
            td_string!(l, stepper.start_publisher_hint),
        ),
        Scenario::Consumer | Scenario::Ticket => (
            td_string!(l, stepper.start_consumer),
            td_string!(l, stepper.start_consumer_hint),
        ),
    };
    let hint_id = format!("step-start-hint-{}", scenario.id());
    view! {
        <button
            type="button"
            class="step-start"
            data-step-start
            data-scenario=scenario.id()
            aria-describedby=hint_id.clone()
        >
            {label}
        </button>
        <span class="visually-hidden" id=hint_id>
            {hint}
        </span>
    }
}
