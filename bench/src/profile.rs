//! The server's CPU per action, as instructions: the release server runs under callgrind, and
//! for each kind of action the counters are zeroed, the action is run a number of times in a
//! row by one learner, and the counts are dumped. Instruction counts do not depend on what else
//! the machine is doing, so they compare across runs where timings on two shared cores do not.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use http::StatusCode;
use tokio::process::Command;

use crate::cost::start_server;
use crate::http_load::Client;

/// Actions of each kind between a zero and a dump.
const ACTIONS: u32 = 20;

/// Millions of instructions the server ran per action, by kind.
pub type Profile = Vec<(&'static str, f64)>;

/// What the profiled server runs against.
pub struct ProfiledServer {
    pub binary: PathBuf,
    pub database_url: String,
}

pub async fn measure(server: &ProfiledServer) -> Result<Profile> {
    let dir = std::env::temp_dir().join(format!("outbox-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let mut command = Command::new("valgrind");
    command
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}/cg.%p", dir.display()))
        .arg("--dump-instr=no")
        .arg(&server.binary)
        .env("DATABASE_URL", &server.database_url)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // Under callgrind the server starts some fifty times slower.
    let (mut child, url) = start_server(command, Duration::from_secs(300)).await?;
    let pid = child.id().context("the profiled server has no pid")?;
    let result = profile_actions(&Client::new(&url), pid, &dir).await;
    let _ = child.kill().await;
    let _ = std::fs::remove_dir_all(&dir);
    result
}

async fn profile_actions(client: &Client, pid: u32, dir: &Path) -> Result<Profile> {
    let cookie = client.new_learner().await?;
    let kinds: [(&'static str, &str, &str); 6] = [
        ("page view (`GET /`)", "GET", "/"),
        ("attempt (crash `none`)", "/api/attempt", "crash=none"),
        ("reset", "/api/reset", ""),
        ("race", "/api/race", ""),
        ("Trace A (`mode=naive`)", "/api/attempt", "mode=naive"),
        ("the last report (`/api/current`)", "/api/current", ""),
    ];
    // Warm up: connections, prepared statements, lazily built state.
    for (_, path, form) in &kinds {
        for _ in 0..3 {
            run(client, path, form, &cookie).await?;
        }
    }
    let mut profile = Vec::new();
    for (name, path, form) in kinds {
        callgrind_control(&["--zero"], pid).await?;
        for _ in 0..ACTIONS {
            run(client, path, form, &cookie).await?;
            // An attempt's next one needs the ticket open again (not counted: reset apart).
            if path == "/api/attempt" {
                callgrind_control(&["--instr=off"], pid).await?;
                run(client, "/api/reset", "", &cookie).await?;
                callgrind_control(&["--instr=on"], pid).await?;
            }
        }
        let before = dumps(dir, pid)?;
        callgrind_control(&["--dump"], pid).await?;
        let dump = newest_dump(dir, pid, &before).await?;
        let instructions = totals(&dump)?;
        profile.push((name, instructions as f64 / f64::from(ACTIONS) / 1e6));
    }
    Ok(profile)
}

async fn run(client: &Client, path: &str, form: &str, cookie: &str) -> Result<()> {
    let status = if path == "GET" {
        client.page(cookie).await?.status
    } else {
        client.post(path, form, Some(cookie)).await?.status
    };
    if status != StatusCode::OK {
        bail!("{path} {form} on the profiled server answered {status}");
    }
    Ok(())
}

async fn callgrind_control(args: &[&str], pid: u32) -> Result<()> {
    let status = Command::new("callgrind_control")
        .args(args)
        .arg(pid.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await
        .context("running callgrind_control")?;
    if !status.success() {
        bail!("callgrind_control {args:?} failed: {status}");
    }
    Ok(())
}

/// The dump files of `pid` in `dir` now.
fn dumps(dir: &Path, pid: u32) -> Result<Vec<PathBuf>> {
    let prefix = format!("cg.{pid}.");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(&prefix))
        {
            files.push(path);
        }
    }
    Ok(files)
}

/// The dump that appeared since `before` (callgrind writes it asynchronously; bounded wait).
async fn newest_dump(dir: &Path, pid: u32, before: &[PathBuf]) -> Result<PathBuf> {
    for _ in 0..300 {
        if let Some(new) = dumps(dir, pid)?.into_iter().find(|p| !before.contains(p)) {
            let text = std::fs::read_to_string(&new).unwrap_or_default();
            if text.lines().any(|l| l.starts_with("totals:")) {
                return Ok(new);
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("callgrind wrote no dump")
}

/// The instructions a dump counted in all.
fn totals(dump: &Path) -> Result<u64> {
    let text = std::fs::read_to_string(dump)?;
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("totals:"))
        .context("a callgrind dump without totals")?;
    line.split_whitespace()
        .next()
        .context("empty totals")?
        .parse()
        .context("totals that are not a number")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_are_read_from_a_dump() {
        let dir = std::env::temp_dir().join(format!("outbox-profile-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dump = dir.join("cg.1.1");
        std::fs::write(
            &dump,
            "version: 1\nevents: Ir\nsummary: 10\ntotals: 123456\n",
        )
        .unwrap();
        assert_eq!(totals(&dump).unwrap(), 123_456);
        assert_eq!(dumps(&dir, 1).unwrap(), vec![dump]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
