//! Server-generated identifiers: sandbox schema names and learner tokens.
//!
//! A schema name is never read from a request: the server generates it, and a value of
//! [`SchemaName`] exists only if it matches the strict pattern (`sb_` + 20 base32 letters =
//! 100 random bits). A learner holds a [`SandboxToken`] (256 random bits); the registry stores
//! only its SHA-256 and maps it to the schema.

use rand::RngCore;

const BASE32: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
const SCHEMA_PREFIX: &str = "sb_";
const SCHEMA_RANDOM_CHARS: usize = 20;
const TOKEN_HEX_CHARS: usize = 64;

/// A sandbox's schema name, valid by construction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SchemaName(String);

impl SchemaName {
    /// A fresh random name.
    pub fn generate() -> Self {
        let mut rng = rand::rng();
        let name: String = (0..SCHEMA_RANDOM_CHARS)
            .map(|_| char::from(BASE32[(rng.next_u32() % 32) as usize]))
            .collect();
        SchemaName(format!("{SCHEMA_PREFIX}{name}"))
    }

    /// Accepts only names of the generated shape (for names read back from the registry).
    pub fn parse(raw: &str) -> Option<Self> {
        let rest = raw.strip_prefix(SCHEMA_PREFIX)?;
        let ok = rest.len() == SCHEMA_RANDOM_CHARS && rest.bytes().all(|b| BASE32.contains(&b));
        ok.then(|| SchemaName(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for SchemaName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The secret a learner's browser holds (cookie or embed URL) to reach its sandbox.
#[derive(Clone, PartialEq, Eq)]
pub struct SandboxToken(String);

impl SandboxToken {
    pub fn generate() -> Self {
        let mut bytes = [0u8; TOKEN_HEX_CHARS / 2];
        rand::rng().fill_bytes(&mut bytes);
        SandboxToken(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// Accepts exactly 64 lowercase hex digits; anything else is treated as no token.
    pub fn parse(raw: &str) -> Option<Self> {
        let ok = raw.len() == TOKEN_HEX_CHARS
            && raw
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        ok.then(|| SandboxToken(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SandboxToken {
    // The token is a credential: keep it out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SandboxToken(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_names_parse_and_differ() {
        let a = SchemaName::generate();
        let b = SchemaName::generate();
        assert_ne!(a, b);
        assert_eq!(SchemaName::parse(a.as_str()), Some(a));
    }

    #[test]
    fn only_generated_shapes_are_schema_names() {
        for bad in [
            "",
            "sb_",
            "public",
            "sb_ABCDEFGHIJKLMNOPQRST",
            "sb_abcdefghijklmnopqrs1",
            "sb_abcdefghijklmnopqrst; DROP SCHEMA public",
            "lab_template",
        ] {
            assert_eq!(SchemaName::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn tokens_are_64_hex_digits() {
        let t = SandboxToken::generate();
        assert_eq!(SandboxToken::parse(t.as_str()), Some(t.clone()));
        assert_eq!(SandboxToken::parse(&t.as_str().to_uppercase()), None);
        assert_eq!(SandboxToken::parse("abc"), None);
        assert_eq!(format!("{t:?}"), "SandboxToken(..)");
    }
}
