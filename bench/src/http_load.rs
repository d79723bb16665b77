//! The playground under load: learners, each with its own sandbox, over HTTP/1.1 keep-alive.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http::{Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::stats::Samples;

#[derive(Clone)]
pub struct Client {
    base: String,
    http: HyperClient<HttpConnector, Full<Bytes>>,
}

pub struct Answer {
    pub status: StatusCode,
    pub cookie: Option<String>,
}

impl Client {
    pub fn new(base: &str) -> Self {
        let http = HyperClient::builder(TokioExecutor::new())
            .pool_max_idle_per_host(256)
            .build_http();
        Client {
            base: base.trim_end_matches('/').to_owned(),
            http,
        }
    }

    async fn send(&self, request: Request<Full<Bytes>>) -> Result<Answer> {
        let response = self.http.request(request).await?;
        let status = response.status();
        let cookie = response
            .headers()
            .get_all(header::SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find(|v| v.starts_with("sandbox="))
            .and_then(|v| v.split(';').next())
            .map(str::to_owned);
        // Read the whole body: a real client waits for it too.
        response.into_body().collect().await?;
        Ok(Answer { status, cookie })
    }

    pub async fn post(&self, path: &str, form: &str, cookie: Option<&str>) -> Result<Answer> {
        let mut request = Request::post(format!("{}{path}", self.base))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ACCEPT, "application/json");
        if let Some(c) = cookie {
            request = request.header(header::COOKIE, c);
        }
        self.send(request.body(Full::new(Bytes::from(form.to_owned())))?)
            .await
    }

    pub async fn page(&self, cookie: &str) -> Result<Answer> {
        let request = Request::get(format!("{}/", self.base))
            .header(header::COOKIE, cookie)
            .body(Full::new(Bytes::new()))?;
        self.send(request).await
    }

    /// Whether the server answers its health check.
    pub async fn health(&self) -> bool {
        let Ok(request) =
            Request::get(format!("{}/healthz", self.base)).body(Full::new(Bytes::new()))
        else {
            return false;
        };
        matches!(self.send(request).await, Ok(a) if a.status == StatusCode::OK)
    }

    /// A new learner: the first action (a reset) claims a sandbox and sets its cookie; looking
    /// claims none.
    pub async fn new_learner(&self) -> Result<String> {
        let answer = self.post("/api/reset", "", None).await?;
        if answer.status != StatusCode::OK {
            bail!("a new learner got {}", answer.status);
        }
        answer.cookie.context("no sandbox cookie for a new learner")
    }
}

/// What one load step measured.
pub struct Load {
    /// An attempt plus the reset that follows it.
    pub cycles: Samples,
    /// The attempt alone.
    pub attempts: Samples,
}

/// `learners` learners do attempt + reset cycles for `duration`.
pub async fn learners(client: &Client, cookies: &[String], duration: Duration) -> Result<Load> {
    let start = Instant::now();
    let deadline = start + duration;
    let mut tasks = tokio::task::JoinSet::new();
    for cookie in cookies {
        let client = client.clone();
        let cookie = cookie.clone();
        tasks.spawn(async move {
            let mut cycles = Samples::default();
            let mut attempts = Samples::default();
            while Instant::now() < deadline {
                let t0 = Instant::now();
                let attempt = client
                    .post("/api/attempt", "crash=none", Some(&cookie))
                    .await;
                let t1 = Instant::now();
                let reset = client.post("/api/reset", "", Some(&cookie)).await;
                let t2 = Instant::now();
                let ok = |a: &Result<Answer>| matches!(a, Ok(a) if a.status == StatusCode::OK);
                if ok(&attempt) && ok(&reset) {
                    attempts.micros.push((t1 - t0).as_micros() as u64);
                    cycles.micros.push((t2 - t0).as_micros() as u64);
                } else {
                    cycles.errors += 1;
                }
            }
            (cycles, attempts)
        });
    }
    let mut load = Load {
        cycles: Samples::default(),
        attempts: Samples::default(),
    };
    while let Some(joined) = tasks.join_next().await {
        let (cycles, attempts) = joined?;
        load.cycles.merge(cycles);
        load.attempts.merge(attempts);
    }
    load.cycles.elapsed = start.elapsed();
    load.attempts.elapsed = load.cycles.elapsed;
    Ok(load)
}

/// Server-side rendered page loads, one after another, for `duration`.
pub async fn pages(client: &Client, cookie: &str, duration: Duration) -> Result<Samples> {
    let start = Instant::now();
    let mut samples = Samples::default();
    while start.elapsed() < duration {
        let t0 = Instant::now();
        match client.page(cookie).await {
            Ok(a) if a.status == StatusCode::OK => {
                samples.micros.push(t0.elapsed().as_micros() as u64)
            }
            _ => samples.errors += 1,
        }
    }
    samples.elapsed = start.elapsed();
    Ok(samples)
}
