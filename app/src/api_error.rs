//! What the API answers when it cannot act, in the server and in the browser alike. The
//! constructors that set the response's status live with the other server-side mappings in
//! `backend::errors`.

use leptos::server_fn::codec::JsonEncoding;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
use serde::{Deserialize, Serialize};

/// What the API answers when it cannot act: a stable code, the HTTP status it is sent with,
/// and a sentence for the learner in their language.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    pub code: String,
    pub status: u16,
    pub message: String,
}

impl FromServerFnError for ApiError {
    type Encoder = JsonEncoding;

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        // Errors raised by the framework before our code runs: a request it could not read
        // is the client's fault; anything else is ours.
        let bad_request = matches!(
            value,
            ServerFnErrorErr::Args(_)
                | ServerFnErrorErr::MissingArg(_)
                | ServerFnErrorErr::Deserialization(_)
                | ServerFnErrorErr::Request(_)
        );
        Self::from_framework(bad_request, value)
    }
}

impl ApiError {
    #[cfg(feature = "ssr")]
    fn from_framework(bad_request: bool, value: ServerFnErrorErr) -> Self {
        use leptos_i18n::td_string;
        let l = crate::locale::current();
        if bad_request {
            tracing::info!(error = %value, "request refused");
            let detail = value.to_string();
            let message = td_string!(l, errors.bad_request, detail = detail).to_string();
            ApiError::new(http::StatusCode::BAD_REQUEST, "bad_request", message)
        } else {
            tracing::error!(error = %value, "server function failed");
            let message = td_string!(l, errors.internal).to_owned();
            ApiError::new(http::StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
        }
    }

    // In the browser these errors come from the transport (the server was unreachable or
    // answered something unreadable); the page shows the server's words when it has them.
    #[cfg(not(feature = "ssr"))]
    fn from_framework(bad_request: bool, value: ServerFnErrorErr) -> Self {
        let (code, status) = if bad_request {
            ("bad_request", 400)
        } else {
            ("internal", 500)
        };
        ApiError {
            code: code.to_owned(),
            status,
            message: value.to_string(),
        }
    }
}
