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

/// Signs frame tokens: an embed's frame names its sandbox by a token in its URL before the
/// sandbox exists, and its first action claims a sandbox under that token. Only a token this
/// server issued recently is adopted that way, so a link with a token made up elsewhere (or
/// one issued long ago and handed around) never names a learner's sandbox.
///
/// A signed token is still 64 hex digits: 16 random bytes, the second it was issued (8 bytes),
/// and the first 8 bytes of an HMAC-SHA256 of both under the server's secret.
#[derive(Clone)]
pub struct FrameTokens {
    secret: Vec<u8>,
}

/// How long an issued frame token may be adopted: a school day between loading a course
/// page and acting in it.
pub const FRAME_TOKEN_ADOPTABLE_FOR: std::time::Duration =
    std::time::Duration::from_secs(12 * 3600);

impl FrameTokens {
    pub fn new(secret: Vec<u8>) -> Self {
        FrameTokens { secret }
    }

    /// A fresh token, issued now.
    pub fn issue(&self) -> SandboxToken {
        self.issue_at(now_secs())
    }

    fn issue_at(&self, secs: u64) -> SandboxToken {
        let mut bytes = [0u8; TOKEN_HEX_CHARS / 2];
        rand::rng().fill_bytes(&mut bytes[..16]);
        bytes[16..24].copy_from_slice(&secs.to_be_bytes());
        let tag = self.tag(&bytes[..24]);
        bytes[24..].copy_from_slice(&tag);
        SandboxToken(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// Whether this server issued `token` within [`FRAME_TOKEN_ADOPTABLE_FOR`].
    pub fn adoptable(&self, token: &SandboxToken) -> bool {
        self.adoptable_at(token, now_secs())
    }

    fn adoptable_at(&self, token: &SandboxToken, now: u64) -> bool {
        let Some(bytes) = decode_hex(token.as_str()) else {
            return false;
        };
        let tag = self.tag(&bytes[..24]);
        // Constant time: a forger learns nothing from how long a refusal took.
        let same = tag
            .iter()
            .zip(&bytes[24..])
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0;
        let mut issued = [0u8; 8];
        issued.copy_from_slice(&bytes[16..24]);
        let issued = u64::from_be_bytes(issued);
        same && issued <= now + 60 && now - issued.min(now) <= FRAME_TOKEN_ADOPTABLE_FOR.as_secs()
    }

    /// A token that always names the same sandbox for the same `parts` (an LTI learner on
    /// one resource link): a keyed hash, so nobody without the server's secret can compute
    /// it, and nothing but its own hash is stored. It is not adoptable: whoever derives one
    /// claims its sandbox at once.
    pub fn derive(&self, purpose: &str, parts: &[&str]) -> SandboxToken {
        use hmac::Mac;
        let Ok(mut mac) = hmac::Hmac::<sha2::Sha256>::new_from_slice(&self.secret) else {
            // HMAC takes a key of any length; this arm is never taken.
            return SandboxToken::generate();
        };
        // Each part with its length first: ("ab", "c") and ("a", "bc") never meet.
        for part in std::iter::once(purpose).chain(parts.iter().copied()) {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part.as_bytes());
        }
        let full = mac.finalize().into_bytes();
        SandboxToken(full.iter().map(|b| format!("{b:02x}")).collect())
    }

    fn tag(&self, message: &[u8]) -> [u8; 8] {
        use hmac::Mac;
        let mut mac = match hmac::Hmac::<sha2::Sha256>::new_from_slice(&self.secret) {
            Ok(mac) => mac,
            // HMAC takes a key of any length; this arm is never taken.
            Err(_) => return [0; 8],
        };
        mac.update(message);
        let full = mac.finalize().into_bytes();
        let mut tag = [0u8; 8];
        tag.copy_from_slice(&full[..8]);
        tag
    }
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn decode_hex(hex: &str) -> Option<[u8; TOKEN_HEX_CHARS / 2]> {
    let mut out = [0u8; TOKEN_HEX_CHARS / 2];
    if hex.len() != TOKEN_HEX_CHARS {
        return None;
    }
    for (i, pair) in hex.as_bytes().chunks(2).enumerate() {
        let text = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(text, 16).ok()?;
    }
    Some(out)
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
    fn only_recent_tokens_this_server_issued_are_adoptable() {
        let tokens = FrameTokens::new(b"secret".to_vec());
        let now = 2_000_000_000;
        let issued = tokens.issue_at(now);
        assert!(SandboxToken::parse(issued.as_str()).is_some());
        assert!(tokens.adoptable_at(&issued, now));
        assert!(tokens.adoptable_at(&issued, now + 3600));
        // Handed around for days: no longer.
        assert!(!tokens.adoptable_at(&issued, now + 2 * 86_400));
        // Another server's secret, a plain random token, a flipped digit: never.
        assert!(!FrameTokens::new(b"other".to_vec()).adoptable_at(&issued, now));
        assert!(!tokens.adoptable_at(&SandboxToken::generate(), now));
        let mut flipped = issued.as_str().to_owned();
        let last = if flipped.ends_with('0') { "1" } else { "0" };
        flipped.replace_range(63.., last);
        assert!(!tokens.adoptable_at(&SandboxToken(flipped), now));
    }

    #[test]
    fn derived_tokens_are_stable_per_parts_and_secret() {
        let tokens = FrameTokens::new(b"secret".to_vec());
        let a = tokens.derive("lti", &["iss", "dep", "user", "link"]);
        assert_eq!(SandboxToken::parse(a.as_str()), Some(a.clone()));
        assert!(a == tokens.derive("lti", &["iss", "dep", "user", "link"]));
        assert!(a != tokens.derive("lti", &["iss", "dep", "other", "link"]));
        assert!(a != tokens.derive("lti", &["iss", "dep", "userl", "ink"]));
        assert!(
            a != FrameTokens::new(b"other".to_vec()).derive("lti", &["iss", "dep", "user", "link"])
        );
        assert!(!tokens.adoptable(&a));
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
