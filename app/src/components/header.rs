//! The page header: title, the lesson's framing, and the language switch.

use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

use crate::i18n::*;
use crate::locale;

#[component]
pub fn Header() -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <header class="page-header">
            <div class="title-row">
                <p class="badge">{t!(i18n, lesson_badge)}</p>
                <h1>{t!(i18n, title)}</h1>
                <LanguageSwitch />
            </div>
            <p class="intro">{t!(i18n, intro)}</p>
        </header>
    }
}

/// Links to the same page in the other language, keeping every other setting in the URL.
/// They are plain links (a full load): the server renders the page in the chosen language
/// and remembers the choice, with or without JavaScript.
#[component]
fn LanguageSwitch() -> impl IntoView {
    let i18n = use_i18n();
    let query = use_query_map();
    let href = move |target: Locale| {
        let mut pairs: Vec<(String, String)> = query
            .get()
            .into_iter()
            .filter(|(k, _)| k != locale::LANG_PARAM)
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        pairs.push((locale::LANG_PARAM.to_owned(), locale::id(target).to_owned()));
        let encoded: Vec<String> = pairs
            .iter()
            .map(|(k, v)| format!("{}={}", urlencode(k), urlencode(v)))
            .collect();
        format!("?{}", encoded.join("&"))
    };
    let link = move |target: Locale, label: &'static str| {
        let current = move || i18n.get_locale() == target;
        view! {
            <a
                href=move || href(target)
                rel="external"
                hreflang=locale::id(target)
                lang=locale::id(target)
                aria-current=move || current().then_some("true")
            >
                {label}
            </a>
        }
    };
    view! {
        <nav class="lang-switch" aria-label=move || t_string!(i18n, lang_label)>
            {link(Locale::ru, "Русский")}
            {link(Locale::en, "English")}
        </nav>
    }
}

fn urlencode(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for b in raw.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(char::from(b))
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}
