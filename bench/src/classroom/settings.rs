//! What `bench classroom` reads from the environment, checked before any traffic is sent.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};

pub struct Settings {
    /// The server's base URL, without a trailing slash (`http://127.0.0.1:PORT`).
    pub url: String,
    /// `host:port` of the server, for the hostile clients' raw TCP connections.
    pub authority: String,
    /// The value a page of the playground sends as `Origin`.
    pub origin: String,
    pub database_url: String,
    pub server_pid: Option<u32>,
    pub learners: usize,
    pub seconds: u64,
    pub think: Duration,
    pub out: Option<PathBuf>,
    pub assert: bool,
    pub seed: u64,
}

fn optional(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn required(name: &str) -> Result<String> {
    optional(name).with_context(|| format!("{name} is not set (see scripts/classroom.sh)"))
}

fn number<T: std::str::FromStr>(name: &str, default: T) -> Result<T> {
    match optional(name) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse()
            .map_err(|_| anyhow::anyhow!("{name} must be a number, not {v:?}")),
    }
}

/// Whether `host` names this machine: the load generator must never reach anything else.
fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The `host:port` of a plain `http://` URL on the loopback interface.
fn loopback_authority(url: &str) -> Result<String> {
    let rest = url
        .strip_prefix("http://")
        .context("CLASSROOM_URL must be a plain http:// URL")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = match authority.rsplit_once(':') {
        Some((host, port)) if port.parse::<u16>().is_ok() => host,
        _ => bail!("CLASSROOM_URL must name a port, e.g. http://127.0.0.1:3000"),
    };
    if !is_loopback(host) {
        bail!("CLASSROOM_URL must be on this machine (127.0.0.1, ::1 or localhost), not {host}");
    }
    Ok(authority.to_owned())
}

/// The host of a `postgres://user@host:port/db` URL (a socket directory counts as local).
fn database_is_local(url: &str) -> bool {
    let Some(rest) = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
    else {
        return false;
    };
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match hostport.rsplit_once(':') {
        Some((h, p)) if p.parse::<u16>().is_ok() => h,
        _ => hostport,
    };
    host.is_empty() || is_loopback(host)
}

impl Settings {
    pub fn from_env() -> Result<Settings> {
        let url = required("CLASSROOM_URL")?.trim_end_matches('/').to_owned();
        let authority = loopback_authority(&url)?;
        let database_url = required("CLASSROOM_DATABASE_URL")?;
        if !database_is_local(&database_url) {
            bail!("CLASSROOM_DATABASE_URL must be a postgres:// URL on this machine");
        }
        let learners: usize = number("CLASSROOM_LEARNERS", 30)?;
        let seconds: u64 = number("CLASSROOM_SECONDS", 60)?;
        // A class is tens of learners and a lesson is minutes: far outside that is a typo.
        if !(1..=1000).contains(&learners) || !(1..=3600).contains(&seconds) {
            bail!("CLASSROOM_LEARNERS must be 1..=1000 and CLASSROOM_SECONDS 1..=3600");
        }
        Ok(Settings {
            origin: format!("http://{authority}"),
            authority,
            url,
            database_url,
            server_pid: optional("CLASSROOM_SERVER_PID")
                .map(|p| p.trim().parse())
                .transpose()
                .context("CLASSROOM_SERVER_PID must be a process id")?,
            learners,
            seconds,
            think: Duration::from_millis(number("CLASSROOM_THINK_MS", 500)?),
            out: optional("CLASSROOM_OUT").map(PathBuf::from),
            assert: optional("CLASSROOM_ASSERT").as_deref() == Some("1"),
            seed: number("CLASSROOM_SEED", 29)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_servers() {
        assert_eq!(
            loopback_authority("http://127.0.0.1:3900").ok().as_deref(),
            Some("127.0.0.1:3900")
        );
        assert!(loopback_authority("http://[::1]:80/").is_ok());
        assert!(loopback_authority("http://example.com:80").is_err());
        assert!(loopback_authority("https://127.0.0.1:443").is_err());
        assert!(loopback_authority("http://127.0.0.1").is_err());
        assert!(database_is_local("postgres://postgres@127.0.0.1:5432/x"));
        assert!(database_is_local("postgres://postgres@localhost/x"));
        assert!(!database_is_local("postgres://postgres@db.example:5432/x"));
    }
}
