//! The learner's sandbox: named by the `sandbox` cookie, or — in an embedded playground — by
//! the frame's own token (`s=` in the embed's URL and in the address of each of its forms): a
//! third-party frame may get no cookies, and two frames on one course page must not share a
//! sandbox.
//!
//! Looking costs nothing: a page view or a read-only call never creates a sandbox, it shows the
//! lesson's initial state instead. A sandbox is claimed by the first *action*, at most one per
//! request, paid from the client address's budget of new sandboxes.

use outbox_lab::pg::{LabError, SandboxToken, SchemaName};

use super::cookies;
use super::state::AppState;
use crate::api_error::ApiError;

/// The cookie that holds the learner's sandbox token (HttpOnly: scripts never need it). Over
/// HTTPS it is `__Host-sandbox`: Secure, and bound to the playground's own host.
pub const SANDBOX_COOKIE: &str = "sandbox";
pub const SECURE_SANDBOX_COOKIE: &str = "__Host-sandbox";
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

/// How this request names its sandbox.
enum Named {
    /// An embed's frame token (from the embed page's URL, or from the address its forms post
    /// to); `None` when the frame's URL holds no valid token.
    Frame(Option<SandboxToken>),
    /// The cookie's token; `None` for a newcomer (or a cookie that is not a token).
    Cookie(Option<SandboxToken>),
}

fn named(parts: &http::request::Parts, secure: bool) -> Named {
    let query = parts.uri.query().unwrap_or("");
    let is_api = parts.uri.path().starts_with("/api/");
    if parts.uri.path() == EMBED_PATH || (is_api && query_param(query, FRAME_TOKEN_PARAM).is_some())
    {
        return Named::Frame(query_param(query, FRAME_TOKEN_PARAM).and_then(SandboxToken::parse));
    }
    let cookie = cookies::get(&parts.headers, sandbox_cookie(secure));
    Named::Cookie(cookie.and_then(|raw| SandboxToken::parse(&raw)))
}

fn sandbox_cookie(secure: bool) -> &'static str {
    if secure {
        SECURE_SANDBOX_COOKIE
    } else {
        SANDBOX_COOKIE
    }
}

/// Whether this request is a plain form post (a browser, not a tool asking for JSON): then a
/// server function may answer with a page to go to.
pub fn wants_page() -> bool {
    request_parts()
        .and_then(|p| {
            p.headers
                .get(http::header::ACCEPT)
                .and_then(|v| v.to_str().ok())
                .map(|v| v.contains("text/html"))
        })
        .unwrap_or(false)
}

/// Whether this request came from an embed's frame (its forms post with the frame's token).
pub fn posted_from_frame() -> bool {
    request_parts()
        .is_some_and(|p| query_param(p.uri.query().unwrap_or(""), FRAME_TOKEN_PARAM).is_some())
}

/// `path` as a full address when the operator named the playground's public origin
/// (`PLAYGROUND_PUBLIC_URL`); else the path alone, which the same host resolves.
pub fn public_url(path: &str) -> String {
    let origin =
        leptos::prelude::use_context::<AppState>().and_then(|s| s.web.public_origin.clone());
    match origin {
        Some(origin) => format!("{origin}{path}"),
        None => path.to_owned(),
    }
}

fn request_parts() -> Option<http::request::Parts> {
    leptos::prelude::use_context::<http::request::Parts>()
}

/// The learner's sandbox if they have one; never creates one. Spends one request of the
/// sandbox's budget.
async fn existing_sandbox(state: &AppState) -> Result<Option<SchemaName>, LabError> {
    let Some(parts) = request_parts() else {
        return Ok(None);
    };
    existing_sandbox_of(state, &parts).await
}

/// [`existing_sandbox`] for a request served outside the server functions (the export):
/// the cookie, or an embed's `s=`; never creates a sandbox.
pub async fn existing_sandbox_of(
    state: &AppState,
    parts: &http::request::Parts,
) -> Result<Option<SchemaName>, LabError> {
    let secure = state.web.is_https(&parts.headers);
    let token = match named(parts, secure) {
        Named::Frame(token) | Named::Cookie(token) => token,
    };
    match token {
        Some(token) => state.lab.find_sandbox(&token).await,
        None => Ok(None),
    }
}

/// The address this request's client pays new sandboxes from.
pub fn client_address() -> Option<String> {
    let state = leptos::prelude::use_context::<AppState>()?;
    state.web.client_address(&request_parts()?)
}

