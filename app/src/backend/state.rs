//! What every server function can reach: the lab (PostgreSQL) and the web edge's settings.

use std::sync::Arc;

use outbox_lab::pg::Lab;

use super::request::WebSettings;

/// Provided to every request through Leptos' context.
#[derive(Clone)]
pub struct AppState {
    pub lab: Lab,
    pub web: Arc<WebSettings>,
}

impl AppState {
    pub fn new(lab: Lab, web: WebSettings) -> Self {
        AppState {
            lab,
            web: Arc::new(web),
        }
    }

    /// The state provided by the server; its absence is a wiring bug, reported as such.
    pub fn get() -> Result<AppState, crate::api_error::ApiError> {
        leptos::prelude::use_context::<AppState>().ok_or_else(|| {
            crate::api_error::ApiError::new(
                http::StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "the server is not wired up: no application state".into(),
            )
        })
    }
}
