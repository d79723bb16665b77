//! "Share this run": keeps the run for a replay link and goes to it. The button sits on the
//! result tables' sandbox line (the page's height is budgeted) and belongs to a form of its
//! own, rendered empty at the end of the results (a form may not sit inside a paragraph). The
//! page's script leaves that form alone (`data-leave`): its answer is another page.

use leptos::prelude::*;
use leptos::server_fn::ServerFn;
use leptos_i18n::td_string;
use outbox_lab::report::Report;

use crate::api::Share;
use crate::i18n::*;
use crate::links::ActionOrigin;

const FORM_ID: &str = "share-run";

/// The form the share button submits; nothing to see.
#[component]
pub fn ShareForm(report: Signal<Report>) -> impl IntoView {
    let origin = use_context::<ActionOrigin>().unwrap_or_default();
    let action = origin.action_url(Share::url());
    move || {
        (!report.read().trace.is_empty()).then(|| {
            view! { <form id=FORM_ID method="post" action=action.clone() data-leave></form> }
        })
    }
}

/// The button, inline beside the run's download links.
pub fn share_button(l: Locale, report: &Report) -> impl IntoView + use<> {
    (!report.trace.is_empty()).then(|| {
        view! {
            " · "
            <button
                type="submit"
                form=FORM_ID
                class="link-button share-button"
                title=td_string!(l, share.hint)
            >
                {td_string!(l, share.button)}
            </button>
        }
    })
}
