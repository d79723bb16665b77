//! Sandbox creation, with and without the warm pool, and many idle sandboxes.

use std::time::Instant;

use anyhow::Result;
use outbox_lab::pg::{Lab, LabConfig};

fn config(warm: usize) -> LabConfig {
    LabConfig {
        warm_sandboxes: warm,
        ..LabConfig::default()
    }
}

/// Sandboxes handed out per second: stamped on demand, then taken from a filled warm pool.
pub async fn creation_rates(database_url: &str, n: usize) -> Result<(f64, f64)> {
    let cold = Lab::open(database_url, config(0)).await?;
    let t = Instant::now();
    for _ in 0..n {
        cold.claim_sandbox().await?;
    }
    let stamped = n as f64 / t.elapsed().as_secs_f64();

    // Fill the pool first (not timed): that is the work the pool does ahead of learners.
    Lab::open(database_url, config(n))
        .await?
        .refill_warm_pool()
        .await?;
    let t = Instant::now();
    for _ in 0..n {
        cold.claim_sandbox().await?;
    }
    let warm = n as f64 / t.elapsed().as_secs_f64();
    Ok((stamped, warm))
}

/// Claims `n` sandboxes in the server's database that nobody then uses.
pub async fn make_idle(database_url: &str, n: usize) -> Result<()> {
    let lab = Lab::open(database_url, config(0)).await?;
    let mut tasks = tokio::task::JoinSet::new();
    let workers = 4;
    for w in 0..workers {
        let lab = lab.clone();
        let share = n / workers + usize::from(w < n % workers);
        tasks.spawn(async move {
            for _ in 0..share {
                lab.claim_sandbox().await?;
            }
            anyhow::Ok(())
        });
    }
    while let Some(done) = tasks.join_next().await {
        done??;
    }
    Ok(())
}

/// The resident set size of a process, in MiB (Linux).
pub fn rss_mib(pid: u32) -> Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(f64::NAN);
    Ok(kib / 1024.0)
}
