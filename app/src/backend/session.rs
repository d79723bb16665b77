//! The learner's sandbox: found through the `sandbox` cookie, or claimed for a newcomer.

use outbox_lab::pg::{SandboxToken, SchemaName};

use super::cookies;
use super::state::AppState;
use crate::api::ApiError;

/// The cookie that holds the learner's sandbox token (HttpOnly: scripts never need it).
pub const SANDBOX_COOKIE: &str = "sandbox";

/// The learner's sandbox for this request; a newcomer gets a fresh one and its cookie.
pub async fn learner_sandbox(state: &AppState) -> Result<SchemaName, ApiError> {
    let token = leptos::prelude::use_context::<http::request::Parts>()
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
