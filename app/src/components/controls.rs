//! The attempt's settings: the way, the mistake and the timeline strip. Every control is a plain form field posted
//! to a server function, so the page also works without JavaScript.
//!
//! This is the page's one island: the only part the WebAssembly hydrates. It keeps the form
//! honest while the learner edits it (crash points that the chosen mode lacks are disabled,
//! the commit fate only matters for a lost reply) and keeps the shareable link in step. The
//! forms post like plain HTML forms; the page's script (`enhance.rs`) sends them in the
//! background and swaps in the server's new page, so the WebAssembly never needs the report.

use leptos::prelude::*;
use leptos::server_fn::ServerFn;
use leptos_i18n::td_string;
use outbox_lab::catalog::{CommitFate, CrashPoint, Mistake, Mode, WRONG_WAYS};
use outbox_lab::input::AttemptSettings;
use outbox_lab::input::Mistakes;
use outbox_lab::trail::Trail;

use crate::api::Attempt;
use crate::i18n::*;
use crate::texts;

#[island]
pub fn Controls(
    /// The settings the form starts with (the link's, the last attempt's, or the lesson's).
    initial: AttemptSettings,
    /// Where the last attempt ended, drawn on the strip.
    trail: Trail,
    /// The page's language id: an island has no i18n context of its own.
    lang: String,
    /// Inside an embed, the frame's sandbox token: every form posts it along.
    frame: Option<String>,
    /// Server-rendered parts of the form that need no WebAssembly (the prediction's fields).
    children: Children,
) -> impl IntoView {
    let l = crate::locale::parse(&lang).unwrap_or_default();
    let origin = crate::links::ActionOrigin {
        frame_token: frame,
        lang: Some(lang.clone()),
    };
    let to = move |url: &str| origin.action_url(url);
    let busy = td_string!(l, controls.busy);
    let crash = RwSignal::new(initial.crash);
    let mode = RwSignal::new(initial.mode);
    let fate = RwSignal::new(initial.commit_fate);
    let mistakes = RwSignal::new(initial.mistakes.ids());
    let autorun = RwSignal::new(false);
    // Before hydration every field stays enabled, so the form works without JavaScript.
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| {
        hydrated.set(true);
        mark_hydrated();
    });
    // A crash point the new mode lacks falls back to "no crash", so the form stays valid.
    Effect::new(move |_| {
        let m = mode.get();
        if !m.has_crash_point(crash.get_untracked()) {
            crash.set(CrashPoint::None);
        }
    });

    let mode_choices = Mode::ALL
        .iter()
        .map(|&m| {
            view! {
                <label class="segment">
                    <input
                        type="radio"
                        name="mode"
                        value=m.id()
                        checked=m == initial.mode
                        on:change=move |_| mode.set(m)
                    />
                    <span>{texts::mode_label(l, m)}</span>
                </label>
            }
        })
        .collect_view();
    let mode_lines = Mode::ALL
        .iter()
        .map(|&m| view! { <p class="mode-line" data-for=m.id()>{texts::mode_hint(l, m)}</p> })
        .collect_view();
    let chosen_mistakes = initial.mistakes.ids();
    let mistake_options = mistake_choices()
        .into_iter()
        .map(|list| {
            let ids = Mistakes::of(list).ids();
            let selected = ids == chosen_mistakes;
            view! {
                <option value=ids selected=selected>
                    {texts::way_label(l, Mode::Outbox, list)}
                </option>
            }
        })
        .collect_view();
    let strip = crate::components::strip::strip(
        l,
        initial.crash,
        initial.commit_fate,
        trail,
        mode,
        crash,
        fate,
        hydrated,
    );

    view! {
        <section class="panel controls" aria-labelledby="controls-heading">
            <style inner_html=crate::components::choice_rules::rules()></style>
            <h2 id="controls-heading">{td_string!(l, controls.heading)}</h2>
            <form method="post" action=to(Attempt::url()) id="attempt-form">
                <div class="way-row">
                    <fieldset class="mode">
                        <legend>{td_string!(l, mode.legend)}</legend>
                        <div class="segments">{mode_choices}</div>
                    </fieldset>
                    <label class="field mistakes-field">
                        <span>{td_string!(l, controls.mistakes_label)}</span>
                        <select
                            name="mistakes"
                            disabled=move || hydrated.get() && mode.get() != Mode::Outbox
                            on:change=move |ev| mistakes.set(event_target_value(&ev))
                        >
                            <option value="" selected=chosen_mistakes.is_empty()>
                                {td_string!(l, controls.mistakes_none)}
                            </option>
                            {mistake_options}
                        </select>
                    </label>
                </div>
                <div class="mode-lines">{mode_lines}</div>
                {strip}
                <div class="form-foot">
                {children()}
                <button
                    type="submit"
                    class="primary"
                    data-busy-label=busy
                >
                    {td_string!(l, controls.submit)}
                </button>
                {crate::components::stepper::start_button(l)}
                <details class="event">
                    <summary>{td_string!(l, controls.event_summary)}</summary>
                    <label class="field">
                        <span>{td_string!(l, controls.event_id)}</span>
                        <input
                            type="text"
                            name="event_id"
                            value=initial.event_id.clone()
                            maxlength="128"
                            spellcheck="false"
                            autocomplete="off"
                            aria-describedby="event-id-hint"
                        />
                    </label>
                    <p class="action-hint" id="event-id-hint">
                        {td_string!(l, controls.event_id_hint)}
                    </p>
                    <label class="field">
                        <span>{td_string!(l, controls.payload)}</span>
                        <textarea
                            name="payload"
                            rows="6"
                            spellcheck="false"
                            aria-describedby="payload-hint"
                        >
                            {initial.payload.clone()}
                        </textarea>
                    </label>
                    <p class="action-hint" id="payload-hint">
                        {td_string!(l, controls.payload_hint)}
                    </p>
                </details>
                    <Explain l />
                    <Permalink l mode crash fate mistakes autorun hydrated />
                </div>
            </form>
        </section>
    }
}

