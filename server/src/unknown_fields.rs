//! Refuses a form field that the server function does not take (`mistake=…` for
//! `mistakes=…`): the framework would ignore it and run the lesson's correct code, and the
//! learner would believe they ran the mistake. The known fields come from each server
//! function's own argument type (`app::backend::fields`).

use axum::body::{Body, to_bytes};
use axum::http::{Method, Request, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use leptos::server_fn::error::ServerFnUrlError;

use crate::body_limit::API_BODY_LIMIT;

pub async fn refuse_unknown_fields(request: Request<Body>, next: Next) -> Response {
    let known = app::backend::fields::known_fields(request.uri().path());
    let (Some(known), true) = (known, request.method() == Method::POST) else {
        return next.run(request).await;
    };
    // The framework reads any body as a form, whatever its declared type: a body that is not
    // declared as one is refused rather than read past this check.
    if !declared_as_form(request.headers()) {
        let locale = app::locale::of_request(&request.into_parts().0);
        let error = app::api::ApiError::unsupported_content_type(locale);
        return (StatusCode::UNSUPPORTED_MEDIA_TYPE, axum::Json(error)).into_response();
    }
    let (parts, body) = request.into_parts();
    let bytes = match to_bytes(body, API_BODY_LIMIT).await {
        Ok(bytes) => bytes,
        // Over the limit (a body without Content-Length): the same answer as the limit layer.
        Err(_) => return StatusCode::PAYLOAD_TOO_LARGE.into_response(),
    };
    // A key that is not UTF-8 decodes with U+FFFD; such a body is the framework's to refuse
    // as unreadable (400), not ours to name.
    let unknown = form_urlencoded::parse(&bytes)
        .map(|(k, _)| k)
        .find(|k| !known.contains(&k.as_ref()))
        .filter(|k| !k.contains('\u{FFFD}'));
    let Some(field) = unknown else {
        return next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
    };
    let locale = app::locale::of_request(&parts);
    let error = app::api::ApiError::unknown_field(locale, &field, known);
    tracing::info!(path = %parts.uri.path(), %field, "refused an unknown field");
    let plain_form = parts
        .headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/html"));
    if plain_form {
        // As the framework answers a refused form post: back to the page, the error in its URL.
        return Redirect::to(&back_with_error(&parts, error)).into_response();
    }
    (StatusCode::UNPROCESSABLE_ENTITY, axum::Json(error)).into_response()
}

/// A form body (`application/x-www-form-urlencoded`, in any letter case, with parameters), or
/// no declared type at all (`curl -X POST` with no data).
fn declared_as_form(headers: &http::HeaderMap) -> bool {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return true;
    };
    let Ok(value) = value.to_str() else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/x-www-form-urlencoded")
}

/// The page the form was on (its Referer, else the page), with the error encoded the way the
/// page's actions read refusals (`__path`, `__err`).
fn back_with_error(parts: &axum::http::request::Parts, error: app::api::ApiError) -> String {
    const NOWHERE: &str = "http://playground.invalid/";
    let referer = parts
        .headers
        .get(header::REFERER)
        .and_then(|v| v.to_str().ok());
    let base = referer.unwrap_or(NOWHERE);
    match ServerFnUrlError::new(parts.uri.path(), error).to_url(base) {
        Ok(url) if referer.is_some() => url.to_string(),
        Ok(url) => url
            .as_str()
            .trim_start_matches(NOWHERE.trim_end_matches('/'))
            .to_owned(),
        Err(_) => "/".to_owned(),
    }
}
