//! What the learner does after an attempt: reconcile, let support reopen the ticket, race two
//! requests, reset (or start over, forgetting the map too), compare. Plain forms under the outcome they act on; they need no
//! WebAssembly, so they are server HTML outside the controls' island. Those that act on the
//! ticket belong to the ticket function's view; reset and start over stand in both.

use leptos::prelude::*;
use leptos::server_fn::ServerFn;
use leptos_i18n::td_string;

use crate::api::{Race, Reconcile, Reopen, Reset, StartOver};
use crate::links::ActionOrigin;

#[component]
pub fn Actions() -> impl IntoView {
    let l = crate::locale::use_locale();
    let origin = use_context::<ActionOrigin>().unwrap_or_default();
    let to = move |url: &str| origin.action_url(url);
    let busy = td_string!(l, controls.busy);
    view! {
        <div class="actions" role="group" aria-label=td_string!(l, controls.actions_label)>
            <form method="post" action=to(Reconcile::url()) class="for-ticket">
                <button type="submit" aria-describedby="reconcile-hint" data-busy-label=busy>
                    {td_string!(l, controls.reconcile)}
                </button>
            </form>
            <form method="post" action=to(Reopen::url()) class="for-ticket">
                <button type="submit" aria-describedby="reopen-hint" data-busy-label=busy>
                    {td_string!(l, controls.reopen)}
                </button>
            </form>
            <form method="post" action=to(Reset::url())>
                <button type="submit" aria-describedby="reset-hint" data-busy-label=busy>
                    {td_string!(l, controls.reset)}
                </button>
            </form>
            <form method="post" action=to(StartOver::url())>
                <button type="submit" aria-describedby="start-over-hint" data-busy-label=busy>
                    {td_string!(l, prediction.start_over)}
                </button>
            </form>
            <form method="post" action=to(Race::url()) class="race-form for-ticket">
                <button type="submit" aria-describedby="race-hint" data-busy-label=busy>
                    {td_string!(l, controls.race)}
                </button>
                <label class="choice inline">
                    <input type="checkbox" name="mistakes" value="unguarded_update" />
                    <span>{td_string!(l, controls.race_unguarded)}</span>
                </label>
            </form>
            <a class="compare-link for-ticket" href="#compare-heading">
                {td_string!(l, controls.compare_link)}
            </a>
        </div>
    }
}
