//! The embed route's sandbox. Inside a third-party iframe the browser may refuse cookies, and
//! two frames on one course page must not share a sandbox, so an embed carries its sandbox's
//! token in its own URL (`s=`, 256 bits, issued and signed by this server) and in the address of
//! each of its forms, and never uses the cookie. A frame opened without one — or with one this
//! server did not issue recently and that names no sandbox — is sent to the same URL with a
//! fresh token; the sandbox itself is created by the frame's first action, so a course page
//! that is only looked at costs nothing.

use axum::body::Body;
use axum::extract::State;
use axum::http::{Method, Request};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use outbox_lab::pg::SandboxToken;

use app::backend::session::{EMBED_PATH, FRAME_TOKEN_PARAM, query_param};

use crate::server_state::ServerState;

pub async fn ensure_frame_token(
    State(state): State<ServerState>,
    request: Request<Body>,
    next: Next,
) -> Response {
    let uri = request.uri();
    if request.method() != Method::GET || uri.path() != EMBED_PATH {
        return next.run(request).await;
    }
    let query = uri.query().unwrap_or("");
    // A replay in a frame runs nothing and needs no sandbox.
    if query_param(query, app::links::REPLAY_PARAM).is_some() {
        return next.run(request).await;
    }
    let lab = &state.app.lab;
    let tokens = match lab.frame_tokens().await {
        Ok(tokens) => tokens,
        // The page then shows the database's trouble itself.
        Err(_) => return next.run(request).await,
    };
    let keep = match query_param(query, FRAME_TOKEN_PARAM).and_then(SandboxToken::parse) {
        None => false,
        Some(token) if tokens.adoptable(&token) => true,
        // An older learner's token, or one from elsewhere: kept only if it has a sandbox.
        Some(token) => lab.token_has_sandbox(&token).await.unwrap_or(true),
    };
    if keep {
        return next.run(request).await;
    }
    let others: Vec<&str> = query
        .split('&')
        .filter(|pair| !pair.is_empty() && pair.split('=').next() != Some(FRAME_TOKEN_PARAM))
        .collect();
    let query = others
        .iter()
        .map(|pair| format!("{pair}&"))
        .collect::<String>();
    let token = tokens.issue();
    // The path is ours and the query the frame's own: this redirects nowhere else.
    let target = format!(
        "{}?{query}{FRAME_TOKEN_PARAM}={}",
        uri.path(),
        token.as_str()
    );
    Redirect::temporary(&target).into_response()
}
