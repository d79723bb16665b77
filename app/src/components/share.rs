//! "Share this run": a plain form that keeps the run for a replay link and goes to it. The
//! page's script leaves it alone (`data-leave`): the answer is another page, not this one.

use leptos::prelude::*;
use leptos::server_fn::ServerFn;
use leptos_i18n::td_string;
use outbox_lab::outcome::Report;

use crate::api::Share;
use crate::links::ActionOrigin;

#[component]
pub fn ShareRun(report: Signal<Report>) -> impl IntoView {
    let l = crate::locale::use_locale();
    let origin = use_context::<ActionOrigin>().unwrap_or_default();
    let action = origin.action_url(Share::url());
    move || {
        (!report.read().trace.is_empty()).then(|| {
            view! {
                <form method="post" action=action.clone() class="share-form" data-leave>
                    <button type="submit" aria-describedby="share-hint">
                        {td_string!(l, share.button)}
                    </button>
                    <p id="share-hint" class="action-hint">
                        {td_string!(l, share.hint)}
                    </p>
                </form>
            }
        })
    }
}
