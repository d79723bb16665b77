//! A learner's browser, as far as the server can tell: its own sandbox cookie, the page's
//! own `Origin`, form posts that ask for JSON. Every request is bounded in time.

use std::time::{Duration, Instant};

use anyhow::Result;
use bytes::Bytes;
use http::{Request, header};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// Longer than any answer a learner would wait for; past it the request counts as wedged.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(15);

/// The cookies that name a learner's sandbox (`sandbox`, or `__Host-sandbox` over HTTPS).
#[derive(Clone, Default)]
pub struct Jar {
    cookies: Vec<(String, String)>,
}

impl Jar {
    fn is_sandbox(name: &str) -> bool {
        name.starts_with("sandbox") || name.starts_with("__Host-sandbox")
    }

    /// Keeps the sandbox cookies of one `Set-Cookie` value.
    pub fn keep(&mut self, set_cookie: &str) {
        let pair = set_cookie.split(';').next().unwrap_or_default();
        let Some((name, value)) = pair.split_once('=') else {
            return;
        };
        let (name, value) = (name.trim(), value.trim());
        if !Self::is_sandbox(name) {
            return;
        }
        self.cookies.retain(|(n, _)| n != name);
        self.cookies.push((name.to_owned(), value.to_owned()));
    }

    /// The `Cookie` header to send, if there is anything to send.
    pub fn header(&self) -> Option<String> {
        if self.cookies.is_empty() {
            return None;
        }
        let pairs: Vec<String> = self
            .cookies
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        Some(pairs.join("; "))
    }

    pub fn is_empty(&self) -> bool {
        self.cookies.is_empty()
    }
}

/// How one request ended, as a table cell groups it: `200`, `409 step_in_progress`,
/// `timeout`, `connection error`.
#[derive(Clone, Debug)]
pub struct Answer {
    pub label: String,
    /// The HTTP status, when an answer arrived at all.
    pub status: Option<u16>,
    pub code: Option<String>,
    pub took: Duration,
}

impl Answer {
    pub fn failed(label: &str, took: Duration) -> Answer {
        Answer {
            label: label.to_owned(),
            status: None,
            code: None,
            took,
        }
    }
}

#[derive(Clone)]
pub struct Client {
    base: String,
    origin: String,
    http: HyperClient<HttpConnector, Full<Bytes>>,
}

impl Client {
    pub fn new(base: &str, origin: &str) -> Client {
        let http = HyperClient::builder(TokioExecutor::new())
            .pool_max_idle_per_host(1024)
            .build_http();
        Client {
            base: base.to_owned(),
            origin: origin.to_owned(),
            http,
        }
    }

    /// `POST /api/<name>` the way the page's forms send it.
    pub async fn post(&self, name: &str, form: &str, jar: &mut Jar) -> Answer {
        let mut request = Request::post(format!("{}/api/{name}", self.base))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ACCEPT, "application/json")
            // A page of the playground itself: the server's cross-site check must pass it.
            .header(header::ORIGIN, &self.origin);
        if let Some(cookie) = jar.header() {
            request = request.header(header::COOKIE, cookie);
        }
        self.send(request.body(Full::new(Bytes::from(form.to_owned()))), jar)
            .await
    }

    /// A page view (or `/healthz`): a GET as a browser's navigation sends it.
    pub async fn get(&self, path: &str, jar: &mut Jar) -> Answer {
        let mut request =
            Request::get(format!("{}{path}", self.base)).header(header::ACCEPT, "text/html");
        if let Some(cookie) = jar.header() {
            request = request.header(header::COOKIE, cookie);
        }
        self.send(request.body(Full::new(Bytes::new())), jar).await
    }

    async fn send(&self, request: http::Result<Request<Full<Bytes>>>, jar: &mut Jar) -> Answer {
        let start = Instant::now();
        let Ok(request) = request else {
            return Answer::failed("bad request built", start.elapsed());
        };
        match tokio::time::timeout(ANSWER_TIMEOUT, self.exchange(request, jar)).await {
            Ok(Ok((status, code))) => {
                let label = match &code {
                    Some(code) => format!("{status} {code}"),
                    None => status.to_string(),
                };
                Answer {
                    label,
                    status: Some(status),
                    code,
                    took: start.elapsed(),
                }
            }
            Ok(Err(_)) => Answer::failed("connection error", start.elapsed()),
            Err(_) => Answer::failed("timeout", start.elapsed()),
        }
    }

    /// One request and its whole body; for a refusal, the body's `code`.
    async fn exchange(
        &self,
        request: Request<Full<Bytes>>,
        jar: &mut Jar,
    ) -> Result<(u16, Option<String>)> {
        let response = self.http.request(request).await?;
        let status = response.status().as_u16();
        for value in response.headers().get_all(header::SET_COOKIE) {
            if let Ok(value) = value.to_str() {
                jar.keep(value);
            }
        }
        // Read the whole body: a real client waits for it too.
        let body = response.into_body().collect().await?.to_bytes();
        let code = if status >= 400 {
            Some(refusal_code(&body))
        } else {
            None
        };
        Ok((status, code))
    }
}

/// The `code` of a refusal's JSON body; `-` when the body is not one.
pub fn refusal_code(body: &[u8]) -> String {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("code")?.as_str().map(str::to_owned))
        .unwrap_or_else(|| "-".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_sandbox_cookies() {
        let mut jar = Jar::default();
        jar.keep("lang=de; Path=/");
        assert!(jar.is_empty());
        jar.keep("sandbox=abc; HttpOnly; SameSite=Lax; Path=/");
        jar.keep("__Host-sandbox=def; Secure; Path=/");
        jar.keep("sandbox=xyz; Path=/");
        assert_eq!(
            jar.header().as_deref(),
            Some("__Host-sandbox=def; sandbox=xyz")
        );
    }

    #[test]
    fn refusal_codes() {
        assert_eq!(
            refusal_code(br#"{"code":"unavailable","status":503,"message":"x"}"#),
            "unavailable"
        );
        assert_eq!(refusal_code(b"<html>"), "-");
    }
}