/// The long explanations, folded: every way, crash point, fate, mistake and action.
#[component]
fn Explain(l: Locale) -> impl IntoView {
    fn item(label: &'static str, hint: &'static str) -> impl IntoView {
        view! {
            <li>
                <strong>{label}</strong>
                " — "
                {hint}
            </li>
        }
    }
    let modes = Mode::ALL
        .iter()
        .map(|&m| item(texts::mode_label(l, m), texts::mode_hint(l, m)))
        .collect_view();
    let crashes = CrashPoint::ALL
        .iter()
        .map(|&c| item(texts::crash_label(l, c), texts::crash_hint(l, c)))
        .collect_view();
    let fates = CommitFate::ALL
        .iter()
        .map(|&f| item(texts::fate_label(l, f), texts::fate_hint(l, f)))
        .collect_view();
    let mistakes = Mistake::ALL
        .iter()
        .map(|&m| item(texts::mistake_label(l, m), texts::mistake_hint(l, m)))
        .collect_view();
    view! {
        <details class="explain">
            <summary>{td_string!(l, controls.explain)}</summary>
            <h3>{td_string!(l, mode.legend)}</h3>
            <ul class="action-hints">{modes}</ul>
            <h3>{td_string!(l, controls.crash_legend)}</h3>
            <ul class="action-hints">{crashes}</ul>
            <h3>{td_string!(l, controls.fate_legend)}</h3>
            <p class="action-hint">{td_string!(l, controls.fate_note)}</p>
            <ul class="action-hints">{fates}</ul>
            <h3>{td_string!(l, controls.mistakes_label)}</h3>
            <ul class="action-hints">{mistakes}</ul>
            <h3>{td_string!(l, controls.more_heading)}</h3>
            <ul class="action-hints">
                <li id="reconcile-hint">{td_string!(l, controls.reconcile_hint)}</li>
                <li id="reopen-hint">{td_string!(l, controls.reopen_hint)}</li>
                <li id="reset-hint">{td_string!(l, controls.reset_hint)}</li>
                <li id="start-over-hint">{td_string!(l, prediction.start_over_hint)}</li>
                <li id="race-hint">{td_string!(l, controls.race_hint)}</li>
            </ul>
        </details>
    }
}

/// Marks `<html data-hydrated>` once the WebAssembly is live (effects run only in the
/// browser), so tests and styles can tell a hydrated page from server HTML.
fn mark_hydrated() {
    if let Some(root) = document().document_element() {
        let _ = root.set_attribute("data-hydrated", "true");
    }
}

/// The mistakes the form offers: the outbox-mode wrong ways of the catalogue.
pub fn mistake_choices() -> Vec<&'static [Mistake]> {
    WRONG_WAYS
        .iter()
        .filter(|(m, list)| *m == Mode::Outbox && !list.is_empty())
        .map(|(_, list)| *list)
        .collect()
}

/// A link to the form's current settings, to share or to put in a course page.
#[component]
fn Permalink(
    l: Locale,
    mode: RwSignal<Mode>,
    crash: RwSignal<CrashPoint>,
    fate: RwSignal<CommitFate>,
    mistakes: RwSignal<String>,
    autorun: RwSignal<bool>,
    hydrated: RwSignal<bool>,
) -> impl IntoView {
    let query = move || {
        crate::links::query(&crate::links::Link {
            mode: mode.get(),
            mistakes: mistakes.get(),
            crash: crash.get(),
            commit_fate: fate.get(),
            autorun: autorun.get(),
            lang: l,
        })
    };
    // The server does not know the address the learner sees; the browser fills it in.
    let url = move || {
        let origin = if hydrated.get() {
            window().location().origin().unwrap_or_default()
        } else {
            String::new()
        };
        format!("{origin}/{}", query())
    };
    view! {
        <details class="permalink">
            <summary>{td_string!(l, controls.permalink)}</summary>
            <label class="visually-hidden" for="permalink">{td_string!(l, controls.permalink)}</label>
            <div class="permalink-row">
                <input id="permalink" type="text" readonly prop:value=url value=url />
                // Plain JavaScript: copying needs no WebAssembly.
                <button
                    type="button"
                    onclick="var i=document.getElementById('permalink');i.select();if(navigator.clipboard){navigator.clipboard.writeText(i.value);}else{document.execCommand('copy');}"
                >
                    {td_string!(l, controls.copy_link)}
                </button>
            </div>
            <label class="choice inline">
                <input type="checkbox" on:change=move |ev| autorun.set(event_target_checked(&ev)) />
                <span>{td_string!(l, controls.autorun)}</span>
            </label>
            <a class="permalink-open" href=query>{td_string!(l, controls.open_link)}</a>
        </details>
    }
}
