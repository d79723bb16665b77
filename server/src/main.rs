//! Starts the playground: configuration, database, routes, upkeep, graceful shutdown.

#![recursion_limit = "256"]

use std::time::Duration;

use anyhow::Context;
use app::backend::state::AppState;
use leptos::prelude::get_configuration;
use outbox_lab::pg::Lab;
use server::client_sockets::Sockets;
use server::config::Config;
use server::routes::router;
use server::server_state::ServerState;
use tracing_subscriber::EnvFilter;

/// How long a shutdown waits for held stepped runs to end (as a crash) and keep their reports.
const HELD_RUNS_LIMIT: Duration = Duration::from_secs(10);

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
    let (available, needs) = lab
        .check_connection_budget()
        .await
        .context("checking the connection budget")?;
    tracing::info!(
        may_open = needs,
        postgresql_allows = available,
        "database ready; this process may open {needs} of the {available} connections PostgreSQL allows"
    );

    let upkeep = tokio::spawn(server::upkeep::run(
        lab.clone(),
        config.sandbox_ttl,
        config.reap_every,
    ));

    let passback = match &config.lti {
        Some(lti) => {
            let known_quests = config
                .lab
                .quests
                .quests
                .iter()
                .map(|q| q.id.clone())
                .collect();
            let worker = server::lti::passback::Passback::new(
                lti.clone(),
                lab.pool().clone(),
                known_quests,
                server::lti::passback::Timing::default(),
            )
            .context("making the HTTP client for LTI score passback")?;
            Some(tokio::spawn(std::sync::Arc::new(worker).run()))
        }
        None => None,
    };

    let (sockets, shutdown_sockets) =
        Sockets::new(config.sockets_per_client, config.step_runs_per_client);
    let app = router(ServerState {
        leptos,
        app: AppState::new(lab.clone(), config.web.clone()),
        frame_ancestors: config.frame_ancestors.clone(),
        sockets,
        lti: config.lti.clone(),
    });
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    tracing::info!("listening on http://{addr}");
    let shutdown = async {
        shutdown_signal().await;
        // Held stepped runs end as the process dying, and keep their reports.
        let _ = shutdown_sockets.send(true);
    };
    server::serve::serve(listener, app, shutdown, server::serve::HEADER_READ_LIMIT).await;
    wait_for_held_runs(&lab).await;

    upkeep.abort();
    if let Some(passback) = passback {
        passback.abort();
    }
    lab.pool().close().await;
    tracing::info!("stopped");
    Ok(())
}

/// Waits (bounded) until every stepped run has ended and kept its report.
async fn wait_for_held_runs(lab: &Lab) {
    let deadline = tokio::time::Instant::now() + HELD_RUNS_LIMIT;
    while lab.held_runs() > 0 {
        if tokio::time::Instant::now() >= deadline {
            tracing::warn!(
                held = lab.held_runs(),
                "stepped runs still held at shutdown"
            );
            return;
        }
        // Runs end on their own tasks; nothing notifies the last one's end.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
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