/// The learner's sandbox for an action; a newcomer gets one now (and, outside a frame, its
/// cookie). An embed whose frame URL lacks a token cannot act: the page always has one.
async fn learner_sandbox(state: &AppState) -> Result<SchemaName, LabError> {
    let parts = request_parts();
    let Claimed {
        sandbox, cookie, ..
    } = claim_for(state, parts.as_ref()).await?;
    if let Some(line) = cookie
        && let Some(response) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>()
    {
        response.append_header(http::header::SET_COOKIE, line);
    }
    Ok(sandbox)
}

/// The learner's sandbox for a request served outside the server functions (the stepper's
/// WebSocket), by the same rules: a newcomer's first action claims one. Also answers the
/// `Set-Cookie` line to send when a sandbox was claimed outside a frame.
pub async fn learner_sandbox_of(
    state: &AppState,
    parts: &http::request::Parts,
) -> Result<Claimed, LabError> {
    claim_for(state, Some(parts)).await
}

/// A learner's sandbox, the token that names it (a socket asks again with it before each run,
/// in case the sandbox was recycled meanwhile), and the cookie to set for a newcomer.
pub struct Claimed {
    pub sandbox: SchemaName,
    pub token: SandboxToken,
    pub cookie: Option<http::HeaderValue>,
}

async fn claim_for(
    state: &AppState,
    parts: Option<&http::request::Parts>,
) -> Result<Claimed, LabError> {
    let secure = parts.is_some_and(|p| state.web.is_https(&p.headers));
    let named = parts.map_or(Named::Cookie(None), |p| named(p, secure));
    let (token, in_frame) = match named {
        Named::Frame(None) => return Err(LabError::SandboxGone("embed".to_owned())),
        Named::Frame(Some(token)) => (Some(token), true),
        Named::Cookie(token) => (token, false),
    };
    if let Some(token) = &token
        && let Some(sandbox) = state.lab.find_sandbox(token).await?
    {
        return Ok(Claimed {
            sandbox,
            token: token.clone(),
            cookie: None,
        });
    }
    // A frame keeps the token its URL already carries if this server issued it recently (the
    // embed page's redirect did); any other names nothing, and the frame is told to reload,
    // which gives it a fresh one. A cookie that names no sandbox (forged, or its sandbox
    // reaped) is replaced by a fresh token.
    let token = match token {
        Some(token) if in_frame => {
            if !state.lab.frame_tokens().await?.adoptable(&token) {
                return Err(LabError::SandboxGone("embed".to_owned()));
            }
            token
        }
        _ => SandboxToken::generate(),
    };
    let client = parts
        .and_then(|p| state.web.client_address(p))
        .unwrap_or_else(|| "unknown".to_owned());
    let (token, sandbox) = state.lab.claim_sandbox_for(token, Some(&client)).await?;
    let cookie = (!in_frame)
        .then(|| {
            cookies::line(&cookies::Cookie {
                name: sandbox_cookie(secure),
                value: token.as_str(),
                max_age_secs: cookies::ONE_YEAR,
                http_only: true,
                secure,
            })
        })
        .flatten();
    Ok(Claimed {
        sandbox,
        token,
        cookie,
    })
}

/// Runs `act` on the learner's sandbox and maps the lab's errors at the edge: the body of
/// every server function that acts on a sandbox.
pub async fn in_learner_sandbox<T, F, Fut>(act: F) -> Result<T, ApiError>
where
    F: FnOnce(outbox_lab::pg::Lab, SchemaName) -> Fut,
    Fut: std::future::Future<Output = Result<T, LabError>>,
{
    let state = AppState::get()?;
    watched(&state, async {
        let sandbox = learner_sandbox(&state).await?;
        act(state.lab.clone(), sandbox).await
    })
    .await
}

/// Runs `read` on the learner's sandbox if they have one, else answers `absent`: the body of
/// every server function that only reads (a page view must not create a sandbox).
pub async fn in_existing_sandbox<T, F, Fut>(
    absent: impl FnOnce() -> T,
    read: F,
) -> Result<T, ApiError>
where
    F: FnOnce(outbox_lab::pg::Lab, SchemaName) -> Fut,
    Fut: std::future::Future<Output = Result<T, LabError>>,
{
    let state = AppState::get()?;
    watched(&state, async {
        match existing_sandbox(&state).await? {
            Some(sandbox) => read(state.lab.clone(), sandbox).await,
            None => Ok(absent()),
        }
    })
    .await
}

/// Runs a server function's body unless PostgreSQL is known to be down (then the learner is
/// told at once, not after the pool's acquire timeout), notes an outage it meets, and maps the
/// lab's errors at the edge.
async fn watched<T>(
    state: &AppState,
    body: impl std::future::Future<Output = Result<T, LabError>>,
) -> Result<T, ApiError> {
    state.lab.reachable().await.map_err(ApiError::from_lab)?;
    let result = state.lab.observe(body.await);
    result.map_err(ApiError::from_lab)
}
