//! Starts the playground: configuration, database, routes, upkeep, graceful shutdown.

#![recursion_limit = "256"]

use anyhow::Context;
use app::backend::state::AppState;
use leptos::prelude::get_configuration;
use outbox_lab::pg::Lab;
use server::config::Config;
use server::routes::{ServerState, router};
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn")),
        )
        .init();

    let config = Config::from_env()?;
    let leptos = get_configuration(None)
        .context("reading the Leptos settings (LEPTOS_* variables or Cargo.toml)")?
        .leptos_options;
    let addr = leptos.site_addr;

    let lab = Lab::open(&config.database_url, config.lab.clone())
        .await
        .context("preparing the database")?;
    tracing::info!("database ready");

    let upkeep = tokio::spawn(server::upkeep::run(
        lab.clone(),
        config.sandbox_ttl,
        config.reap_every,
    ));

    let app = router(ServerState {
        leptos,
        app: AppState::new(lab.clone(), config.web.clone()),
        frame_ancestors: config.frame_ancestors.clone(),
    });
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    tracing::info!("listening on http://{addr}");
    // The peer's address pays for new sandboxes (unless a trusted proxy header names it).
    let app = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await
        .context("serving")?;

    upkeep.abort();
    lab.pool().close().await;
    tracing::info!("stopped");
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
    tracing::info!("shutting down");
}
