//! The platforms' public key sets, fetched from their `jwks_url` and kept by `kid`. A key id
//! not in the kept set makes one fresh fetch (the platform may have rotated its key); still
//! unknown, the launch is refused, and for [`MISS_PAUSE`] after such a fruitless fetch no
//! unknown key id fetches that set again (a stream of made-up key ids must not turn into a
//! stream of requests to the platform).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use jsonwebtoken::DecodingKey;
use jsonwebtoken::jwk::JwkSet;

/// How long a key set fetch may take.
pub const FETCH_LIMIT: Duration = Duration::from_secs(5);
/// After a fetch that did not find the key asked for: how long unknown key ids fetch nothing.
pub const MISS_PAUSE: Duration = Duration::from_secs(10);
/// The largest key set read.
const MAX_JWKS_BYTES: usize = 256 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum KeySetError {
    #[error("fetching the key set {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("the key set {url} has no key {kid:?}, even fetched again")]
    UnknownKid { url: String, kid: String },
    #[error("key {kid:?} of {url} is not a usable RS256 key: {reason}")]
    Unusable {
        url: String,
        kid: String,
        reason: String,
    },
}

pub struct PlatformKeys {
    client: reqwest::Client,
    sets: Mutex<HashMap<String, JwkSet>>,
    /// When a fetch of each set last failed to find the key asked for.
    misses: Mutex<HashMap<String, std::time::Instant>>,
}

impl std::fmt::Debug for PlatformKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PlatformKeys")
    }
}

impl PlatformKeys {
    pub fn new() -> Result<PlatformKeys, reqwest::Error> {
        let client = reqwest::Client::builder()
            .timeout(FETCH_LIMIT)
            .connect_timeout(FETCH_LIMIT)
            .redirect(reqwest::redirect::Policy::limited(3))
            .build()?;
        Ok(PlatformKeys {
            client,
            sets: Mutex::new(HashMap::new()),
            misses: Mutex::new(HashMap::new()),
        })
    }

    /// The key `kid` of the set at `url`: from the kept set, else after one fresh fetch.
    pub async fn key(&self, url: &str, kid: &str) -> Result<DecodingKey, KeySetError> {
        if let Some(key) = self.kept(url, kid)? {
            return Ok(key);
        }
        let unknown = || KeySetError::UnknownKid {
            url: url.to_owned(),
            kid: kid.to_owned(),
        };
        let paused = self
            .misses
            .lock()
            .ok()
            .is_some_and(|misses| misses.get(url).is_some_and(|at| at.elapsed() < MISS_PAUSE));
        if paused {
            return Err(unknown());
        }
        let set = self.fetch(url).await?;
        if let Ok(mut sets) = self.sets.lock() {
            sets.insert(url.to_owned(), set);
        }
        match self.kept(url, kid)? {
            Some(key) => Ok(key),
            None => {
                if let Ok(mut misses) = self.misses.lock() {
                    misses.insert(url.to_owned(), std::time::Instant::now());
                }
                Err(unknown())
            }
        }
    }

    fn kept(&self, url: &str, kid: &str) -> Result<Option<DecodingKey>, KeySetError> {
        let Ok(sets) = self.sets.lock() else {
            return Ok(None);
        };
        let Some(jwk) = sets.get(url).and_then(|set| set.find(kid)) else {
            return Ok(None);
        };
        DecodingKey::from_jwk(jwk)
            .map(Some)
            .map_err(|e| KeySetError::Unusable {
                url: url.to_owned(),
                kid: kid.to_owned(),
                reason: e.to_string(),
            })
    }

    async fn fetch(&self, url: &str) -> Result<JwkSet, KeySetError> {
        let unreachable = |reason: String| KeySetError::Unreachable {
            url: url.to_owned(),
            reason,
        };
        let response = self
            .client
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| unreachable(e.to_string()))?;
        if !response.status().is_success() {
            return Err(unreachable(format!("status {}", response.status())));
        }
        let body = super::http::read_limited(response, MAX_JWKS_BYTES)
            .await
            .map_err(|e| unreachable(e.to_string()))?;
        serde_json::from_slice(&body).map_err(|e| unreachable(format!("not a JWK set: {e}")))
    }
}
