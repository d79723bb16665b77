//! Refuses state-changing requests that a page of another site sent, before any sandbox is
//! looked up or claimed. Without this, a page elsewhere could post a form to `/api/reset`: the
//! browser leaves the `SameSite=Lax` cookie behind, so the playground would claim a new
//! sandbox and its `Set-Cookie` would replace the learner's — their work gone without a click.

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, Request, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::server_state::ServerState;

pub async fn refuse_cross_site(
    State(state): State<ServerState>,
    request: Request<Body>,
    next: Next,
) -> Response {
    let is_api = request.uri().path().starts_with("/api/");
    if !is_api
        || !state
            .app
            .web
            .is_cross_site(request.method(), request.headers())
    {
        return next.run(request).await;
    }
    let (parts, _) = request.into_parts();
    let locale = app::locale::of_request(&parts);
    let (error, page) = app::backend::errors::cross_site(locale);
    tracing::info!(path = %parts.uri.path(), "refused a request from another site");
    let wants_html = parts
        .headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/html"));
    let mut response = if wants_html {
        (StatusCode::FORBIDDEN, axum::response::Html(page)).into_response()
    } else {
        (StatusCode::FORBIDDEN, axum::Json(error)).into_response()
    };
    // The answer is for that one request; nothing about it may be kept or reused.
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
