//! The LTI routes: the key set, the OIDC login initiation and the resource link launch.
//!
//! Every refusal is a page in the learner's language that says why, logged with its reason,
//! and leaves nothing behind: no sandbox is claimed and no link is stored.

use std::collections::HashMap;

use app::i18n::Locale;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderValue, Request, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use outbox_lab::pg::LabError;
use serde::Deserialize;
use serde_json::Value;

use super::Lti;
use super::nonce::random_hex;
use super::platform_keys::KeySetError;
use crate::body_limit::API_BODY_LIMIT;
use crate::server_state::ServerState;

pub const LOGIN_PATH: &str = "/lti/login";
pub const LAUNCH_PATH: &str = "/lti/launch";
pub const JWKS_PATH: &str = "/.well-known/jwks.json";

/// How long a login's state and nonce wait for their launch.
const LOGIN_VALID_SECS: f64 = 600.0;
/// Clock difference allowed between the platform and this server.
const LEEWAY_SECS: u64 = 60;

/// Why a login or a launch is refused (the log's reason; the page says it in the learner's
/// language by [`Refusal::code`]).
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("the login initiation lacks {0}")]
    LoginMissing(&'static str),
    #[error("no registration for issuer {issuer:?} and client_id {client_id:?}")]
    UnknownPlatform {
        issuer: String,
        client_id: Option<String>,
    },
    #[error("target_link_uri {0:?} is not this playground")]
    WrongTarget(String),
    #[error("the launch has no state")]
    StateMissing,
    #[error("the launch's state was never issued or has expired")]
    StateUnknown,
    #[error("the launch's state was already used")]
    StateUsed,
    #[error("the launch has no id_token")]
    TokenMissing,
    #[error("the id_token is malformed: {0}")]
    Malformed(String),
    #[error("the id_token's signature does not verify")]
    BadSignature,
    #[error(transparent)]
    KeySet(#[from] KeySetError),
    #[error("the id_token's iss is not the login's platform")]
    WrongIssuer,
    #[error("the id_token is not for this tool: {0}")]
    WrongAudience(String),
    #[error("the id_token is expired or not yet valid: {0}")]
    Expired(String),
    #[error("the id_token's nonce was already used")]
    NonceReplayed,
    #[error("the id_token's nonce is not its login's")]
    NonceMismatch,
    #[error("deployment_id {0:?} is not registered")]
    UnknownDeployment(String),
    #[error("not a resource link launch of LTI 1.3.0: {0}")]
    WrongMessage(String),
    #[error("the id_token lacks {0}")]
    MissingClaim(String),
    #[error("no sandbox for the launch: {0}")]
    NoSandbox(#[from] LabError),
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
}

impl Refusal {
    /// The stable code the page's text is chosen by.
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::LoginMissing(_) => "login_missing_params",
            Refusal::UnknownPlatform { .. } => "unknown_platform",
            Refusal::WrongTarget(_) => "wrong_target",
            Refusal::StateMissing => "state_missing",
            Refusal::StateUnknown => "state_unknown",
            Refusal::StateUsed => "state_used",
            Refusal::TokenMissing => "token_missing",
            Refusal::Malformed(_) | Refusal::KeySet(KeySetError::Unusable { .. }) => "malformed",
            Refusal::BadSignature => "bad_signature",
            Refusal::KeySet(KeySetError::UnknownKid { .. }) => "unknown_key",
            Refusal::KeySet(KeySetError::Unreachable { .. }) => "keys_unreachable",
            Refusal::WrongIssuer => "wrong_issuer",
            Refusal::WrongAudience(_) => "wrong_audience",
            Refusal::Expired(_) => "expired",
            Refusal::NonceReplayed => "nonce_replayed",
            Refusal::NonceMismatch => "nonce_mismatch",
            Refusal::UnknownDeployment(_) => "unknown_deployment",
            Refusal::WrongMessage(_) => "wrong_message",
            Refusal::MissingClaim(_) => "missing_claim",
            Refusal::NoSandbox(LabError::Unavailable(_)) | Refusal::Database(_) => "unavailable",
            Refusal::NoSandbox(_) => "no_sandbox",
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            Refusal::LoginMissing(_)
            | Refusal::WrongTarget(_)
            | Refusal::StateMissing
            | Refusal::StateUnknown
            | Refusal::TokenMissing
            | Refusal::Malformed(_)
            | Refusal::WrongMessage(_)
            | Refusal::MissingClaim(_) => StatusCode::BAD_REQUEST,
            Refusal::StateUsed
            | Refusal::BadSignature
            | Refusal::KeySet(KeySetError::UnknownKid { .. } | KeySetError::Unusable { .. })
            | Refusal::WrongIssuer
            | Refusal::WrongAudience(_)
            | Refusal::Expired(_)
            | Refusal::NonceReplayed
            | Refusal::NonceMismatch => StatusCode::UNAUTHORIZED,
            Refusal::UnknownPlatform { .. } | Refusal::UnknownDeployment(_) => {
                StatusCode::FORBIDDEN
            }
            Refusal::KeySet(KeySetError::Unreachable { .. }) => StatusCode::BAD_GATEWAY,
            Refusal::NoSandbox(_) | Refusal::Database(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

fn not_found() -> Response {
    StatusCode::NOT_FOUND.into_response()
}

/// `GET /.well-known/jwks.json`: the tool's public key.
pub async fn jwks(State(state): State<ServerState>) -> Response {
    let Some(lti) = &state.lti else {
        return not_found();
    };
    let mut response = axum::Json(lti.key.jwks()).into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    response
}

/// The login's and the launch's parameters: the query's, then a form body's.
async fn parameters(request: Request<Body>) -> (http::request::Parts, HashMap<String, String>) {
    let (parts, body) = request.into_parts();
    let mut params: HashMap<String, String> =
        form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes())
            .into_owned()
            .collect();
    let is_form = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    if is_form {
        let body: Bytes = axum::body::to_bytes(body, API_BODY_LIMIT)
            .await
            .unwrap_or_default();
        for (k, v) in form_urlencoded::parse(&body).into_owned() {
            params.insert(k, v);
        }
    }
    (parts, params)
}

/// The language asked for by `lang=` on the request (the registered URL may carry it).
fn asked_locale(params: &HashMap<String, String>) -> Option<Locale> {
    params
        .get(app::locale::LANG_PARAM)
        .and_then(|l| app::locale::parse(l))
}

/// `GET|POST /lti/login`: OIDC third-party login initiation.
pub async fn login(State(state): State<ServerState>, request: Request<Body>) -> Response {
    let Some(lti) = state.lti.clone() else {
        return not_found();
    };
    let (parts, params) = parameters(request).await;
    let asked = asked_locale(&params);
    match login_redirect(&state, &lti, &parts, &params, asked).await {
        Ok(target) => redirect(StatusCode::FOUND, &target),
        Err(refusal) => refusal_page(&refusal, asked.unwrap_or_default(), LOGIN_PATH),
    }
}

async fn login_redirect(
    state: &ServerState,
    lti: &Lti,
    parts: &http::request::Parts,
    params: &HashMap<String, String>,
    asked: Option<Locale>,
) -> Result<String, Refusal> {
    let required = |name: &'static str| {
        params
            .get(name)
            .filter(|v| !v.trim().is_empty())
            .ok_or(Refusal::LoginMissing(name))
    };
    let issuer = required("iss")?;
    let login_hint = required("login_hint")?;
    let target = required("target_link_uri")?;
    let client_id = params.get("client_id").filter(|v| !v.is_empty());
    let registration = lti
        .registry
        .find(issuer, client_id.map(String::as_str))
        .ok_or_else(|| Refusal::UnknownPlatform {
            issuer: issuer.clone(),
            client_id: client_id.cloned(),
        })?;
    let web = &state.app.web;
    let ours = app::backend::request::origin_of(target)
        .is_some_and(|origin| web.is_own_origin(&origin, &parts.headers));
    let Some(own) = own_origin(state, &parts.headers).filter(|_| ours) else {
        return Err(Refusal::WrongTarget(target.clone()));
    };
    let login_state = random_hex();
    let nonce = random_hex();
    sqlx::query(
        "WITH gone AS (DELETE FROM lab.lti_logins WHERE expires_at < now() - interval '1 day') \
         INSERT INTO lab.lti_logins (state, nonce, issuer, client_id, lang, expires_at) \
         VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))",
    )
    .bind(&login_state)
    .bind(&nonce)
    .bind(&registration.issuer)
    .bind(&registration.client_id)
    .bind(asked.map(app::locale::id))
    .bind(LOGIN_VALID_SECS)
    .execute(state.app.lab.pool())
    .await?;
    let mut query = form_urlencoded::Serializer::new(String::new());
    query
        .append_pair("scope", "openid")
        .append_pair("response_type", "id_token")
        .append_pair("response_mode", "form_post")
        .append_pair("prompt", "none")
        .append_pair("client_id", &registration.client_id)
        .append_pair("redirect_uri", &format!("{own}{LAUNCH_PATH}"))
        .append_pair("login_hint", login_hint)
        .append_pair("state", &login_state)
        .append_pair("nonce", &nonce);
    if let Some(hint) = params.get("lti_message_hint") {
        query.append_pair("lti_message_hint", hint);
    }
    let separator = if registration.auth_login_url.contains('?') {
        '&'
    } else {
        '?'
    };
    Ok(format!(
        "{}{separator}{}",
        registration.auth_login_url,
        query.finish()
    ))
}

/// This playground's origin: the configured public one, else the request's own host.
fn own_origin(state: &ServerState, headers: &http::HeaderMap) -> Option<String> {
    let web = &state.app.web;
    if let Some(origin) = &web.public_origin {
        return Some(origin.clone());
    }
    let host = headers.get(header::HOST)?.to_str().ok()?;
    let scheme = if web.is_https(headers) {
        "https"
    } else {
        "http"
    };
    Some(format!("{scheme}://{host}"))
}

/// The login a launch's state names, used now.
struct Login {
    nonce: String,
    issuer: String,
    client_id: String,
    lang: Option<String>,
}

#[derive(Deserialize)]
struct ResourceLink {
    id: Option<String>,
}

#[derive(Deserialize)]
struct Ags {
    lineitem: Option<String>,
    #[serde(default)]
    scope: Vec<String>,
}

#[derive(Deserialize)]
struct Presentation {
    locale: Option<String>,
}

/// The id_token's claims the launch reads (signature, iss, aud and exp are checked by the
/// JWT library before these are looked at).
#[derive(Deserialize)]
struct Claims {
    sub: Option<String>,
    #[serde(default)]
    aud: Value,
    azp: Option<String>,
    iat: Option<f64>,
    nonce: Option<String>,
    #[serde(rename = "https://purl.imsglobal.org/spec/lti/claim/deployment_id")]
    deployment_id: Option<String>,
    #[serde(rename = "https://purl.imsglobal.org/spec/lti/claim/message_type")]
    message_type: Option<String>,
    #[serde(rename = "https://purl.imsglobal.org/spec/lti/claim/version")]
    version: Option<String>,
    #[serde(rename = "https://purl.imsglobal.org/spec/lti/claim/resource_link")]
    resource_link: Option<ResourceLink>,
    #[serde(rename = "https://purl.imsglobal.org/spec/lti/claim/custom")]
    custom: Option<serde_json::Map<String, Value>>,
    #[serde(rename = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint")]
    ags: Option<Ags>,
    #[serde(rename = "https://purl.imsglobal.org/spec/lti/claim/launch_presentation")]
    presentation: Option<Presentation>,
}

/// `POST /lti/launch`: the platform's form post of `id_token` and `state`.
pub async fn launch(State(state): State<ServerState>, request: Request<Body>) -> Response {
    let Some(lti) = state.lti.clone() else {
        return not_found();
    };
    let (parts, params) = parameters(request).await;
    let mut locale = asked_locale(&params);
    match accept(&state, &lti, &parts, &params, &mut locale).await {
        Ok(target) => redirect(StatusCode::SEE_OTHER, &target),
        Err(refusal) => refusal_page(&refusal, locale.unwrap_or_default(), LAUNCH_PATH),
    }
}

/// Checks the launch; the embed's address with the learner's sandbox token when it holds.
async fn accept(
    state: &ServerState,
    lti: &Lti,
    parts: &http::request::Parts,
    params: &HashMap<String, String>,
    locale: &mut Option<Locale>,
) -> Result<String, Refusal> {
    let login_state = params
        .get("state")
        .filter(|s| !s.is_empty())
        .ok_or(Refusal::StateMissing)?;
    let login = use_login(state, login_state).await?;
    if locale.is_none() {
        *locale = login.lang.as_deref().and_then(app::locale::parse);
    }
    let id_token = params
        .get("id_token")
        .filter(|s| !s.is_empty())
        .ok_or(Refusal::TokenMissing)?;
    let registration = lti
        .registry
        .find(&login.issuer, Some(&login.client_id))
        .ok_or_else(|| Refusal::UnknownPlatform {
            issuer: login.issuer.clone(),
            client_id: Some(login.client_id.clone()),
        })?;
    let claims = verify(lti, registration, id_token).await?;
    if claims.nonce.as_deref() != Some(login.nonce.as_str()) {
        return Err(match &claims.nonce {
            Some(nonce) if nonce_used(state, nonce).await? => Refusal::NonceReplayed,
            _ => Refusal::NonceMismatch,
        });
    }
    let deployment = claims
        .deployment_id
        .clone()
        .ok_or_else(|| Refusal::MissingClaim("deployment_id".to_owned()))?;
    if !registration.deployment_ids.contains(&deployment) {
        return Err(Refusal::UnknownDeployment(deployment));
    }
    if claims.message_type.as_deref() != Some("LtiResourceLinkRequest") {
        return Err(Refusal::WrongMessage(format!(
            "message_type {:?}",
            claims.message_type
        )));
    }
    if claims.version.as_deref() != Some("1.3.0") {
        return Err(Refusal::WrongMessage(format!(
            "version {:?}",
            claims.version
        )));
    }
    let subject = claims
        .sub
        .clone()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| Refusal::MissingClaim("sub".to_owned()))?;
    let link = claims
        .resource_link
        .as_ref()
        .and_then(|l| l.id.clone())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| Refusal::MissingClaim("resource_link.id".to_owned()))?;
    let custom = claims.custom.clone().unwrap_or_default();
    let lang = locale
        .or_else(|| {
            custom
                .get("lang")
                .and_then(Value::as_str)
                .and_then(app::locale::parse)
        })
        .or_else(|| {
            let asked = claims.presentation.as_ref()?.locale.as_deref()?;
            app::locale::parse(asked.get(..2)?)
        })
        .unwrap_or_default();
    *locale = Some(lang);

    // Everything checks: the learner's sandbox, found or claimed, and the link kept.
    let lab = &state.app.lab;
    let token = lab.frame_tokens().await?.derive(
        "lti-link-v1",
        &[&registration.issuer, &deployment, &subject, &link],
    );
    if !lab.token_has_sandbox(&token).await? {
        let client = state
            .app
            .web
            .client_address(parts)
            .unwrap_or_else(|| "unknown".to_owned());
        lab.claim_sandbox_for(token.clone(), Some(&client)).await?;
    }
    let (lineitem, scope) = match &claims.ags {
        // Only a line item the tool may post scores to is kept for passback.
        Some(ags) => (
            ags.lineitem
                .clone()
                .filter(|_| ags.scope.iter().any(|s| s == super::passback::SCORE_SCOPE)),
            ags.scope.clone(),
        ),
        None => (None, Vec::new()),
    };
    // A launch with a new line item makes the learner's score due again (for that item).
    sqlx::query(
        "INSERT INTO lab.lti_links (issuer, deployment_id, subject, resource_link_id, \
         token_hash, ags_lineitem, ags_scope, custom, client_id) \
         VALUES ($1, $2, $3, $4, sha256(decode($5, 'hex')), $6, $7, $8, $9) \
         ON CONFLICT (issuer, deployment_id, subject, resource_link_id) DO UPDATE \
         SET token_hash = EXCLUDED.token_hash, ags_lineitem = EXCLUDED.ags_lineitem, \
             ags_scope = EXCLUDED.ags_scope, custom = EXCLUDED.custom, \
             client_id = EXCLUDED.client_id, last_launch_at = now(), \
             score_version = lab.lti_links.score_version \
                 + (EXCLUDED.ags_lineitem IS DISTINCT FROM lab.lti_links.ags_lineitem \
                    AND EXCLUDED.ags_lineitem IS NOT NULL)::integer",
    )
    .bind(&registration.issuer)
    .bind(&deployment)
    .bind(&subject)
    .bind(&link)
    .bind(token.as_str())
    .bind(lineitem)
    .bind(scope)
    .bind(sqlx::types::Json(Value::Object(custom.clone())))
    .bind(&registration.client_id)
    .execute(lab.pool())
    .await?;
    tracing::info!(
        issuer = %registration.issuer,
        deployment = %deployment,
        resource_link = %link,
        "LTI launch accepted"
    );

    let mut query = form_urlencoded::Serializer::new(String::new());
    query.append_pair(app::locale::LANG_PARAM, app::locale::id(lang));
    // The link's scenario: the function's mode (outbox, Trace A, Trace A publishing first).
    if let Some(mode) = custom.get("mode").and_then(Value::as_str)
        && outbox_lab::catalog::Mode::parse(mode).is_some()
    {
        query.append_pair(app::links::param::MODE, mode);
    }
    if let Some(quests) = custom.get("quest").and_then(Value::as_str)
        && quests.split(',').count() <= MAX_LINK_QUESTS
        && quests.split(',').all(is_quest_id)
    {
        query.append_pair("quest", quests);
    }
    Ok(format!(
        "{}?{}&{}={}",
        app::backend::session::EMBED_PATH,
        query.finish(),
        app::backend::session::FRAME_TOKEN_PARAM,
        token.as_str()
    ))
}

