//! A plain form post (no JavaScript, or the page's background post) is answered by the server
//! function with a redirect back to the page; this takes the link's presets out of it.

use axum::body::Body;
use axum::http::{HeaderValue, Request, header};
use axum::middleware::Next;
use axum::response::Response;

/// Rewrites the `Location` of a server function's redirect (see `app::links`).
pub async fn back_to_page(request: Request<Body>, next: Next) -> Response {
    let is_api = request.uri().path().starts_with("/api/");
    let mut response = next.run(request).await;
    if !is_api || !response.status().is_redirection() {
        return response;
    }
    let rewritten = response
        .headers()
        .get(header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(app::links::page_after_action)
        .and_then(|location| HeaderValue::from_str(&location).ok());
    if let Some(location) = rewritten {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}
