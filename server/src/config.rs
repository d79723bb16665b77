//! Configuration from the environment. Every setting has a default that suits local use.

use std::time::Duration;

use outbox_lab::pg::{LabConfig, RateLimit};

use crate::config_error::ConfigError;

/// Settings read at start-up.
#[derive(Clone, Debug)]
pub struct Config {
    /// `DATABASE_URL`: the database to use (created if missing).
    pub database_url: String,
    pub lab: LabConfig,
    /// `PLAYGROUND_SANDBOX_TTL_SECS`: a sandbox unused for this long is dropped.
    pub sandbox_ttl: Duration,
    /// How often the reaper looks for idle sandboxes.
    pub reap_every: Duration,
    /// `PLAYGROUND_FRAME_ANCESTORS`: origins that may embed the playground in a frame.
    pub frame_ancestors: crate::headers::FrameAncestors,
    /// How the server is reached: its public origin, and which proxy headers to trust.
    pub web: app::backend::request::WebSettings,
    /// `PLAYGROUND_SOCKETS_PER_CLIENT`: stepper sockets one client address may hold open.
    pub sockets_per_client: usize,
    /// `PLAYGROUND_STEP_RUNS_PER_CLIENT`: stepped runs one client address may hold at once.
    pub step_runs_per_client: usize,
    /// `PLAYGROUND_LTI_CONFIG` and `PLAYGROUND_LTI_KEY`: the playground as an LTI 1.3 tool.
    pub lti: crate::lti::Configured,
}

/// Sockets and held runs per address. A class behind one NAT is the normal case: thirty
/// learners, a tab or two each, all stepping at once.
pub const DEFAULT_SOCKETS_PER_CLIENT: usize = 64;
pub const DEFAULT_STEP_RUNS_PER_CLIENT: usize = 32;

pub const DEFAULT_DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/outbox_playground";

impl Config {
    pub fn from_env() -> Result<Config, ConfigError> {
        let defaults = LabConfig::default();
        let lab = LabConfig {
            pool_max: at_least("PLAYGROUND_POOL_MAX", defaults.pool_max, 5)?,
            lock_connections: at_least(
                "PLAYGROUND_LOCK_CONNECTIONS",
                defaults.lock_connections,
                2,
            )?,
            lookup_connections: at_least(
                "PLAYGROUND_LOOKUP_CONNECTIONS",
                defaults.lookup_connections,
                1,
            )?,
            max_waiting: number("PLAYGROUND_MAX_WAITING", defaults.max_waiting)?,
            wait_limit: Duration::from_secs(number(
                "PLAYGROUND_WAIT_SECS",
                defaults.wait_limit.as_secs(),
            )?),
            step_writers: number("PLAYGROUND_STEP_WRITERS", defaults.step_writers)?,
            crash_connections: number("PLAYGROUND_CRASH_CONNECTIONS", defaults.crash_connections)?,
            warm_sandboxes: number("PLAYGROUND_WARM_SANDBOXES", defaults.warm_sandboxes)?,
            max_sandboxes: number("PLAYGROUND_MAX_SANDBOXES", defaults.max_sandboxes)?,
            rate: RateLimit {
                per_second: positive("PLAYGROUND_RATE_PER_SECOND", defaults.rate.per_second)?,
                burst: positive("PLAYGROUND_RATE_BURST", defaults.rate.burst)?,
            },
            claims_per_client: RateLimit {
                per_second: positive(
                    "PLAYGROUND_NEW_SANDBOXES_PER_MINUTE",
                    defaults.claims_per_client.per_second * 60.0,
                )? / 60.0,
                burst: positive(
                    "PLAYGROUND_NEW_SANDBOXES_BURST",
                    defaults.claims_per_client.burst,
                )?,
            },
            recycle_after: Duration::from_secs(number(
                "PLAYGROUND_RECYCLE_AFTER_SECS",
                defaults.recycle_after.as_secs(),
            )?),
            step_sessions: number("PLAYGROUND_STEP_SESSIONS", defaults.step_sessions)?,
            step_idle: Duration::from_secs(number(
                "PLAYGROUND_STEP_IDLE_SECS",
                defaults.step_idle.as_secs(),
            )?),
            replays: outbox_lab::pg::ReplayPolicy {
                max_bytes: at_least(
                    "PLAYGROUND_REPLAY_MAX_BYTES",
                    u32::try_from(defaults.replays.max_bytes).unwrap_or(u32::MAX),
                    16 * 1024,
                )? as usize,
                keep_for: Duration::from_secs(
                    u64::from(at_least(
                        "PLAYGROUND_REPLAY_KEEP_DAYS",
                        u32::try_from(defaults.replays.keep_for.as_secs() / 86_400)
                            .unwrap_or(u32::MAX),
                        1,
                    )?) * 86_400,
                ),
                per_client: RateLimit {
                    per_second: positive(
                        "PLAYGROUND_SHARES_PER_MINUTE",
                        defaults.replays.per_client.per_second * 60.0,
                    )? / 60.0,
                    burst: positive("PLAYGROUND_SHARES_BURST", defaults.replays.per_client.burst)?,
                },
            },
            quests: quests()?,
            ..defaults
        };
        Ok(Config {
            database_url: std::env::var("DATABASE_URL")
                .unwrap_or_else(|_| DEFAULT_DATABASE_URL.to_owned()),
            lab,
            sandbox_ttl: Duration::from_secs(number("PLAYGROUND_SANDBOX_TTL_SECS", 24 * 3600)?),
            reap_every: Duration::from_secs(60),
            frame_ancestors: match std::env::var("PLAYGROUND_FRAME_ANCESTORS") {
                Ok(raw) => crate::headers::FrameAncestors::parse(&raw)?,
                Err(_) => crate::headers::FrameAncestors::same_origin(),
            },
            web: web_settings()?,
            sockets_per_client: number(
                "PLAYGROUND_SOCKETS_PER_CLIENT",
                DEFAULT_SOCKETS_PER_CLIENT,
            )?,
            step_runs_per_client: number(
                "PLAYGROUND_STEP_RUNS_PER_CLIENT",
                DEFAULT_STEP_RUNS_PER_CLIENT,
            )?,
            lti: lti()?,
        })
    }
}

