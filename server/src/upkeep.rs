//! Background upkeep: keep the warm sandbox pool topped up, reap idle sandboxes, forget
//! shared runs past their time.
//! Both coordinate through PostgreSQL, so several server processes can run them at once.

use std::time::Duration;

use outbox_lab::pg::Lab;

/// Runs forever; errors are logged and retried on the next round.
pub async fn run(lab: Lab, ttl: Duration, reap_every: Duration) {
    let mut refill = tokio::time::interval(Duration::from_secs(10));
    let mut reap = tokio::time::interval(reap_every);
    loop {
        tokio::select! {
            _ = refill.tick() => {
                match lab.refill_warm_pool().await {
                    Ok(0) => {}
                    Ok(n) => tracing::debug!(stamped = n, "warm sandbox pool topped up"),
                    Err(e) => tracing::warn!(error = %e, "could not top up the warm sandbox pool"),
                }
            }
            _ = reap.tick() => {
                match lab.reap_idle(ttl).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(dropped = n, "reaped idle sandboxes"),
                    Err(e) => tracing::warn!(error = %e, "could not reap idle sandboxes"),
                }
                match lab.forget_expired_replays().await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(forgotten = n, "forgot expired shared runs"),
                    Err(e) => tracing::warn!(error = %e, "could not forget expired shared runs"),
                }
            }
        }
    }
}
