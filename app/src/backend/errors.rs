//! Lab errors as the learner sees them: a status code and a sentence in their language.
//! Details stay in the server log.

use http::StatusCode;
use leptos_i18n::td_string;
use outbox_lab::pg::LabError;

use crate::api::ApiError;

impl ApiError {
    pub fn from_lab(err: LabError) -> Self {
        let locale = crate::locale::current();
        let (status, code, message): (StatusCode, &str, String) = match &err {
            LabError::Unavailable(_) | LabError::BackendLingers { .. } => (
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                td_string!(locale, error_unavailable).to_owned(),
            ),
            other => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                td_string!(locale, error_generic, message = other.to_string()).to_string(),
            ),
        };
        if status.is_server_error() {
            tracing::error!(error = %err, "action failed");
        }
        ApiError::new(status, code, message)
    }
}

/// Sets the status of the response being built.
pub fn set_status(status: StatusCode) {
    if let Some(response) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(status);
    }
}
