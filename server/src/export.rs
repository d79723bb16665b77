//! `GET /api/export`: the sandbox's last kept run as a psql script (`session=a|b|c`, default
//! `a`; a comparison's side with `side=outbox|wrong`). The sandbox is named like everywhere
//! else (the cookie, or an embed's `s=`); a learner without one, or without a run, gets a
//! refusal and nothing is created.

use app::api::ApiError;
use app::backend::session::{existing_sandbox_of, query_param};
use axum::extract::State;
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use outbox_lab::catalog::ActionKind;
use outbox_lab::export::{Session, export};
use outbox_lab::pg::LabError;
use outbox_lab::report::Report;

use crate::server_state::ServerState;

/// Which report of the sandbox to write.
#[derive(Clone, Copy)]
enum Side {
    /// The last action's report.
    Last,
    /// A side of the last comparison.
    Outbox,
    Wrong,
}

pub async fn export_run(State(state): State<ServerState>, parts: Parts) -> Response {
    let locale = app::locale::of_request(&parts);
    let query = parts.uri.query().unwrap_or("");
    let session = match query_param(query, "session") {
        None | Some("") => Session::A,
        Some(raw) => match Session::parse(raw) {
            Some(s) => s,
            None => return refusal(ApiError::unknown_value(locale, "session", raw, "a, b, c")),
        },
    };
    let side = match query_param(query, "side") {
        None | Some("") => Side::Last,
        Some("outbox") => Side::Outbox,
        Some("wrong") => Side::Wrong,
        Some(raw) => {
            return refusal(ApiError::unknown_value(
                locale,
                "side",
                raw,
                "outbox, wrong",
            ));
        }
    };
    let lab = &state.app.lab;
    let found = async {
        lab.reachable().await?;
        let Some(sandbox) = existing_sandbox_of(&state.app, &parts).await? else {
            return Ok(None);
        };
        Ok::<_, LabError>(match side {
            Side::Last => Some(lab.current_report(&sandbox).await?),
            Side::Outbox | Side::Wrong => lab.last_compare(&sandbox).await?.map(|c| {
                if matches!(side, Side::Outbox) {
                    c.outbox
                } else {
                    c.wrong
                }
            }),
        })
    };
    let report = match lab.observe(found.await) {
        Ok(Some(report)) if is_a_run(&report) => report,
        Ok(_) => return refusal(ApiError::no_run(locale)),
        Err(e) => return refusal(ApiError::from_lab_in(e, locale)),
    };
    let label = match side {
        Side::Last => None,
        Side::Outbox => Some("compare-outbox"),
        Side::Wrong => Some("compare-wrong"),
    };
    let exported = match export(&report, label) {
        Ok(exported) => exported,
        Err(e) => {
            // The report is the server's own: one it cannot write is a bug to see in the log.
            tracing::error!(error = %e, "a kept report could not be exported");
            return refusal(ApiError::from_lab_in(
                LabError::Config(e.to_string()),
                locale,
            ));
        }
    };
    let Some(script) = exported.script(session) else {
        return refusal(ApiError::no_such_session(locale));
    };
    let disposition = format!("attachment; filename=\"{}\"", exported.file_name(session));
    let mut response = (StatusCode::OK, script.to_owned()).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    // The file name is built from fixed words and catalogue ids only.
    if let Ok(value) = HeaderValue::from_str(&disposition) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    response
}

/// A kept report of an action (not the bare tables a sandbox shows before its first one).
fn is_a_run(report: &Report) -> bool {
    report.action != ActionKind::Snapshot && !report.trace.is_empty()
}

pub(crate) fn refusal(error: ApiError) -> Response {
    let status = StatusCode::from_u16(error.status).unwrap_or(StatusCode::BAD_REQUEST);
    (status, axum::Json(error)).into_response()
}
