//! The page header: title, the lesson's framing, and the language switch.

use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

use crate::i18n::*;
use crate::locale;

#[component]
pub fn Header() -> impl IntoView {
    let l = locale::use_locale();
    view! {
        <header class="page-header">
            <div class="title-row">
                <p class="badge">{td_string!(l, lesson_badge)}</p>
                <h1>{td_string!(l, title)}</h1>
                <a class="quests-link" href="/quests" rel="external">{td_string!(l, quest.nav)}</a>
                <LanguageSwitch />
            </div>
            <p class="intro">{td_string!(l, intro)}</p>
        </header>
    }
}

/// Links to the same page in the other language, keeping every other setting in the URL.
/// They are plain links (a full load): the server renders the page in the chosen language
/// and remembers the choice, with or without JavaScript.
#[component]
fn LanguageSwitch() -> impl IntoView {
    let l = locale::use_locale();
    let query = use_query_map().get_untracked();
    let href = move |target: Locale| {
        let mut pairs: Vec<(String, String)> = query
            .clone()
            .into_iter()
            .filter(|(k, _)| k != locale::LANG_PARAM)
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        pairs.push((locale::LANG_PARAM.to_owned(), locale::id(target).to_owned()));
        let encoded: Vec<String> = pairs
            .iter()
            .map(|(k, v)| format!("{}={}", crate::links::encode(k), crate::links::encode(v)))
            .collect();
        format!("?{}", encoded.join("&"))
    };
    let link = move |target: Locale, label: &'static str| {
        view! {
            <a
                href=href(target)
                rel="external"
                hreflang=locale::id(target)
                lang=locale::id(target)
                aria-current=(l == target).then_some("true")
            >
                {label}
            </a>
        }
    };
    view! {
        <nav class="lang-switch" aria-label=td_string!(l, lang_label)>
            {link(Locale::ru, "Русский")}
            {link(Locale::en, "English")}
        </nav>
    }
}
