//! Score passback (LTI Assignment and Grade Services): the learner's map, as a score, posted to
//! the line item of each graded link.
//!
//! The learner's action never waits for this. A change to the map marks the link due inside
//! the statement that records the change (a trigger, see the migration `lti_scores`); this
//! worker, one per server process, takes due links with `FOR UPDATE SKIP LOCKED` and a lease,
//! lets go of the connection, asks the platform's token endpoint for an access token (a
//! client-credentials grant with an assertion signed by the tool's key, kept until it
//! expires), posts the score, and only then marks it sent. A platform that is down leaves the
//! link due, retried with backoff; the score is computed when it is posted, so the learner's
//! latest map is what arrives, once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use outbox_lab::catalog::FailureRow;
use serde::Serialize;
use sqlx::PgPool;

use super::http::{LimitError, read_limited};
use super::{Lti, Registration};

/// The AGS scope that allows posting scores.
pub const SCORE_SCOPE: &str = "https://purl.imsglobal.org/spec/lti-ags/scope/score";
/// The media type of a score (AGS 2.0, section 3.4).
pub const SCORE_MEDIA_TYPE: &str = "application/vnd.ims.lis.v1.score+json";
const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// How long one request to a platform may take.
const REQUEST_LIMIT: Duration = Duration::from_secs(10);
/// The largest answer read from a platform's token endpoint.
const MAX_TOKEN_BYTES: usize = 64 * 1024;
/// A token this close to its expiry is not used any more.
const TOKEN_MARGIN: Duration = Duration::from_secs(30);
/// Links posted per round (each one request, one after the other).
const BATCH: i64 = 16;

/// How often and how patiently the worker posts.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// How often the worker looks for due links.
    pub poll: Duration,
    /// The first retry's delay; each failure doubles it, up to `max_backoff`.
    pub backoff: Duration,
    pub max_backoff: Duration,
    /// How long a taken link stays with this worker if the process dies while posting.
    pub lease: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            poll: Duration::from_secs(1),
            backoff: Duration::from_secs(2),
            max_backoff: Duration::from_secs(600),
            lease: Duration::from_secs(60),
        }
    }
}

/// Why one score was not posted (kept in `lab.lti_links.last_error` and logged).
#[derive(Debug, thiserror::Error)]
pub enum PassbackError {
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    #[error("no registration for issuer {issuer:?} and client {client_id:?} any more")]
    Unregistered {
        issuer: String,
        client_id: Option<String>,
    },
    #[error("the line item URL {0:?} is not a URL")]
    BadLineItem(String),
    #[error("the token endpoint {url}: {reason}")]
    Token { url: String, reason: String },
    #[error("the score endpoint {url}: {reason}")]
    Score { url: String, reason: String },
    #[error(transparent)]
    Key(#[from] super::keys::KeyError),
}

/// One due link as taken from the queue, with its map counted.
#[derive(Debug, sqlx::FromRow)]
struct Due {
    issuer: String,
    client_id: Option<String>,
    deployment_id: String,
    subject: String,
    resource_link_id: String,
    ags_lineitem: String,
    score_version: i32,
    /// When the map last changed, RFC 3339 in UTC with milliseconds (as PostgreSQL wrote it).
    changed_at: Option<String>,
    sent_score: Option<i32>,
    quest: Option<String>,
    attempts: i32,
    rows: i64,
    reached: Vec<String>,
}

/// The score of one learner on one link.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Score {
    pub user_id: String,
    pub score_given: i32,
    pub score_maximum: i32,
    pub activity_progress: &'static str,
    pub grading_progress: &'static str,
    pub timestamp: String,
}

/// What a link is graded on: the failure table, or the quests its `quest` custom parameter
/// names (those the quest file knows).
fn score_of(due: &Due, known_quests: &[String]) -> (i32, i32) {
    let asked: Vec<&str> = due
        .quest
        .as_deref()
        .unwrap_or("")
        .split(',')
        .filter(|q| known_quests.iter().any(|k| k == q))
        .collect();
    let (given, maximum) = if asked.is_empty() {
        (due.rows, FailureRow::ALL.len() as i64)
    } else {
        let reached = asked
            .iter()
            .filter(|q| due.reached.iter().any(|r| r == *q))
            .count();
        (reached as i64, asked.len() as i64)
    };
    let given = i32::try_from(given.min(maximum)).unwrap_or(0);
    let maximum = i32::try_from(maximum).unwrap_or(i32::MAX);
    // Starting over clears the map, not the grade the platform already holds.
    (given.max(due.sent_score.unwrap_or(0)).min(maximum), maximum)
}

