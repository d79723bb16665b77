//! What a request says about where it comes from: over HTTPS or not, from which client address,
//! and whether a page of another site sent it. Proxy headers are read only when the operator
//! named them, because any client can send any header.

use std::net::{IpAddr, SocketAddr};

use axum::extract::ConnectInfo;
use http::request::Parts;
use http::{HeaderMap, HeaderName, Method, header};

/// How the server is reached, from the operator's configuration.
#[derive(Clone, Debug, Default)]
pub struct WebSettings {
    /// `PLAYGROUND_PUBLIC_URL`'s origin (`https://playground.example.org`), if set: the one
    /// origin the playground's own pages have.
    pub public_origin: Option<String>,
    /// `PLAYGROUND_CLIENT_IP_HEADER`: a header a trusted proxy sets to the client's address.
    pub client_ip_header: Option<HeaderName>,
    /// `PLAYGROUND_PROTO_HEADER`: a header a trusted proxy sets to the original scheme.
    pub proto_header: Option<HeaderName>,
    /// `PLAYGROUND_AUTHOR_TOKEN`: opens the author's page (`/author`); none, no page.
    pub author_token: Option<String>,
}

impl WebSettings {
    /// Whether the learner reached the playground over HTTPS (then cookies are `Secure`).
    pub fn is_https(&self, headers: &HeaderMap) -> bool {
        if let Some(origin) = &self.public_origin {
            return origin.starts_with("https://");
        }
        self.proto_header
            .as_ref()
            .and_then(|name| headers.get(name))
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("https"))
    }

    /// The address whose budget pays for a new sandbox: the trusted header's last entry (the
    /// one the proxy itself appended), else the socket's peer. IPv6 clients count per /64,
    /// since one machine may hold a whole /64.
    pub fn client_address(&self, parts: &Parts) -> Option<String> {
        let from_header = self.client_ip_header.as_ref().and_then(|name| {
            let raw = parts.headers.get(name)?.to_str().ok()?;
            raw.rsplit(',').next()?.trim().parse::<IpAddr>().ok()
        });
        let peer = || {
            parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|ConnectInfo(addr)| addr.ip())
        };
        let ip = if self.client_ip_header.is_some() {
            from_header
        } else {
            peer()
        }?;
        Some(match ip {
            IpAddr::V4(v4) => v4.to_string(),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => v4.to_string(),
                None => {
                    let s = v6.segments();
                    format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
                }
            },
        })
    }

    /// Whether a browser says that a page of another site sent this state-changing request.
    ///
    /// As Go's `http.CrossOriginProtection` decides: `Sec-Fetch-Site` when the browser sends
    /// it (only `same-origin` and `none`, a typed address or bookmark, pass); else `Origin`,
    /// which must be the playground's own; a request with neither is not from a browser page
    /// (curl, course tooling) and passes. Safe methods always pass.
    pub fn is_cross_site(&self, method: &Method, headers: &HeaderMap) -> bool {
        if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
            return false;
        }
        if let Some(site) = headers.get("sec-fetch-site") {
            return !matches!(site.to_str(), Ok("same-origin") | Ok("none"));
        }
        match headers.get(header::ORIGIN).map(|v| v.to_str()) {
            None => false,
            Some(Ok(origin)) => !self.is_own_origin(origin, headers),
            Some(Err(_)) => true,
        }
    }

    /// Whether `origin` is the playground's own: the configured public origin, else the
    /// address the request was sent to (its `Host`), by either scheme (a proxy may end TLS).
    pub fn is_own_origin(&self, origin: &str, headers: &HeaderMap) -> bool {
        let origin = origin.trim_end_matches('/');
        if let Some(own) = &self.public_origin {
            return origin.eq_ignore_ascii_case(own);
        }
        let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else {
            return false;
        };
        let authority = origin
            .strip_prefix("https://")
            .or_else(|| origin.strip_prefix("http://"));
        authority.is_some_and(|a| a.eq_ignore_ascii_case(host))
    }
}

