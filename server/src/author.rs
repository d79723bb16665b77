//! `GET /author.csv`: the author's counts as CSV, behind the same token as `/author` (in the
//! `token` query parameter, or `Authorization: Bearer <token>` for a script).

use app::api::ApiError;
use app::backend::session::query_param;
use axum::extract::State;
use axum::http::request::Parts;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use crate::export::refusal;
use crate::server_state::ServerState;

pub async fn author_csv(State(state): State<ServerState>, parts: Parts) -> Response {
    let locale = app::locale::of_request(&parts);
    let bearer = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let query = parts.uri.query().unwrap_or("");
    let given = bearer
        .or_else(|| query_param(query, "token"))
        .unwrap_or_default();
    // The query is percent-encoded as a form sends it; a token has no spaces.
    let given = percent_decode(given);
    if let Err(e) = app::quest_api::author_allowed(&state.app, locale, &given) {
        return refusal(e);
    }
    let lab = &state.app.lab;
    let counts = async {
        lab.reachable().await?;
        lab.author_counts().await
    };
    match lab.observe(counts.await) {
        Ok(counts) => (
            [
                (
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("text/csv; charset=utf-8"),
                ),
                (
                    header::CONTENT_DISPOSITION,
                    HeaderValue::from_static(
                        "attachment; filename=\"outbox-playground-class.csv\"",
                    ),
                ),
                (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
            ],
            counts.to_csv(),
        )
            .into_response(),
        Err(e) => refusal(ApiError::from_lab_in(e, locale)),
    }
}

/// `%XX` and `+` as a form encodes them; anything malformed is kept as it is.
fn percent_decode(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
