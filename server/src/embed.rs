//! The embed route's sandbox. Inside a third-party iframe the browser may refuse cookies, and
//! two frames on one course page must not share a sandbox, so an embed carries its sandbox's
//! token in its own URL (`s=`, 256 random bits) and in the address of each of its forms, and
//! never uses the cookie. A frame opened without one is sent to the same URL with a fresh
//! token; the sandbox itself is created by the frame's first action, so a course page that
//! is only looked at costs nothing.

use axum::body::Body;
use axum::http::{Method, Request};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use outbox_lab::pg::SandboxToken;

use app::backend::session::{EMBED_PATH, FRAME_TOKEN_PARAM, query_param};

pub async fn ensure_frame_token(request: Request<Body>, next: Next) -> Response {
    let uri = request.uri();
    let needs_token = request.method() == Method::GET
        && uri.path() == EMBED_PATH
        && query_param(uri.query().unwrap_or(""), FRAME_TOKEN_PARAM).is_none();
    if !needs_token {
        return next.run(request).await;
    }
    let query = uri.query().map(|q| format!("{q}&")).unwrap_or_default();
    let token = SandboxToken::generate();
    // The path is ours and the query the frame's own: this redirects nowhere else.
    let target = format!(
        "{}?{query}{FRAME_TOKEN_PARAM}={}",
        uri.path(),
        token.as_str()
    );
    Redirect::temporary(&target).into_response()
}