/// The origin (`scheme://host[:port]`) of an absolute URL, checked to be plain http(s).
pub fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    if !matches!(scheme, "http" | "https") {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next()?;
    let plain = !authority.is_empty()
        && authority
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'));
    plain.then(|| format!("{scheme}://{}", authority.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn a_page_of_another_site_is_told_from_the_playground_and_from_tools() {
        let web = WebSettings::default();
        let post = Method::POST;
        let host = ("host", "127.0.0.1:3000");
        assert!(web.is_cross_site(&post, &headers(&[host, ("sec-fetch-site", "cross-site")])));
        assert!(web.is_cross_site(&post, &headers(&[host, ("sec-fetch-site", "same-site")])));
        assert!(!web.is_cross_site(&post, &headers(&[host, ("sec-fetch-site", "same-origin")])));
        assert!(!web.is_cross_site(&post, &headers(&[host, ("sec-fetch-site", "none")])));
        // Older browsers: Origin only.
        assert!(web.is_cross_site(&post, &headers(&[host, ("origin", "https://evil.example")])));
        assert!(web.is_cross_site(&post, &headers(&[host, ("origin", "null")])));
        assert!(!web.is_cross_site(
            &post,
            &headers(&[host, ("origin", "http://127.0.0.1:3000")])
        ));
        // curl and course tooling send neither.
        assert!(!web.is_cross_site(&post, &headers(&[host])));
        // Reading is always allowed.
        let get = Method::GET;
        assert!(!web.is_cross_site(&get, &headers(&[host, ("sec-fetch-site", "cross-site")])));
    }

    #[test]
    fn a_configured_public_origin_is_the_only_own_origin() {
        let web = WebSettings {
            public_origin: Some("https://playground.example.org".into()),
            ..Default::default()
        };
        let h = headers(&[("host", "internal:3000")]);
        assert!(web.is_own_origin("https://playground.example.org", &h));
        assert!(!web.is_own_origin("http://internal:3000", &h));
        assert!(web.is_https(&h));
        assert!(!WebSettings::default().is_https(&h));
    }

    #[test]
    fn https_behind_a_proxy_counts_only_through_the_named_header() {
        let web = WebSettings {
            proto_header: Some(HeaderName::from_static("x-forwarded-proto")),
            ..Default::default()
        };
        assert!(web.is_https(&headers(&[("x-forwarded-proto", "https")])));
        assert!(!web.is_https(&headers(&[("x-forwarded-proto", "http")])));
        assert!(!WebSettings::default().is_https(&headers(&[("x-forwarded-proto", "https")])));
    }

    #[test]
    fn the_client_address_comes_from_the_trusted_header_only() {
        let mut req = http::Request::builder()
            .header("x-forwarded-for", "203.0.113.9, 198.51.100.7")
            .body(())
            .unwrap();
        req.extensions_mut()
            .insert(ConnectInfo(SocketAddr::from(([10, 0, 0, 1], 5000))));
        let (parts, _) = req.into_parts();
        assert_eq!(
            WebSettings::default().client_address(&parts).as_deref(),
            Some("10.0.0.1")
        );
        let behind_proxy = WebSettings {
            client_ip_header: Some(HeaderName::from_static("x-forwarded-for")),
            ..Default::default()
        };
        assert_eq!(
            behind_proxy.client_address(&parts).as_deref(),
            Some("198.51.100.7")
        );
    }

    #[test]
    fn ipv6_clients_share_a_budget_per_64() {
        let mut req = http::Request::builder().body(()).unwrap();
        let addr: SocketAddr = "[2001:db8:1:2:3:4:5:6]:443".parse().unwrap();
        req.extensions_mut().insert(ConnectInfo(addr));
        let (parts, _) = req.into_parts();
        assert_eq!(
            WebSettings::default().client_address(&parts).as_deref(),
            Some("2001:db8:1:2::/64")
        );
    }

    #[test]
    fn origins_are_read_from_plain_urls_only() {
        assert_eq!(
            origin_of("https://Playground.example.org/path?x").as_deref(),
            Some("https://playground.example.org")
        );
        assert_eq!(
            origin_of("http://127.0.0.1:3000").as_deref(),
            Some("http://127.0.0.1:3000")
        );
        assert_eq!(origin_of("ftp://x"), None);
        assert_eq!(origin_of("https://a b"), None);
    }
}
