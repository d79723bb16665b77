//! Which language a page or an API answer speaks.
//!
//! Russian by default (the course's language); English on request. On the server the choice
//! comes from `?lang=` first, then the `lang` cookie the page sets; the browser then simply
//! keeps the language the server rendered (`<html lang>`), so the two never disagree.

use crate::i18n::Locale;

/// The query parameter and the cookie that carry the language.
pub const LANG_PARAM: &str = "lang";

/// Parses a language id; anything unknown is `None`.
pub fn parse(raw: &str) -> Option<Locale> {
    match raw {
        "ru" => Some(Locale::ru),
        "en" => Some(Locale::en),
        _ => None,
    }
}

/// The language a page is rendered in, provided once by the app's root. A plain context
/// rather than leptos_i18n's: its provider spawns an isomorphic effect on the server that can
/// first run after the request's reactive owner is gone, and then panics reading a disposed
/// signal. A page never changes language in place (the switch is a link), so nothing here
/// needs to be reactive.
#[derive(Clone, Copy, Debug)]
pub struct PageLocale(pub Locale);

/// The page's language; Russian where no page provided one.
pub fn use_locale() -> Locale {
    leptos::prelude::use_context::<PageLocale>()
        .map(|p| p.0)
        .unwrap_or_default()
}

pub fn id(locale: Locale) -> &'static str {
    match locale {
        Locale::ru => "ru",
        Locale::en => "en",
    }
}

#[cfg(feature = "ssr")]
pub use server::*;

#[cfg(feature = "ssr")]
mod server {
    use super::*;
    use http::request::Parts;

    /// The language asked for by this request: `?lang=`; for an API call, the `?lang=` of
    /// the page that made it (its Referer); then the cookie; then Russian.
    pub fn of_request(parts: &Parts) -> Locale {
        from_query(parts)
            .or_else(|| {
                let referer = parts.headers.get(http::header::REFERER)?.to_str().ok()?;
                lang_in_query(referer.split_once('?')?.1)
            })
            .or_else(|| {
                crate::backend::cookies::get(&parts.headers, LANG_PARAM).and_then(|v| parse(&v))
            })
            .unwrap_or_default()
    }

    /// The language named in the URL's query, if any.
    pub fn from_query(parts: &Parts) -> Option<Locale> {
        parts.uri.query().and_then(lang_in_query)
    }

    fn lang_in_query(query: &str) -> Option<Locale> {
        query
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(k, _)| *k == LANG_PARAM)
            .and_then(|(_, v)| parse(v))
    }

    /// The language of the request being served (Russian outside a request).
    pub fn current() -> Locale {
        leptos::prelude::use_context::<Parts>()
            .map(|parts| of_request(&parts))
            .unwrap_or_default()
    }
}
