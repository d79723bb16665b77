//! Reading and setting cookies on the request being served.

use http::HeaderMap;
use http::header::{COOKIE, SET_COOKIE};

/// The value of cookie `name` in the request headers.
pub fn get(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_owned())
}

/// How long the browser keeps a cookie.
pub const ONE_YEAR: u64 = 365 * 24 * 3600;

/// Adds a `Set-Cookie` header to the response being built. The value must be cookie-safe
/// (our values are hex tokens and language ids).
pub fn set(name: &str, value: &str, max_age_secs: u64, http_only: bool) {
    let Some(response) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>() else {
        return;
    };
    let http_only = if http_only { "; HttpOnly" } else { "" };
    let cookie = format!("{name}={value}; Path=/; Max-Age={max_age_secs}; SameSite=Lax{http_only}");
    if let Ok(value) = http::HeaderValue::from_str(&cookie) {
        response.append_header(SET_COOKIE, value);
    }
}