/// The most quests one link may ask for (its `quest` custom parameter, comma-separated).
const MAX_LINK_QUESTS: usize = 16;

/// A quest id as the quest file spells them; anything else is not passed on.
fn is_quest_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
}

/// Uses the login `state` names, once and within its time; says why not otherwise.
async fn use_login(state: &ServerState, login_state: &str) -> Result<Login, Refusal> {
    let pool = state.app.lab.pool();
    let used: Option<(String, String, String, Option<String>)> = sqlx::query_as(
        "UPDATE lab.lti_logins SET used_at = now() \
         WHERE state = $1 AND used_at IS NULL AND expires_at > now() \
         RETURNING nonce, issuer, client_id, lang",
    )
    .bind(login_state)
    .fetch_optional(pool)
    .await?;
    if let Some((nonce, issuer, client_id, lang)) = used {
        return Ok(Login {
            nonce,
            issuer,
            client_id,
            lang,
        });
    }
    let was_used: Option<bool> =
        sqlx::query_scalar("SELECT used_at IS NOT NULL FROM lab.lti_logins WHERE state = $1")
            .bind(login_state)
            .fetch_optional(pool)
            .await?;
    Err(match was_used {
        Some(true) => Refusal::StateUsed,
        _ => Refusal::StateUnknown,
    })
}

