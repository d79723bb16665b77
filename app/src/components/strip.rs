//! The function drawn as a timeline: its steps in order, and between them the marks where the
//! process can die. The marks are the form's real `crash` radio buttons, so the strip is the
//! form, with or without JavaScript.
//!
//! Every mode's slots are drawn once ([`STRIP`]); the style sheet shows the chosen mode's and
//! redraws a step for a chosen mistake (both with `:has()`), so nothing here needs the
//! WebAssembly to be right. The island adds what only a live page can do: disabling the
//! marks the chosen mode lacks and showing the last run's trail only on its own mode.

use leptos::prelude::*;
use leptos_i18n::td_string;
use outbox_lab::catalog::{CommitFate, CrashPoint, Mode, STRIP, Slot, Step};
use outbox_lab::trail::Trail;

use crate::i18n::*;
use crate::texts;

/// The code of each step as the lesson writes it (SQL is the same in every language).
fn code(step: Step) -> &'static str {
    match step {
        Step::Begin => "BEGIN",
        Step::Update => "UPDATE tickets … WHERE id = $1",
        Step::Insert => "INSERT INTO outbox …",
        Step::Commit => "COMMIT",
        Step::Publish | Step::Send => "tickets.status.v1",
        Step::Claim => "SELECT … FOR UPDATE SKIP LOCKED",
        Step::Mark => "UPDATE outbox SET published_at",
        Step::Poll => "SELECT … FROM kafka_log",
        Step::Apply => "INSERT INTO history, inbox",
        Step::Offset => "consumer_offsets",
        Step::Crash | Step::Retry => "",
    }
}

pub fn step_name(l: Locale, step: Step) -> &'static str {
    match step {
        Step::Begin => td_string!(l, strip.step.begin),
        Step::Update => td_string!(l, strip.step.update),
        Step::Insert => td_string!(l, strip.step.insert),
        Step::Commit => td_string!(l, strip.step.commit),
        Step::Publish => td_string!(l, strip.step.publish),
        Step::Crash => td_string!(l, strip.step.crash),
        Step::Retry => td_string!(l, strip.step.retry),
        Step::Claim => td_string!(l, strip.step.claim),
        Step::Send => td_string!(l, strip.step.send),
        Step::Mark => td_string!(l, strip.step.mark),
        Step::Poll => td_string!(l, strip.step.poll),
        Step::Apply => td_string!(l, strip.step.apply),
        Step::Offset => td_string!(l, strip.step.offset),
    }
}

fn modes_attr(modes: &[Mode]) -> String {
    modes.iter().map(|m| m.id()).collect::<Vec<_>>().join(" ")
}

/// The strip: steps, crash marks, the lost-reply mark on COMMIT with the network's fate
/// beside it, "no crash" at the end, and one line saying what the chosen mark means.
#[allow(clippy::too_many_arguments)]
pub fn strip(
    l: Locale,
    initial_crash: CrashPoint,
    initial_fate: CommitFate,
    trail: Trail,
    mode: RwSignal<Mode>,
    crash: RwSignal<CrashPoint>,
    fate: RwSignal<CommitFate>,
    hydrated: RwSignal<bool>,
) -> impl IntoView {
    let trail_mode = trail.mode;
    let trail_shown = move || (trail_mode == Some(mode.get())).then_some("shown");
    let died = trail.died;
    let slots = STRIP
        .iter()
        .map(|&(slot, modes)| {
            let within = modes_attr(modes);
            match slot {
                Slot::Step(step) => {
                    let reached = trail.reached.contains(&step).then_some("true");
                    let refused = (trail.refused == Some(step)).then_some("true");
                    let lost = (step == Step::Commit && trail.reply_lost).then_some("true");
                    let lost_mark = (step == Step::Commit).then(|| {
                        lost_reply_mark(l, initial_crash, initial_fate, mode, crash, fate, hydrated)
                    });
                    view! {
                        <li
                            class="slot step"
                            data-step=step.id()
                            data-in=within
                            data-reached=reached
                            data-refused=refused
                            data-lost=lost
                        >
                            <span class="step-box">
                                <span class="step-name">{step_name(l, step)}</span>
                                <code class="step-code">
                                    {code(step)}
                                    {(step == Step::Update).then(|| view! {
                                        <span class="guard">" AND status = 'open'"</span>
                                    })}
                                    {(step == Step::Insert).then(|| view! {
                                        <span class="on-conflict">" ON CONFLICT DO NOTHING"</span>
                                    })}
                                </code>
                                <span class="step-aside via-pool">{td_string!(l, strip.via_pool)}</span>
                                <span class="step-aside outside">{td_string!(l, strip.outside)}</span>
                                <span class="trail-note refused-note">{td_string!(l, strip.refused)}</span>
                                <span class="trail-note lost-note">{td_string!(l, strip.reply_lost)}</span>
                            </span>
                            {lost_mark}
                        </li>
                    }
                    .into_any()
                }
                Slot::Crash(c) => {
                    let died_here = (died == Some(c)).then_some("true");
                    view! {
                        <li class="slot gap" data-crash=c.id() data-in=within data-died=died_here>
                            {mark(l, c, initial_crash, mode, crash, hydrated)}
                            <span class="trail-note died-note">{td_string!(l, strip.died)}</span>
                        </li>
                    }
                    .into_any()
                }
            }
        })
        .collect_view();
    let lines = CrashPoint::ALL
        .iter()
        .map(|&c| {
            view! {
                <p class="strip-line" data-for=c.id()>
                    <strong>{texts::crash_label(l, c)}</strong> ": " {texts::crash_hint(l, c)}
                </p>
            }
        })
        .collect_view();
    view! {
        <fieldset class="strip-field">
            <legend>{td_string!(l, controls.crash_legend)}</legend>
            <ol class="strip" data-trail=trail_shown data-reached-steps=trail.reached_ids()>
                {slots}
                <li class="slot end" data-in="outbox naive naive_publish_first">
                    {mark(l, CrashPoint::None, initial_crash, mode, crash, hydrated)}
                </li>
            </ol>
            <p class="tx-band-key">
                <span class="band-swatch" aria-hidden="true"></span>
                {td_string!(l, strip.tx_band)}
            </p>
            <div class="strip-lines" aria-live="polite">{lines}</div>
        </fieldset>
    }
}

