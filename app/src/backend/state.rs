//! What every server function can reach: the lab (PostgreSQL) and settings.

use outbox_lab::pg::Lab;

/// Provided to every request through Leptos' context.
#[derive(Clone)]
pub struct AppState {
    pub lab: Lab,
}

impl AppState {
    /// The state provided by the server; its absence is a wiring bug, reported as such.
    pub fn get() -> Result<AppState, crate::api::ApiError> {
        leptos::prelude::use_context::<AppState>().ok_or_else(|| {
            crate::api::ApiError::new(
                http::StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "the server is not wired up: no application state".into(),
            )
        })
    }
}
