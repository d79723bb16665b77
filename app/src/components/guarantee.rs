//! The guarantee ladder: what the local transaction guarantees (the outbox row, 8.2), what the
//! publisher adds (at least once, 8.3) and what the consumer's inbox adds (once, 8.4) — each
//! rung marked reached or not from the sandbox's tables, with what it does and does not promise.

use leptos::prelude::*;
use leptos_i18n::td_string;
use outbox_lab::catalog::Rung;
use outbox_lab::report::Report;

use crate::i18n::*;
use crate::texts::Tone;

/// A rung's title, what it promises and what it does not.
fn rung_text(l: Locale, rung: Rung) -> [&'static str; 3] {
    match rung {
        Rung::IntentStored => [
            td_string!(l, ladder.intent_stored.title),
            td_string!(l, ladder.intent_stored.yes),
            td_string!(l, ladder.intent_stored.no),
        ],
        Rung::DeliveredAtLeastOnce => [
            td_string!(l, ladder.delivered_at_least_once.title),
            td_string!(l, ladder.delivered_at_least_once.yes),
            td_string!(l, ladder.delivered_at_least_once.no),
        ],
        Rung::AppliedOnce => [
            td_string!(l, ladder.applied_once.title),
            td_string!(l, ladder.applied_once.yes),
            td_string!(l, ladder.applied_once.no),
        ],
    }
}

#[component]
pub fn Guarantee(report: Signal<Report>) -> impl IntoView {
    let l = crate::locale::use_locale();
    let r = report.get_untracked();
    let here = Tone::of(r.outcome).guarantee_here(l);
    let rungs = outbox_lab::ladder::climbed(&r.snapshot)
        .into_iter()
        .map(|(rung, reached)| {
            let [title, yes, no] = rung_text(l, rung);
            let (glyph, word) = if reached {
                ("✓", td_string!(l, ladder.reached))
            } else {
                ("✗", td_string!(l, ladder.not_reached))
            };
            view! {
                <li class="rung" data-rung=rung.id() data-reached=reached.to_string()>
                    <h3>
                        <span class="rung-mark" aria-hidden="true">{glyph}</span>
                        " "
                        {title}
                        " "
                        <span class="rung-state">"(" {word} ")"</span>
                    </h3>
                    <p class="yes">
                        <strong>{td_string!(l, ladder.promises)} ": "</strong>
                        {yes}
                    </p>
                    <p class="no">
                        <strong>{td_string!(l, ladder.not_promised)} ": "</strong>
                        {no}
                    </p>
                </li>
            }
        })
        .collect_view();
    view! {
        <section class="panel" aria-labelledby="guarantee-heading">
            <h2 id="guarantee-heading">{td_string!(l, ladder.heading)}</h2>
            <p class="here" data-here>
                <strong>{td_string!(l, guarantee.here_heading)} ": "</strong>
                {here}
            </p>
            <ol class="ladder">{rungs}</ol>
        </section>
    }
}
