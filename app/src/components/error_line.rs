//! An action's refusal, as the learner reads it: the server's sentence, with its code for tests.

use leptos::prelude::*;

use crate::api::ApiError;

/// The error of the last action, if any; announced at once (`role="alert"`).
pub fn error_line(error: Signal<Option<ApiError>>) -> impl IntoView {
    move || {
        error.get().map(|e| {
            view! {
                <p class="error" role="alert" data-code=e.code.clone()>
                    {e.message}
                </p>
            }
        })
    }
}

/// A refusal in place of a panel that could not load (the page, a quest, a replay).
#[component]
pub fn ErrorNote(err: ApiError) -> impl IntoView {
    view! { <p class="error" role="alert" data-code=err.code.clone()>{err.message}</p> }
}