/// Whether `nonce` belongs to a login whose launch already happened.
async fn nonce_used(state: &ServerState, nonce: &str) -> Result<bool, Refusal> {
    let used: Option<bool> =
        sqlx::query_scalar("SELECT used_at IS NOT NULL FROM lab.lti_logins WHERE nonce = $1")
            .bind(nonce)
            .fetch_optional(state.app.lab.pool())
            .await?;
    Ok(used == Some(true))
}

/// Verifies the id_token: RS256 under the platform's key named by `kid`, its issuer, its
/// audience (and `azp`), its times.
async fn verify(
    lti: &Lti,
    registration: &super::Registration,
    id_token: &str,
) -> Result<Claims, Refusal> {
    let head =
        jsonwebtoken::decode_header(id_token).map_err(|e| Refusal::Malformed(e.to_string()))?;
    if head.alg != Algorithm::RS256 {
        return Err(Refusal::Malformed(format!("alg {:?}", head.alg)));
    }
    let kid = head
        .kid
        .ok_or_else(|| Refusal::Malformed("no kid in the header".to_owned()))?;
    let key = lti.platform_keys.key(&registration.jwks_url, &kid).await?;
    let mut validation = Validation::new(Algorithm::RS256);
    validation.leeway = LEEWAY_SECS;
    validation.set_issuer(&[&registration.issuer]);
    validation.set_audience(&[&registration.client_id]);
    validation.set_required_spec_claims(&["exp", "iat", "iss", "aud", "sub"]);
    let claims = jsonwebtoken::decode::<Claims>(id_token, &key, &validation)
        .map_err(|e| match e.kind() {
            ErrorKind::InvalidSignature => Refusal::BadSignature,
            ErrorKind::ExpiredSignature | ErrorKind::ImmatureSignature => {
                Refusal::Expired(e.to_string())
            }
            ErrorKind::InvalidIssuer => Refusal::WrongIssuer,
            ErrorKind::InvalidAudience => Refusal::WrongAudience("aud".to_owned()),
            ErrorKind::MissingRequiredClaim(claim) => Refusal::MissingClaim(claim.clone()),
            _ => Refusal::Malformed(e.to_string()),
        })?
        .claims;
    let audiences = match &claims.aud {
        Value::Array(all) => all.len(),
        _ => 1,
    };
    let azp_ok = match &claims.azp {
        Some(azp) => azp == &registration.client_id,
        None => audiences == 1,
    };
    if !azp_ok {
        return Err(Refusal::WrongAudience(format!("azp {:?}", claims.azp)));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    if claims.iat.is_some_and(|iat| iat > now + LEEWAY_SECS as f64) {
        return Err(Refusal::Expired("iat is in the future".to_owned()));
    }
    Ok(claims)
}

/// The refusal's page, in `locale`; the reason goes to the log.
fn refusal_page(refusal: &Refusal, locale: Locale, path: &str) -> Response {
    tracing::info!(
        path,
        code = refusal.code(),
        reason = %refusal,
        "refused an LTI request"
    );
    let (title, why, hint) = app::backend::errors::lti_refusal(locale, refusal.code());
    let page = format!(
        "<!DOCTYPE html>\n<html lang=\"{lang}\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title></head><body><main data-refusal=\"{code}\">\
         <h1>{title}</h1><p>{why}</p><p>{hint}</p></main></body></html>\n",
        lang = app::locale::id(locale),
        title = escape(&title),
        code = refusal.code(),
        why = escape(&why),
        hint = escape(&hint),
    );
    let mut response = (refusal.status(), Html(page)).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A redirect to `target` that no cache keeps (its address carries a state or a token).
fn redirect(status: StatusCode, target: &str) -> Response {
    let mut response = status.into_response();
    if let Ok(value) = HeaderValue::from_str(target) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