fn web_settings() -> Result<app::backend::request::WebSettings, ConfigError> {
    let public_origin = match std::env::var("PLAYGROUND_PUBLIC_URL") {
        Err(_) => None,
        Ok(raw) => Some(app::backend::request::origin_of(raw.trim()).ok_or_else(|| {
            ConfigError::new(
                "PLAYGROUND_PUBLIC_URL",
                "an http(s) URL like https://playground.example.org",
                &raw,
            )
        })?),
    };
    Ok(app::backend::request::WebSettings {
        public_origin,
        client_ip_header: header_name("PLAYGROUND_CLIENT_IP_HEADER")?,
        proto_header: header_name("PLAYGROUND_PROTO_HEADER")?,
        author_token: author_token()?,
    })
}

/// `PLAYGROUND_AUTHOR_TOKEN`: opens the author's page; unset or empty, there is none.
fn author_token() -> Result<Option<String>, ConfigError> {
    match std::env::var("PLAYGROUND_AUTHOR_TOKEN") {
        Err(_) => Ok(None),
        Ok(raw) if raw.trim().is_empty() => Ok(None),
        Ok(raw) if raw.trim().len() < 16 || raw.trim().chars().any(char::is_whitespace) => {
            Err(ConfigError::new(
                "PLAYGROUND_AUTHOR_TOKEN",
                "at least 16 characters without spaces",
                "(hidden)",
            ))
        }
        Ok(raw) => Ok(Some(raw.trim().to_owned())),
    }
}

/// `PLAYGROUND_QUESTS`: a quest file to use instead of the shipped one, checked against the
/// catalogue now: a mistake refuses the start, naming its line.
fn quests() -> Result<std::sync::Arc<outbox_lab::quest::QuestBook>, ConfigError> {
    const EXPECTED: &str = "a readable quest file (see the README's \"Quests\")";
    let source = match std::env::var("PLAYGROUND_QUESTS") {
        Err(_) => outbox_lab::quest::file::BUILT_IN.to_owned(),
        Ok(path) if path.trim().is_empty() => outbox_lab::quest::file::BUILT_IN.to_owned(),
        Ok(path) => std::fs::read_to_string(path.trim()).map_err(|e| {
            ConfigError::new("PLAYGROUND_QUESTS", EXPECTED, &format!("{path}: {e}"))
        })?,
    };
    let origin = std::env::var("PLAYGROUND_QUESTS").unwrap_or_else(|_| "quests/quests.toml".into());
    outbox_lab::quest::file::parse(&source)
        .map(std::sync::Arc::new)
        .map_err(|e| ConfigError::new("PLAYGROUND_QUESTS", EXPECTED, &format!("{origin}: {e}")))
}

