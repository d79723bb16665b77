//! The router: the page, the server functions under `/api`, `/healthz`, static files.

use std::time::Duration;

use app::app::{App, shell};
use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{Request, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use leptos::prelude::*;
use leptos_axum::{LeptosRoutes, generate_route_list, handle_server_fns_with_context};
use tower_http::compression::CompressionLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::set_header::SetResponseHeaderLayer;

use crate::body_limit::API_BODY_LIMIT;
use crate::headers;
use crate::server_state::ServerState;

pub fn router(state: ServerState) -> Router {
    let routes = generate_route_list(App);
    let app_state = state.app.clone();
    let csp = SetResponseHeaderLayer::overriding(
        http::header::CONTENT_SECURITY_POLICY,
        state.frame_ancestors.header_value(),
    );
    Router::new()
        .route("/healthz", get(healthz))
        .route("/api/step", get(crate::step_socket::step_socket))
        .route("/api/export", get(crate::export::export_run))
        .route("/author.csv", get(crate::author::author_csv))
        .route("/api/{*fn_name}", post(server_fn))
        .route(crate::lti::launch::JWKS_PATH, get(crate::lti::launch::jwks))
        .route(
            crate::lti::launch::LOGIN_PATH,
            get(crate::lti::launch::login).post(crate::lti::launch::login),
        )
        .route(
            crate::lti::launch::LAUNCH_PATH,
            post(crate::lti::launch::launch),
        )
        .leptos_routes_with_context(
            &state,
            routes,
            move || provide_context(app_state.clone()),
            {
                let options = state.leptos.clone();
                move || shell(options.clone())
            },
        )
        .fallback(leptos_axum::file_and_error_handler::<ServerState, _>(shell))
        // For every route (leptos_routes registers each server function at its own path).
        // The last layer added sees a request first: the cross-site check comes before
        // anything reads a body or looks a sandbox up.
        .layer(axum::middleware::from_fn(
            crate::unknown_fields::refuse_unknown_fields,
        ))
        .layer(RequestBodyLimitLayer::new(API_BODY_LIMIT))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::embed::ensure_frame_token,
        ))
        .layer(axum::middleware::from_fn(
            crate::form_redirect::back_to_page,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::cross_site::refuse_cross_site,
        ))
        .layer(axum::middleware::from_fn(headers::cache_control))
        .layer(csp)
        // The embed's token is in its URL: never hand that URL to another site.
        .layer(SetResponseHeaderLayer::overriding(
            http::header::REFERRER_POLICY,
            http::HeaderValue::from_static("same-origin"),
        ))
        .layer(CompressionLayer::new())
        .with_state(state)
}

async fn server_fn(State(state): State<ServerState>, request: Request<Body>) -> impl IntoResponse {
    handle_server_fns_with_context(move || provide_context(state.app.clone()), request).await
}

/// 200 when PostgreSQL answers within a second, 503 otherwise.
async fn healthz(State(state): State<ServerState>) -> impl IntoResponse {
    match state.app.lab.ping(Duration::from_secs(1)).await {
        // Every connection in use: PostgreSQL answers, the server is merely busy.
        Ok(()) | Err(outbox_lab::pg::LabError::Busy) => (
            StatusCode::OK,
            axum::Json(serde_json::json!({"status": "ok"})),
        ),
        Err(e) => {
            tracing::warn!(error = %e, "health check: database unavailable");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                axum::Json(serde_json::json!({"status": "database unavailable"})),
            )
        }
    }
}