/// A crash mark: a radio button drawn as a gap in the line, crossed when chosen.
fn mark(
    l: Locale,
    c: CrashPoint,
    initial: CrashPoint,
    mode: RwSignal<Mode>,
    crash: RwSignal<CrashPoint>,
    hydrated: RwSignal<bool>,
) -> impl IntoView {
    let absent = move || hydrated.get() && !mode.get().has_crash_point(c);
    let short = if c == CrashPoint::None {
        td_string!(l, strip.no_crash)
    } else {
        td_string!(l, strip.crash_here)
    };
    view! {
        <label class="mark" data-mark=c.id()>
            <input
                type="radio"
                name="crash"
                value=c.id()
                checked=c == initial
                prop:checked=move || crash.get() == c
                disabled=absent
                on:change=move |_| crash.set(c)
            />
            <span class="mark-glyph" aria-hidden="true"></span>
            <span class="mark-text">
                <span class="visually-hidden">{texts::crash_label(l, c)} " — "</span>
                <span class="mark-short">{short}</span>
            </span>
        </label>
    }
}

/// The lost-reply mark sits on COMMIT itself, and the network's fate beside it.
fn lost_reply_mark(
    l: Locale,
    initial_crash: CrashPoint,
    initial_fate: CommitFate,
    mode: RwSignal<Mode>,
    crash: RwSignal<CrashPoint>,
    fate: RwSignal<CommitFate>,
    hydrated: RwSignal<bool>,
) -> impl IntoView {
    let c = CrashPoint::CommitReplyLost;
    let absent = move || hydrated.get() && !mode.get().has_crash_point(c);
    let fates = CommitFate::ALL
        .iter()
        .map(|&f| {
            view! {
                <label class="choice inline">
                    <input
                        type="radio"
                        name="commit_fate"
                        value=f.id()
                        checked=f == initial_fate
                        on:change=move |_| fate.set(f)
                    />
                    <span>{texts::fate_label(l, f)}</span>
                </label>
            }
        })
        .collect_view();
    view! {
        <div class="lost-reply" data-in="outbox">
            <label class="mark on-step" data-mark=c.id()>
                <input
                    type="radio"
                    name="crash"
                    value=c.id()
                    checked=c == initial_crash
                    prop:checked=move || crash.get() == c
                    disabled=absent
                    on:change=move |_| crash.set(c)
                />
                <span class="mark-glyph" aria-hidden="true"></span>
                <span class="mark-text">{texts::crash_label(l, c)}</span>
            </label>
            <fieldset
                class="fate"
                disabled=move || hydrated.get() && crash.get() != CrashPoint::CommitReplyLost
            >
                <legend>{td_string!(l, controls.fate_legend)}</legend>
                {fates}
            </fieldset>
        </div>
    }
}
