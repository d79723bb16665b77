//! Random values the LTI messages carry: a login's state and nonce, a score's JWT id.

use rand::RngCore;

/// 32 random bytes as 64 lowercase hex digits.
pub(super) fn random_hex() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
