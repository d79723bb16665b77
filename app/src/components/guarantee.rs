//! What the local transaction guarantees and what it does not, in the lesson's terms, with
//! what that meant for the attempt just made.

use leptos::prelude::*;
use leptos_i18n::td_string;
use outbox_lab::outcome::Report;

use crate::i18n::*;
use crate::texts::Tone;

#[component]
pub fn Guarantee(report: Signal<Report>) -> impl IntoView {
    let l = use_i18n().get_locale_untracked();
    let here = move || Tone::of(report.read().outcome).guarantee_here(l);
    view! {
        <section class="panel" aria-labelledby="guarantee-heading">
            <h2 id="guarantee-heading">{td_string!(l, guarantee.heading)}</h2>
            <p class="here" data-here>
                <strong>{td_string!(l, guarantee.here_heading)} ": "</strong>
                {here}
            </p>
            <div class="guarantee">
                <div class="yes">
                    <h3>{td_string!(l, guarantee.yes_heading)}</h3>
                    <ul>
                        <li>{td_string!(l, guarantee.yes_atomic)}</li>
                        <li>{td_string!(l, guarantee.yes_durable)}</li>
                    </ul>
                </div>
                <div class="no">
                    <h3>{td_string!(l, guarantee.no_heading)}</h3>
                    <ul>
                        <li>{td_string!(l, guarantee.no_kafka)}</li>
                        <li>{td_string!(l, guarantee.no_history)}</li>
                        <li>{td_string!(l, guarantee.no_delivery)}</li>
                        <li>{td_string!(l, guarantee.no_exactly_once)}</li>
                    </ul>
                </div>
            </div>
        </section>
    }
}
