//! The tool's own RSA key (`PLAYGROUND_LTI_KEY`): read from a PEM file, or generated there on
//! first start (2048 bits, mode 0600), and published as a JWK set at `/.well-known/jwks.json`.

use std::io::Write;
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rsa::pkcs1::{DecodeRsaPrivateKey, EncodeRsaPrivateKey};
use rsa::pkcs8::{DecodePrivateKey, EncodePrivateKey, LineEnding};
use rsa::traits::PublicKeyParts;
use sha2::Digest;

/// Why the tool's key is not usable.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: not an RSA private key in PEM (PKCS#8 or PKCS#1)")]
    NotAKey { path: String },
    #[error("{path}: the key has {bits} bits; at least 2048 are needed")]
    TooShort { path: String, bits: usize },
    #[error("generating the key failed: {0}")]
    Generate(String),
    #[error("signing with the tool's key failed: {0}")]
    Sign(String),
}

/// The tool's key pair: the public half and its key id for the platforms, the private half
/// to sign the client assertions of score passback.
#[derive(Clone)]
pub struct ToolKey {
    private: rsa::RsaPrivateKey,
    signing: jsonwebtoken::EncodingKey,
    kid: String,
}

impl std::fmt::Debug for ToolKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ToolKey {{ kid: {:?} }}", self.kid)
    }
}

pub const KEY_BITS: usize = 2048;

impl ToolKey {
    /// Reads the key at `path`, or generates one and writes it there (0600) when no file is.
    pub fn load_or_generate(path: &Path) -> Result<ToolKey, KeyError> {
        let shown = path.display().to_string();
        match std::fs::read_to_string(path) {
            Ok(pem) => Self::from_pem(&pem, &shown),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let key = rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, KEY_BITS)
                    .map_err(|e| KeyError::Generate(e.to_string()))?;
                let pem = key
                    .to_pkcs8_pem(LineEnding::LF)
                    .map_err(|e| KeyError::Generate(e.to_string()))?;
                write_private(path, pem.as_bytes()).map_err(|source| KeyError::Io {
                    path: shown.clone(),
                    source,
                })?;
                tracing::info!(path = %shown, "generated the LTI tool's RSA key");
                Self::from_private(key)
            }
            Err(source) => Err(KeyError::Io {
                path: shown,
                source,
            }),
        }
    }

    fn from_pem(pem: &str, shown: &str) -> Result<ToolKey, KeyError> {
        let key = rsa::RsaPrivateKey::from_pkcs8_pem(pem)
            .or_else(|_| rsa::RsaPrivateKey::from_pkcs1_pem(pem))
            .map_err(|_| KeyError::NotAKey {
                path: shown.to_owned(),
            })?;
        let bits = key.size() * 8;
        if bits < KEY_BITS {
            return Err(KeyError::TooShort {
                path: shown.to_owned(),
                bits,
            });
        }
        Self::from_private(key)
    }

    fn from_private(private: rsa::RsaPrivateKey) -> Result<ToolKey, KeyError> {
        let (n, e) = n_and_e(&private);
        // RFC 7638: the SHA-256 of the required members in lexicographic order.
        let canonical = format!(r#"{{"e":"{e}","kty":"RSA","n":"{n}"}}"#);
        let kid = URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(canonical.as_bytes()));
        let der = private
            .to_pkcs1_der()
            .map_err(|e| KeyError::Generate(e.to_string()))?;
        let signing = jsonwebtoken::EncodingKey::from_rsa_der(der.as_bytes());
        Ok(ToolKey {
            private,
            signing,
            kid,
        })
    }

    /// `claims` as a JWT signed RS256 by the tool's key, its `kid` in the header.
    pub fn sign<T: serde::Serialize>(&self, claims: &T) -> Result<String, KeyError> {
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.signing)
            .map_err(|e| KeyError::Sign(e.to_string()))
    }

    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The public key set published at `/.well-known/jwks.json`.
    pub fn jwks(&self) -> serde_json::Value {
        let (n, e) = n_and_e(&self.private);
        serde_json::json!({
            "keys": [{
                "kty": "RSA",
                "alg": "RS256",
                "use": "sig",
                "kid": self.kid,
                "n": n,
                "e": e,
            }]
        })
    }
}

fn n_and_e(key: &rsa::RsaPrivateKey) -> (String, String) {
    (
        URL_SAFE_NO_PAD.encode(key.n().to_bytes_be()),
        URL_SAFE_NO_PAD.encode(key.e().to_bytes_be()),
    )
}

/// Writes a new file readable by its owner only; an existing file is never overwritten.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_key_is_generated_once_with_owner_only_access() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("lti-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tool.pem");
        let _ = std::fs::remove_file(&path);
        let made = ToolKey::load_or_generate(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let read = ToolKey::load_or_generate(&path).unwrap();
        assert_eq!(made.kid(), read.kid());
        let jwks = read.jwks();
        let key = &jwks["keys"][0];
        assert_eq!(key["kty"], "RSA");
        assert_eq!(key["alg"], "RS256");
        assert_eq!(key["use"], "sig");
        assert_eq!(key["e"], "AQAB");
        assert_eq!(key["kid"], made.kid());
        // 2048 bits: 256 bytes, 342 base64url characters.
        assert_eq!(key["n"].as_str().unwrap().len(), 342);
        std::fs::write(dir.join("bad.pem"), "not a key").unwrap();
        assert!(matches!(
            ToolKey::load_or_generate(&dir.join("bad.pem")),
            Err(KeyError::NotAKey { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
