//! The application root: the HTML shell, the page's language and the routes.

use leptos::prelude::*;
use leptos_meta::{HashedStylesheet, Html, MetaTags, provide_meta_context};
use leptos_router::components::{Route, Router, Routes};
use leptos_router::{SsrMode, path};

use crate::i18n::*;
use crate::pages::author::AuthorPage;
use crate::pages::embed::EmbedPage;
use crate::pages::playground::PlaygroundPage;
use crate::pages::quests::QuestsPage;
use crate::pages::replay::ReplayPage;

/// The document around the app, rendered on the server.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html>
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <link rel="icon" href="data:," />
                <AutoReload options=options.clone() />
                // The site files carry content hashes in their names (hash-files).
                <HashedStylesheet options=options.clone() id="leptos" />
                <HydrationScripts options islands=true />
                <MetaTags />
            </head>
            <body>
                <App />
            </body>
        </html>
    }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    let l = page_locale();
    provide_context(crate::locale::PageLocale(l));
    view! {
        <Html attr:lang=crate::locale::id(l) attr:dir="ltr" />
        <Router>
            <Routes fallback=|| view! { <p>"404"</p> }>
                <Route path=path!("") view=PlaygroundPage ssr=SsrMode::Async />
                <Route path=path!("embed") view=EmbedPage ssr=SsrMode::Async />
                <Route path=path!("replay/:id") view=ReplayPage ssr=SsrMode::Async />
                <Route path=path!("quests") view=QuestsPage ssr=SsrMode::Async />
                <Route path=path!("author") view=AuthorPage ssr=SsrMode::Async />
            </Routes>
        </Router>
    }
}

/// The language the server chose for this page: `?lang=`, then our `lang` cookie, then
/// Russian (the course's language; the browser's Accept-Language is not asked). A `?lang=`
/// choice is remembered for the next visit.
fn page_locale() -> Locale {
    #[cfg(feature = "ssr")]
    {
        let parts = use_context::<http::request::Parts>();
        let chosen = parts
            .as_ref()
            .map(crate::locale::of_request)
            .unwrap_or_default();
        if let Some(asked) = parts.as_ref().and_then(crate::locale::from_query) {
            let secure = use_context::<crate::backend::state::AppState>()
                .zip(parts.as_ref())
                .is_some_and(|(state, p)| state.web.is_https(&p.headers));
            crate::backend::cookies::set(&crate::backend::cookies::Cookie {
                name: crate::locale::LANG_PARAM,
                value: crate::locale::id(asked),
                max_age_secs: crate::backend::cookies::ONE_YEAR,
                http_only: false,
                secure,
            });
        }
        chosen
    }
    #[cfg(not(feature = "ssr"))]
    {
        // The app is rendered on the server only; the islands carry their language as a prop.
        Locale::default()
    }
}