struct CachedToken {
    token: String,
    until: Instant,
}

/// The worker's state: the HTTP client and the access tokens, per registration.
pub struct Passback {
    lti: Arc<Lti>,
    pool: PgPool,
    client: reqwest::Client,
    tokens: Mutex<HashMap<(String, String), CachedToken>>,
    known_quests: Vec<String>,
    timing: Timing,
}

impl Passback {
    pub fn new(
        lti: Arc<Lti>,
        pool: PgPool,
        known_quests: Vec<String>,
        timing: Timing,
    ) -> Result<Passback, reqwest::Error> {
        let client = reqwest::Client::builder()
            .timeout(REQUEST_LIMIT)
            .connect_timeout(REQUEST_LIMIT)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Passback {
            lti,
            pool,
            client,
            tokens: Mutex::new(HashMap::new()),
            known_quests,
            timing,
        })
    }

    /// Posts due scores forever, a round every `timing.poll`; errors are logged and retried.
    pub async fn run(self: Arc<Self>) {
        let mut every = tokio::time::interval(self.timing.poll);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            if let Err(e) = self.run_once().await {
                tracing::warn!(error = %e, "LTI score passback: could not read the queue");
            }
        }
    }

    /// One round: takes the due links (at most [`BATCH`]) and posts each; answers how many
    /// the platforms acknowledged.
    pub async fn run_once(&self) -> Result<usize, sqlx::Error> {
        let due = self.take_due().await?;
        let mut sent = 0;
        for link in due {
            match self.post(&link).await {
                Ok(score) => {
                    self.mark_sent(&link, score.score_given).await?;
                    tracing::info!(
                        issuer = %link.issuer,
                        resource_link = %link.resource_link_id,
                        score = score.score_given,
                        maximum = score.score_maximum,
                        "LTI score posted"
                    );
                    sent += 1;
                }
                Err(e) => {
                    tracing::warn!(
                        issuer = %link.issuer,
                        resource_link = %link.resource_link_id,
                        attempt = link.attempts + 1,
                        error = %e,
                        "LTI score not posted; retried later"
                    );
                    self.mark_failed(&link, &e.to_string()).await?;
                }
            }
        }
        Ok(sent)
    }

    /// Takes due links under a lease, in one statement, and counts each one's map.
    async fn take_due(&self) -> Result<Vec<Due>, sqlx::Error> {
        let rows: Vec<&str> = FailureRow::ALL.iter().map(|r| r.id()).collect();
        sqlx::query_as::<_, Due>(
            "WITH due AS ( \
                SELECT issuer, deployment_id, subject, resource_link_id FROM lab.lti_links \
                 WHERE score_version > sent_version AND next_attempt_at <= now() \
                   AND (lease_until IS NULL OR lease_until < now()) \
                 ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED) \
             UPDATE lab.lti_links l SET lease_until = now() + make_interval(secs => $3) \
               FROM due \
              WHERE (l.issuer, l.deployment_id, l.subject, l.resource_link_id) \
                  = (due.issuer, due.deployment_id, due.subject, due.resource_link_id) \
                AND l.ags_lineitem IS NOT NULL \
             RETURNING l.issuer, l.client_id, l.deployment_id, l.subject, l.resource_link_id, \
                l.ags_lineitem, l.score_version, l.sent_score, \
                to_char(coalesce(l.changed_at, now()) AT TIME ZONE 'UTC', \
                        'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') AS changed_at, \
                l.custom->>'quest' AS quest, l.attempts, \
                (SELECT count(*) FROM lab.explored e JOIN lab.sandboxes s USING (schema_name) \
                  WHERE s.token_hash = l.token_hash AND e.kind = 'row' AND e.id = ANY($1)) AS rows, \
                ARRAY(SELECT q.quest FROM lab.quest_progress q JOIN lab.sandboxes s USING (schema_name) \
                  WHERE s.token_hash = l.token_hash AND q.reached ORDER BY q.quest) AS reached",
        )
        .bind(&rows)
        .bind(BATCH)
        .bind(self.timing.lease.as_secs_f64())
        .fetch_all(&self.pool)
        .await
    }

    async fn post(&self, link: &Due) -> Result<Score, PassbackError> {
        let registration = self
            .lti
            .registry
            .find(&link.issuer, link.client_id.as_deref())
            .ok_or_else(|| PassbackError::Unregistered {
                issuer: link.issuer.clone(),
                client_id: link.client_id.clone(),
            })?;
        let (score_given, score_maximum) = score_of(link, &self.known_quests);
        let score = Score {
            user_id: link.subject.clone(),
            score_given,
            score_maximum,
            activity_progress: if score_given >= score_maximum {
                "Completed"
            } else {
                "InProgress"
            },
            grading_progress: "FullyGraded",
            timestamp: link.changed_at.clone().unwrap_or_default(),
        };
        let url = scores_url(&link.ags_lineitem)?;
        let token = self.access_token(registration).await?;
        let response = self
            .client
            .post(url.clone())
            .bearer_auth(&token)
            .header(reqwest::header::CONTENT_TYPE, SCORE_MEDIA_TYPE)
            .body(serde_json::to_vec(&score).unwrap_or_default())
            .send()
            .await
            .map_err(|e| PassbackError::Score {
                url: url.to_string(),
                reason: e.to_string(),
            })?;
        let status = response.status();
        if status == reqwest::StatusCode::UNAUTHORIZED
            && let Ok(mut tokens) = self.tokens.lock()
        {
            // The platform may have revoked it before its time: ask for a new one next time.
            tokens.remove(&token_key(registration));
        }
        if !status.is_success() {
            return Err(PassbackError::Score {
                url: url.to_string(),
                reason: format!("status {status}"),
            });
        }
        Ok(score)
    }

    /// An access token for the score scope from the platform's token endpoint, kept until
    /// shortly before it expires.
    async fn access_token(&self, registration: &Registration) -> Result<String, PassbackError> {
        let key = token_key(registration);
        if let Ok(tokens) = self.tokens.lock()
            && let Some(kept) = tokens.get(&key)
            && kept.until > Instant::now()
        {
            return Ok(kept.token.clone());
        }
        let failed = |reason: String| PassbackError::Token {
            url: registration.token_url.clone(),
            reason,
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let assertion = self.lti.key.sign(&serde_json::json!({
            "iss": registration.client_id,
            "sub": registration.client_id,
            "aud": registration.token_url,
            "iat": now,
            "exp": now + 300,
            "jti": super::nonce::random_hex(),
        }))?;
        let form = [
            ("grant_type", "client_credentials"),
            ("client_assertion_type", ASSERTION_TYPE),
            ("client_assertion", assertion.as_str()),
            ("scope", SCORE_SCOPE),
        ];
        let response = self
            .client
            .post(&registration.token_url)
            .header(reqwest::header::ACCEPT, "application/json")
            .form(&form)
            .send()
            .await
            .map_err(|e| failed(e.to_string()))?;
        let status = response.status();
        let body = read_limited(response, MAX_TOKEN_BYTES)
            .await
            .map_err(|e: LimitError| failed(e.to_string()))?;
        if !status.is_success() {
            return Err(failed(format!("status {status}")));
        }
        #[derive(serde::Deserialize)]
        struct Granted {
            access_token: String,
            expires_in: Option<u64>,
        }
        let granted: Granted = serde_json::from_slice(&body)
            .map_err(|e| failed(format!("not a token response: {e}")))?;
        let lifetime = Duration::from_secs(granted.expires_in.unwrap_or(3600));
        if let Ok(mut tokens) = self.tokens.lock() {
            tokens.insert(
                key,
                CachedToken {
                    token: granted.access_token.clone(),
                    until: Instant::now() + lifetime.saturating_sub(TOKEN_MARGIN),
                },
            );
        }
        Ok(granted.access_token)
    }

    async fn mark_sent(&self, link: &Due, score: i32) -> Result<(), sqlx::Error> {
        sqlx::query(
            "UPDATE lab.lti_links \
                SET sent_version = GREATEST(sent_version, $5), sent_score = $6, attempts = 0, \
                    next_attempt_at = now(), lease_until = NULL, last_error = NULL \
              WHERE issuer = $1 AND deployment_id = $2 AND subject = $3 AND resource_link_id = $4",
        )
        .bind(&link.issuer)
        .bind(&link.deployment_id)
        .bind(&link.subject)
        .bind(&link.resource_link_id)
        .bind(link.score_version)
        .bind(score)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn mark_failed(&self, link: &Due, error: &str) -> Result<(), sqlx::Error> {
        let base = self.timing.backoff.as_secs_f64();
        let cap = self.timing.max_backoff.as_secs_f64();
        sqlx::query(
            "UPDATE lab.lti_links \
                SET attempts = attempts + 1, lease_until = NULL, last_error = left($5, 500), \
                    next_attempt_at = now() + make_interval(secs => \
                        least($7, $6 * power(2, least(attempts, 30)))) \
              WHERE issuer = $1 AND deployment_id = $2 AND subject = $3 AND resource_link_id = $4",
        )
        .bind(&link.issuer)
        .bind(&link.deployment_id)
        .bind(&link.subject)
        .bind(&link.resource_link_id)
        .bind(error)
        .bind(base)
        .bind(cap)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}

fn token_key(registration: &Registration) -> (String, String) {
    (registration.issuer.clone(), registration.client_id.clone())
}

/// The line item's scores endpoint: its path with `/scores` added, its query kept (AGS 2.0,
/// section 3.4.1).
pub fn scores_url(lineitem: &str) -> Result<reqwest::Url, PassbackError> {
    let mut url =
        reqwest::Url::parse(lineitem).map_err(|_| PassbackError::BadLineItem(lineitem.into()))?;
    if !matches!(url.scheme(), "https" | "http") {
        return Err(PassbackError::BadLineItem(lineitem.into()));
    }
    let path = format!("{}/scores", url.path().trim_end_matches('/'));
    url.set_path(&path);
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scores_endpoint_keeps_the_line_items_query() {
        assert_eq!(
            scores_url("https://lms.example.org/api/lineitems/7?type_id=3")
                .unwrap()
                .as_str(),
            "https://lms.example.org/api/lineitems/7/scores?type_id=3"
        );
        assert_eq!(
            scores_url("http://localhost:9/lineitems/1/")
                .unwrap()
                .as_str(),
            "http://localhost:9/lineitems/1/scores"
        );
        assert!(scores_url("not a url").is_err());
        assert!(scores_url("ftp://x/1").is_err());
    }

    fn due(quest: Option<&str>, rows: i64, reached: &[&str], sent: Option<i32>) -> Due {
        Due {
            issuer: "i".into(),
            client_id: None,
            deployment_id: "d".into(),
            subject: "s".into(),
            resource_link_id: "r".into(),
            ags_lineitem: "http://localhost/l".into(),
            score_version: 1,
            changed_at: None,
            sent_score: sent,
            quest: quest.map(str::to_owned),
            attempts: 0,
            rows,
            reached: reached.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn a_score_counts_what_the_link_asks_for_and_never_goes_down() {
        let known = vec!["a".to_owned(), "b".to_owned()];
        let six = FailureRow::ALL.len() as i32;
        assert_eq!(score_of(&due(None, 2, &[], None), &known), (2, six));
        assert_eq!(score_of(&due(Some("a,b"), 5, &["b"], None), &known), (1, 2));
        // An unknown quest is not asked for; none known leaves the failure table.
        assert_eq!(
            score_of(&due(Some("a,zzz"), 0, &["a"], None), &known),
            (1, 1)
        );
        assert_eq!(score_of(&due(Some("zzz"), 3, &[], None), &known), (3, six));
        // After starting over the map is empty again, and the grade stays.
        assert_eq!(score_of(&due(None, 1, &[], Some(4)), &known), (4, six));
    }
}
