//! The request body limit, shared by the router and the handlers that read a body themselves.

/// The largest request body: a full 8 KiB payload, percent-encoded, fits with room to
/// spare; anything bigger is refused with 413 before it is read.
pub const API_BODY_LIMIT: usize = 64 * 1024;