/// `PLAYGROUND_LTI_CONFIG` (the platforms' registrations) and `PLAYGROUND_LTI_KEY` (the tool's
/// private key, generated there if missing): both checked now; unset, there is no LTI.
fn lti() -> Result<crate::lti::Configured, ConfigError> {
    lti_from(
        std::env::var("PLAYGROUND_LTI_CONFIG").ok(),
        std::env::var("PLAYGROUND_LTI_KEY").ok(),
    )
}

/// [`lti`] from the two variables' values.
pub fn lti_from(
    config: Option<String>,
    key: Option<String>,
) -> Result<crate::lti::Configured, ConfigError> {
    let config = match config {
        None => return Ok(None),
        Some(path) if path.trim().is_empty() => return Ok(None),
        Some(path) => path.trim().to_owned(),
    };
    let key = key
        .map(|k| k.trim().to_owned())
        .filter(|k| !k.is_empty())
        .ok_or_else(|| {
            ConfigError::new(
                "PLAYGROUND_LTI_KEY",
                "the path of the tool's RSA private key (PEM; generated there if missing) when PLAYGROUND_LTI_CONFIG is set",
                "",
            )
        })?;
    crate::lti::Lti::from_files(std::path::Path::new(&config), std::path::Path::new(&key))
        .map(|lti| Some(std::sync::Arc::new(lti)))
        .map_err(|e| {
            let name = match e {
                crate::lti::LtiConfigError::Key(_) => "PLAYGROUND_LTI_KEY",
                _ => "PLAYGROUND_LTI_CONFIG",
            };
            ConfigError::new(
                name,
                "a readable LTI registration file and RSA key (see the README's \"LTI 1.3 (launch)\")",
                &e.to_string(),
            )
        })
}

/// A header name from the environment (`X-Forwarded-For`), if the variable is set.
fn header_name(name: &'static str) -> Result<Option<http::HeaderName>, ConfigError> {
    match std::env::var(name) {
        Err(_) => Ok(None),
        Ok(raw) if raw.trim().is_empty() => Ok(None),
        Ok(raw) => http::HeaderName::from_bytes(raw.trim().as_bytes())
            .map(Some)
            .map_err(|_| ConfigError::new(name, "an HTTP header name", &raw)),
    }
}

fn number<T: std::str::FromStr>(name: &'static str, default: T) -> Result<T, ConfigError> {
    match std::env::var(name) {
        Err(_) => Ok(default),
        Ok(value) => value
            .trim()
            .parse()
            .map_err(|_| ConfigError::new(name, "a whole number", &value)),
    }
}

/// A whole number of at least `min` (a race needs three working connections at once).
fn at_least(name: &'static str, default: u32, min: u32) -> Result<u32, ConfigError> {
    let value: u32 = number(name, default)?;
    if value >= min {
        Ok(value)
    } else {
        Err(ConfigError::new(
            name,
            "a larger whole number (see the README's connection budget)",
            &value.to_string(),
        ))
    }
}

fn positive(name: &'static str, default: f32) -> Result<f32, ConfigError> {
    let value: f32 = number(name, default)?;
    if value.is_finite() && value >= 1.0 {
        Ok(value)
    } else {
        Err(ConfigError::new(
            name,
            "a number of at least 1",
            &value.to_string(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_lti_configuration_refuses_the_start_naming_what_is_wrong() {
        assert!(lti_from(None, None).unwrap().is_none());
        assert!(lti_from(Some(" ".into()), None).unwrap().is_none());
        let dir = std::env::temp_dir().join(format!("lti-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("lti.toml");
        std::fs::write(
            &file,
            "[[registration]]\nissuer = \"https://lms.example.org\"\nclient_id = \"\"\n\
             deployment_ids = [\"1\"]\nauth_login_url = \"https://lms.example.org/a\"\n\
             token_url = \"https://lms.example.org/t\"\njwks_url = \"https://lms.example.org/k\"\n",
        )
        .unwrap();
        let path = file.display().to_string();
        let key = dir.join("tool.pem").display().to_string();
        let no_key = lti_from(Some(path.clone()), None).unwrap_err().to_string();
        assert!(no_key.starts_with("PLAYGROUND_LTI_KEY must be"), "{no_key}");
        let bad = lti_from(Some(path.clone()), Some(key.clone()))
            .unwrap_err()
            .to_string();
        assert!(bad.starts_with("PLAYGROUND_LTI_CONFIG must be"), "{bad}");
        assert!(bad.contains("registration 1: client_id is empty"), "{bad}");
        assert!(bad.contains(&path), "{bad}");
        let missing = lti_from(Some(dir.join("none.toml").display().to_string()), Some(key))
            .unwrap_err()
            .to_string();
        assert!(missing.contains("none.toml"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
