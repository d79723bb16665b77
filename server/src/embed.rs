//! The embed route's sandbox. Inside a third-party iframe the browser may refuse cookies, and
//! two frames on one course page must not share a sandbox, so an embed carries its sandbox's
//! token in its own URL (`s=`, 256 random bits) and never uses the cookie. A frame opened
//! without one gets a fresh sandbox and is sent to the same URL with its token.

use axum::body::Body;
use axum::extract::State;
use axum::http::{Method, Request, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};

use crate::routes::ServerState;

pub async fn ensure_frame_sandbox(
    State(state): State<ServerState>,
    request: Request<Body>,
    next: Next,
) -> Response {
    let uri = request.uri();
    let needs_token = request.method() == Method::GET
        && uri.path() == app::backend::session::EMBED_PATH
        && app::backend::session::query_param(uri.query().unwrap_or(""), "s").is_none();
    if !needs_token {
        return next.run(request).await;
    }
    match state.app.lab.claim_sandbox().await {
        Ok((token, _)) => {
            let query = uri.query().map(|q| format!("{q}&")).unwrap_or_default();
            // The path is ours and the query the frame's own: this redirects nowhere else.
            let target = format!("{}?{query}s={}", uri.path(), token.as_str());
            Redirect::temporary(&target).into_response()
        }
        Err(e) => {
            tracing::error!(error = %e, "could not give an embedded playground a sandbox");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "The playground is unavailable right now. / Песочница сейчас недоступна.",
            )
                .into_response()
        }
    }
}
