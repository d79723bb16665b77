//! The learner's sandbox: found through the `sandbox` cookie, or claimed for a newcomer. An
//! embedded playground carries its sandbox's token in its own URL instead (see the server's
//! `embed` module): a third-party frame may get no cookies, and two frames on one course page
//! must not share a sandbox.

use outbox_lab::pg::{LabError, SandboxToken, SchemaName};

use super::cookies;
use super::state::AppState;
use crate::api::ApiError;

/// The cookie that holds the learner's sandbox token (HttpOnly: scripts never need it).
pub const SANDBOX_COOKIE: &str = "sandbox";
/// The embed route, and the query parameter that holds an embed's sandbox token.
pub const EMBED_PATH: &str = "/embed";
pub const FRAME_TOKEN_PARAM: &str = "s";

/// The value of `name` in a URL query (not decoded: our values need no decoding).
pub fn query_param<'q>(query: &'q str, name: &str) -> Option<&'q str> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// For a request that belongs to an embed — the embed page itself, or an API call the page
/// makes (its Referer) — the token in that URL, if any.
fn frame_token(parts: &http::request::Parts) -> Option<Option<String>> {
    let in_url = |path: &str, query: &str| {
        (path == EMBED_PATH).then(|| query_param(query, FRAME_TOKEN_PARAM).map(str::to_owned))
    };
    if let Some(found) = in_url(parts.uri.path(), parts.uri.query().unwrap_or("")) {
        return Some(found);
    }
    let referer = parts.headers.get(http::header::REFERER)?.to_str().ok()?;
    let after_scheme = referer.split_once("://").map_or(referer, |(_, rest)| rest);
    let path_and_query = &after_scheme[after_scheme.find('/')?..];
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    in_url(path, query)
}

/// The learner's sandbox for this request; a newcomer gets a fresh one and its cookie.
pub async fn learner_sandbox(state: &AppState) -> Result<SchemaName, ApiError> {
    let parts = leptos::prelude::use_context::<http::request::Parts>();
    if let Some(frame) = parts.as_ref().and_then(frame_token) {
        let gone = || ApiError::from_lab(LabError::SandboxGone("embed".to_owned()));
        let token = frame
            .as_deref()
            .and_then(SandboxToken::parse)
            .ok_or_else(gone)?;
        return state
            .lab
            .find_sandbox(&token)
            .await
            .map_err(ApiError::from_lab)?
            .ok_or_else(gone);
    }
    let token = parts
        .and_then(|parts| cookies::get(&parts.headers, SANDBOX_COOKIE))
        .and_then(|raw| SandboxToken::parse(&raw));
    let existing = match token {
        Some(token) => state
            .lab
            .find_sandbox(&token)
            .await
            .map_err(ApiError::from_lab)?,
        None => None,
    };
    if let Some(sandbox) = existing {
        return Ok(sandbox);
    }
    let (token, sandbox) = state
        .lab
        .claim_sandbox()
        .await
        .map_err(ApiError::from_lab)?;
    cookies::set(SANDBOX_COOKIE, token.as_str(), cookies::ONE_YEAR, true);
    Ok(sandbox)
}

/// Runs `act` on the learner's sandbox and maps the lab's errors at the edge: the body of
/// every server function that acts on a sandbox.
pub async fn in_learner_sandbox<T, F, Fut>(act: F) -> Result<T, ApiError>
where
    F: FnOnce(outbox_lab::pg::Lab, SchemaName) -> Fut,
    Fut: std::future::Future<Output = Result<T, LabError>>,
{
    let state = AppState::get()?;
    let sandbox = learner_sandbox(&state).await?;
    act(state.lab.clone(), sandbox)
        .await
        .map_err(ApiError::from_lab)
}
