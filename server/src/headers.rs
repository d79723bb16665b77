//! Response headers: who may frame the playground, and how long browsers keep its files.

use axum::body::Body;
use axum::http::{HeaderValue, Request, header};
use axum::middleware::Next;
use axum::response::Response;

use crate::config_error::ConfigError;

/// The origins allowed to frame the playground (`Content-Security-Policy: frame-ancestors`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameAncestors(Vec<String>);

impl FrameAncestors {
    /// Only the playground's own pages may frame it.
    pub fn same_origin() -> Self {
        FrameAncestors(Vec::new())
    }

    /// Parses a space-separated list of origins (`https://courses.example.org`); each must be
    /// a bare http(s) origin, so nothing else can slip into the header.
    pub fn parse(raw: &str) -> Result<Self, ConfigError> {
        let mut origins = Vec::new();
        for origin in raw.split_whitespace() {
            if !is_origin(origin) {
                return Err(ConfigError::new(
                    "PLAYGROUND_FRAME_ANCESTORS",
                    "space-separated origins like https://courses.example.org",
                    origin,
                ));
            }
            origins.push(origin.trim_end_matches('/').to_owned());
        }
        Ok(FrameAncestors(origins))
    }

    /// Whether `origin` is one of the allowed framing origins.
    pub fn allows(&self, origin: &str) -> bool {
        let origin = origin.trim_end_matches('/');
        self.0.iter().any(|o| o.eq_ignore_ascii_case(origin))
    }

    /// The header's value: `frame-ancestors 'self' <origins>`.
    pub fn header_value(&self) -> HeaderValue {
        let mut value = String::from("frame-ancestors 'self'");
        for origin in &self.0 {
            value.push(' ');
            value.push_str(origin);
        }
        // Every origin was checked to be plain ASCII without spaces or quotes.
        HeaderValue::from_str(&value).unwrap_or(HeaderValue::from_static("frame-ancestors 'self'"))
    }
}

fn is_origin(raw: &str) -> bool {
    let raw = raw.trim_end_matches('/');
    let Some(rest) = raw
        .strip_prefix("https://")
        .or_else(|| raw.strip_prefix("http://"))
    else {
        return false;
    };
    let (host, port) = match rest.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (rest, None),
    };
    let host_ok = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-');
    let port_ok =
        port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()));
    host_ok && port_ok
}

/// A year: the longest time a browser should keep a file whose name changes with its content.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// Everything else is checked with the server before each use.
const REVALIDATE: &str = "no-cache";

/// Sets `Cache-Control`: files under `/pkg/` whose names carry a content hash are kept for a
/// year; everything else (pages, API answers, unhashed files) is revalidated.
pub async fn cache_control(request: Request<Body>, next: Next) -> Response {
    let hashed = is_hashed_asset(request.uri().path());
    let mut response = next.run(request).await;
    let success = response.status().is_success();
    let headers = response.headers_mut();
    if !headers.contains_key(header::CACHE_CONTROL) {
        let value = if hashed && success {
            IMMUTABLE
        } else {
            REVALIDATE
        };
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(value));
    }
    response
}

/// `/pkg/outbox-playground.LoccmQ8apDquS2ZH9K50zg.wasm`: cargo-leptos puts a base64url
/// content hash between the name and the extension.
pub fn is_hashed_asset(path: &str) -> bool {
    let Some(name) = path.strip_prefix("/pkg/") else {
        return false;
    };
    let mut parts = name.rsplit('.');
    let (Some(_ext), Some(hash), Some(_name)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    (16..=64).contains(&hash.len())
        && hash
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_origins_are_accepted() {
        let ok =
            FrameAncestors::parse("https://courses.example.org http://localhost:4321/").unwrap();
        assert_eq!(
            ok.header_value(),
            "frame-ancestors 'self' https://courses.example.org http://localhost:4321"
        );
        for bad in [
            "*",
            "'none'",
            "https://a.example; script-src *",
            "ftp://x",
            "https://",
            "https://a:99999x",
        ] {
            assert!(FrameAncestors::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            FrameAncestors::same_origin().header_value(),
            "frame-ancestors 'self'"
        );
    }

    #[test]
    fn hashed_names_are_told_from_plain_ones() {
        assert!(is_hashed_asset(
            "/pkg/outbox-playground.0123abcdef456789.wasm"
        ));
        assert!(!is_hashed_asset("/pkg/outbox-playground.wasm"));
        assert!(!is_hashed_asset("/pkg/outbox-playground_bg.wasm"));
        assert!(!is_hashed_asset("/api/attempt"));
    }
}
