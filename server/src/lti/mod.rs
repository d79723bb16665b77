//! The playground as an LTI 1.3 tool: OIDC login initiation (`/lti/login`), the resource link
//! launch (`/lti/launch`) and the tool's public key set (`/.well-known/jwks.json`). Without
//! `PLAYGROUND_LTI_CONFIG` every one of them answers 404.
//!
//! A launch ties the learner's sandbox to (platform, deployment, user, resource link) and sends
//! the frame to the embed with that sandbox's token in its URL, as the embed always carries its
//! session: no cookie is needed inside the platform's frame. When the launch carries an AGS line
//! item, the learner's map is posted to it as a score ([`passback`]), off the learner's path.

pub mod http;
pub mod keys;
pub mod launch;
mod nonce;
pub mod passback;
pub mod platform_keys;
pub mod registry;

use std::path::Path;
use std::sync::Arc;

pub use keys::ToolKey;
pub use registry::{Registration, Registry};

/// Everything the LTI routes need, present only when LTI is configured.
#[derive(Debug)]
pub struct Lti {
    pub registry: Registry,
    pub key: ToolKey,
    pub platform_keys: platform_keys::PlatformKeys,
}

/// The LTI state for the router: present only when configured.
pub type Configured = Option<Arc<Lti>>;

/// Why the LTI configuration refuses the start.
#[derive(Debug, thiserror::Error)]
pub enum LtiConfigError {
    #[error("{path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Registry {
        path: String,
        source: registry::RegistryError,
    },
    #[error(transparent)]
    Key(#[from] keys::KeyError),
    #[error("cannot make the HTTP client for the platforms' key sets: {0}")]
    Client(#[from] reqwest::Error),
}

impl Lti {
    pub fn new(registry: Registry, key: ToolKey) -> Result<Lti, LtiConfigError> {
        Ok(Lti {
            registry,
            key,
            platform_keys: platform_keys::PlatformKeys::new()?,
        })
    }

    /// The registrations at `config` and the tool's key at `key` (generated if missing).
    pub fn from_files(config: &Path, key: &Path) -> Result<Lti, LtiConfigError> {
        let path = config.display().to_string();
        let source = std::fs::read_to_string(config).map_err(|source| LtiConfigError::Read {
            path: path.clone(),
            source,
        })?;
        let registry =
            Registry::parse(&source).map_err(|source| LtiConfigError::Registry { path, source })?;
        Lti::new(registry, ToolKey::load_or_generate(key)?)
    }
}
