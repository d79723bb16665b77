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

/// A cookie to set. The value must be cookie-safe (ours are hex tokens and language ids).
pub struct Cookie<'a> {
    pub name: &'a str,
    pub value: &'a str,
    pub max_age_secs: u64,
    /// Hidden from scripts.
    pub http_only: bool,
    /// Sent over HTTPS only (required for a `__Host-` name).
    pub secure: bool,
}

/// Adds a `Set-Cookie` header to the response being built. `SameSite=Lax`: a page of another
/// site never sends it along with a form it posts here.
pub fn set(cookie: &Cookie<'_>) {
    let Some(response) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>() else {
        return;
    };
    if let Some(value) = line(cookie) {
        response.append_header(SET_COOKIE, value);
    }
}

/// The `Set-Cookie` value for `cookie`.
pub fn line(cookie: &Cookie<'_>) -> Option<http::HeaderValue> {
    let http_only = if cookie.http_only { "; HttpOnly" } else { "" };
    let secure = if cookie.secure { "; Secure" } else { "" };
    let line = format!(
        "{}={}; Path=/; Max-Age={}; SameSite=Lax{http_only}{secure}",
        cookie.name, cookie.value, cookie.max_age_secs
    );
    http::HeaderValue::from_str(&line).ok()
}
