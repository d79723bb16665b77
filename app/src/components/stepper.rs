//! The stepper's panel: a real transaction held between two statements (`/api/step`, a
//! WebSocket). Server-rendered and empty; the page's small script (`stepper.js`) opens the
//! socket, swaps in each pause as the server drew it and, when the run ends, brings in the
//! server's new page with the report. Without JavaScript only a note says the mode needs it.
//!
//! The few words the script shows between pauses are rendered here, in the page's language,
//! as `data-t` texts: the script holds no language of its own.

use leptos::prelude::*;
use leptos_i18n::td_string;
use outbox_lab::catalog::{CommitFate, Scenario};

use crate::i18n::*;
use crate::texts;

/// The panel a stepped run is shown in. Each pause arrives from the socket already drawn by
/// the server ([`crate::components::pause_view`]); the script swaps it into `data-step-view`.
#[component]
pub fn StepperPanel() -> impl IntoView {
    let l = crate::locale::use_locale();
    // The only words the script says itself: the socket's own states, between pauses.
    let words = [
        ("finished", td_string!(l, stepper.finished)),
        ("lost", td_string!(l, stepper.lost)),
        ("working", td_string!(l, stepper.working)),
    ]
    .into_iter()
    .map(|(key, text)| view! { <span data-t=key>{text}</span> })
    .collect_view();
    let fates = CommitFate::ALL
        .iter()
        .map(|&f| view! { <option value=f.id()>{texts::fate_label(l, f)}</option> })
        .collect_view();
    view! {
        <section
            class="panel stepper"
            id="stepper"
            data-stepper
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
            <div class="step-body" data-step-view></div>
            <p class="action-hint">{td_string!(l, stepper.idle_note)}</p>
            <div class="step-texts" hidden>{words}</div>
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
