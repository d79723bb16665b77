//! The playground page: the lesson's controls, the tables, the trace and the explanations.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};
use outbox_lab::outcome::Report;

use crate::api::{self, ApiError};
use crate::components::header::Header;
use crate::components::tables::Tables;
use crate::i18n::*;

#[component]
pub fn PlaygroundPage() -> impl IntoView {
    let i18n = use_i18n();
    let current = Resource::new(|| (), |_| api::current());
    view! {
        <Title text=move || t_string!(i18n, meta_title) />
        <Meta name="description" content=move || t_string!(i18n, meta_description) />
        <div class="page">
        <Header />
        <main id="main">
            <Suspense fallback=move || view! { <p class="loading">{t!(i18n, loading)}</p> }>
                {move || Suspend::new(async move {
                    match current.await {
                        Ok(report) => view! { <Panels report /> }.into_any(),
                        Err(err) => view! { <ErrorNote err /> }.into_any(),
                    }
                })}
            </Suspense>
        </main>
        </div>
    }
}

#[component]
fn Panels(report: Report) -> impl IntoView {
    let report = RwSignal::new(report);
    view! {
        <Tables report=report.into() />
    }
}

#[component]
pub fn ErrorNote(err: ApiError) -> impl IntoView {
    view! { <p class="error" role="alert">{err.message}</p> }
}
