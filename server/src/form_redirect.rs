//! A plain form post (no JavaScript, or the page's background post) is answered by the server
//! function with a redirect back to the page; this takes the link's presets out of it, and
//! sends an embed's post back to its own frame even when the browser sent no Referer.

use axum::body::Body;
use axum::http::{HeaderValue, Request, header};
use axum::middleware::Next;
use axum::response::Response;

/// Rewrites the `Location` of a server function's redirect (see `app::links`).
pub async fn back_to_page(request: Request<Body>, next: Next) -> Response {
    let is_api = request.uri().path().starts_with("/api/");
    // An embed's forms post to `/api/…?s=…&lang=…`: the frame to return to.
    let posted_from = request
        .uri()
        .query()
        .map(app::links::ActionOrigin::from_query)
        .unwrap_or_default();
    let mut response = next.run(request).await;
    if !is_api || !response.status().is_redirection() {
        return response;
    }
    let rewritten = response
        .headers()
        .get(header::LOCATION)
        .and_then(|v| v.to_str().ok())
        // A shared run's replay is where "share" means to go, from a frame too.
        .filter(|location| {
            !location.starts_with("/replay/") && !location.starts_with("/embed?replay=")
        })
        .map(|location| app::links::page_after_action(location, &posted_from))
        .and_then(|location| HeaderValue::from_str(&location).ok());
    if let Some(location) = rewritten {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}
