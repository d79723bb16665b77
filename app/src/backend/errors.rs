//! Errors as the learner sees them: a status code, a stable code and a sentence in their
//! language. Details of server-side failures stay in the server log.

use http::StatusCode;
use leptos_i18n::td_string;
use outbox_lab::catalog::{CommitFate, CrashPoint, Mistake, Mode};
use outbox_lab::input::InputError;
use outbox_lab::pg::LabError;

use crate::api_error::ApiError;

impl ApiError {
    /// An answer with this status, code and sentence; the response being built takes the
    /// status (see [`set_status`]).
    pub fn new(status: StatusCode, code: &str, message: String) -> Self {
        set_status(status);
        ApiError {
            code: code.to_owned(),
            status: status.as_u16(),
            message,
        }
    }
}

/// Every refusal code the API and the stepper's socket can answer, with its HTTP status (none
/// for a code only the socket sends). The README's table of refusal codes is held against this
/// list by a test, and so is every code the mappings below produce.
pub const REFUSAL_CODES: &[(&str, Option<u16>)] = &[
    ("bad_request", Some(400)),
    ("unknown_crash_point", Some(422)),
    ("unknown_commit_fate", Some(422)),
    ("empty_event_id", Some(422)),
    ("event_id_too_long", Some(422)),
    ("event_id_control_char", Some(422)),
    ("payload_too_long", Some(422)),
    ("payload_nul_byte", Some(422)),
    ("payload_text_too_large", Some(422)),
    ("unknown_mode", Some(422)),
    ("unknown_mistake", Some(422)),
    ("crash_point_not_in_mode", Some(422)),
    ("mistakes_need_outbox", Some(422)),
    ("both_outside_tx", Some(422)),
    ("mistake_not_in_race", Some(422)),
    ("unknown_prediction", Some(422)),
    ("unknown_value", Some(422)),
    ("unknown_field", Some(422)),
    ("unsupported_content_type", Some(415)),
    ("cross_site", Some(403)),
    ("no_run", Some(404)),
    ("no_such_session", Some(404)),
    ("nothing_to_reconcile", Some(409)),
    ("nothing_to_share", Some(409)),
    ("unknown_quest", Some(404)),
    ("unknown_answer", Some(422)),
    ("quest_not_reached", Some(409)),
    ("no_author_page", Some(404)),
    ("author_token_wrong", Some(403)),
    ("replay_too_large", Some(413)),
    ("replay_not_found", Some(404)),
    ("share_rate_limited", Some(429)),
    ("step_busy", Some(409)),
    ("step_in_progress", Some(409)),
    ("sandbox_gone", Some(410)),
    ("rate_limited", Some(429)),
    ("sandbox_rate_limited", Some(429)),
    ("client_limit", Some(429)),
    ("internal", Some(500)),
    ("relay_unsupported", Some(501)),
    ("unavailable", Some(503)),
    ("sandbox_limit", Some(503)),
    ("step_limit", Some(503)),
    ("busy", Some(503)),
    ("step_not_now", None),
    ("step_bad_fate", None),
    ("step_bad_command", None),
    ("step_too_fast", None),
];

impl ApiError {
    pub fn from_lab(err: LabError) -> Self {
        Self::from_lab_in(err, crate::locale::current())
    }

    /// [`ApiError::from_lab`] in the language `l` (outside a server function).
    pub fn from_lab_in(err: LabError, l: crate::i18n::Locale) -> Self {
        let (status, code, message): (StatusCode, &str, &str) = match &err {
            LabError::Unavailable(_)
            | LabError::BackendLingers { .. }
            | LabError::LockWaitNotSeen { .. } => (
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                td_string!(l, errors.unavailable),
            ),
            LabError::SandboxGone(_) => (
                StatusCode::GONE,
                "sandbox_gone",
                td_string!(l, errors.sandbox_gone),
            ),
            LabError::SandboxLimit(_) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "sandbox_limit",
                td_string!(l, errors.sandbox_limit),
            ),
            LabError::SandboxRateLimited => (
                StatusCode::TOO_MANY_REQUESTS,
                "sandbox_rate_limited",
                td_string!(l, errors.sandbox_rate_limited),
            ),
            LabError::RateLimited => (
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                td_string!(l, errors.busy),
            ),
            LabError::NothingToReconcile => (
                StatusCode::CONFLICT,
                "nothing_to_reconcile",
                td_string!(l, errors.nothing_to_reconcile),
            ),
            LabError::StepBusy => (
                StatusCode::CONFLICT,
                "step_busy",
                td_string!(l, errors.step_busy),
            ),
            LabError::StepLimit => (
                StatusCode::SERVICE_UNAVAILABLE,
                "step_limit",
                td_string!(l, errors.step_limit),
            ),
            LabError::Busy => (
                StatusCode::SERVICE_UNAVAILABLE,
                "busy",
                td_string!(l, errors.server_busy),
            ),
            LabError::ClientLimit => (
                StatusCode::TOO_MANY_REQUESTS,
                "client_limit",
                td_string!(l, errors.client_limit),
            ),
            LabError::StepInProgress => (
                StatusCode::CONFLICT,
                "step_in_progress",
                td_string!(l, errors.step_in_progress),
            ),
            LabError::NothingToShare => (
                StatusCode::CONFLICT,
                "nothing_to_share",
                td_string!(l, errors.nothing_to_share),
            ),
            LabError::ReplayTooLarge { .. } => (
                StatusCode::PAYLOAD_TOO_LARGE,
                "replay_too_large",
                td_string!(l, errors.replay_too_large),
            ),
            LabError::ShareRateLimited => (
                StatusCode::TOO_MANY_REQUESTS,
                "share_rate_limited",
                td_string!(l, errors.share_rate_limited),
            ),
            LabError::UnknownQuest(_) => (
                StatusCode::NOT_FOUND,
                "unknown_quest",
                td_string!(l, errors.unknown_quest),
            ),
            LabError::UnknownAnswer { .. } => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "unknown_answer",
                td_string!(l, errors.unknown_answer),
            ),
            LabError::QuestNotReached(_) => (
                StatusCode::CONFLICT,
                "quest_not_reached",
                td_string!(l, errors.quest_not_reached),
            ),
            LabError::RelayUnsupported => (
                StatusCode::NOT_IMPLEMENTED,
                "relay_unsupported",
                td_string!(l, errors.relay_unsupported),
            ),
            LabError::Database(_)
            | LabError::Relay(_)
            | LabError::Config(_)
            | LabError::Report(_)
            | LabError::Migrate(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                td_string!(l, errors.internal),
            ),
        };
        if status.is_server_error() {
            tracing::error!(error = %err, code, "action failed");
        } else {
            tracing::info!(error = %err, code, "action refused");
        }
        ApiError::new(status, code, message.to_owned())
    }

    pub fn from_input(err: InputError) -> Self {
        Self::from_input_in(err, crate::locale::current())
    }

    /// [`ApiError::from_input`] in the language `l` (outside a server function).
    pub fn from_input_in(err: InputError, l: crate::i18n::Locale) -> Self {
        let message = match &err {
            InputError::UnknownCrashPoint(v) => {
                let allowed = ids(CrashPoint::ALL.iter().map(|c| c.id()));
                td_string!(l, errors.unknown_crash_point, value = v, allowed = allowed).to_string()
            }
            InputError::UnknownCommitFate(v) => {
                let allowed = ids(CommitFate::ALL.iter().map(|f| f.id()));
                td_string!(l, errors.unknown_commit_fate, value = v, allowed = allowed).to_string()
            }
            InputError::EmptyEventId => td_string!(l, errors.empty_event_id).to_owned(),
            InputError::EventIdTooLong => td_string!(l, errors.event_id_too_long).to_owned(),
            InputError::EventIdControlChar => {
                td_string!(l, errors.event_id_control_char).to_owned()
            }
            InputError::PayloadTooLong => td_string!(l, errors.payload_too_long).to_owned(),
            InputError::PayloadNulByte => td_string!(l, errors.payload_nul_byte).to_owned(),
            InputError::PayloadTextTooLarge => {
                td_string!(l, errors.payload_text_too_large).to_owned()
            }
            InputError::UnknownMode(v) => {
                let allowed = ids(Mode::ALL.iter().map(|m| m.id()));
                td_string!(l, errors.unknown_mode, value = v, allowed = allowed).to_string()
            }
            InputError::UnknownMistake(v) => {
                let allowed = ids(Mistake::ALL.iter().map(|m| m.id()));
                td_string!(l, errors.unknown_mistake, value = v, allowed = allowed).to_string()
            }
            InputError::CrashPointNotInMode { mode, crash } => {
                let allowed = ids(mode.crash_points().iter().map(|c| c.id()));
                let mode = crate::texts::mode_label(l, *mode);
                let crash = crate::texts::crash_label(l, *crash);
                td_string!(
                    l,
                    errors.crash_point_not_in_mode,
                    mode = mode,
                    crash = crash,
                    allowed = allowed
                )
                .to_string()
            }
            InputError::MistakesNeedOutbox(mode) => {
                let mode = crate::texts::mode_label(l, *mode);
                td_string!(l, errors.mistakes_need_outbox, mode = mode).to_string()
            }
            InputError::BothOutsideTx => td_string!(l, errors.both_outside_tx).to_owned(),
            InputError::MistakeNotInRace(m) => {
                td_string!(l, errors.mistake_not_in_race, value = m.id()).to_string()
            }
            InputError::UnknownPrediction { field, value } => {
                let allowed = outbox_lab::prediction::Item::ALL
                    .iter()
                    .find(|i| i.field() == *field)
                    .map(|i| ids(i.values().iter().copied()))
                    .unwrap_or_default();
                td_string!(
                    l,
                    errors.unknown_prediction,
                    field = field,
                    value = value,
                    allowed = allowed
                )
                .to_string()
            }
            InputError::UnknownValue {
                field,
                value,
                allowed,
            } => td_string!(
                l,
                errors.unknown_value,
                field = field,
                value = value,
                allowed = allowed
            )
            .to_string(),
        };
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, err.code(), message)
    }
}

impl ApiError {
    /// The export found no run to write: no sandbox yet, or no action kept in it.
    pub fn no_run(l: crate::i18n::Locale) -> Self {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "no_run",
            td_string!(l, errors.no_run).to_owned(),
        )
    }

    /// The export was asked for a session the run did not use.
    pub fn no_such_session(l: crate::i18n::Locale) -> Self {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "no_such_session",
            td_string!(l, errors.no_such_session).to_owned(),
        )
    }

    /// A query value out of its list (the export's `session` and `side`).
    pub fn unknown_value(l: crate::i18n::Locale, field: &str, value: &str, allowed: &str) -> Self {
        let message = td_string!(
            l,
            errors.unknown_value,
            field = field,
            value = value,
            allowed = allowed
        )
        .to_string();
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "unknown_value", message)
    }
}

impl ApiError {
    /// A body declared as something other than a form: refused before anything runs.
    pub fn unsupported_content_type(l: crate::i18n::Locale) -> Self {
        ApiError {
            code: "unsupported_content_type".to_owned(),
            status: StatusCode::UNSUPPORTED_MEDIA_TYPE.as_u16(),
            message: td_string!(l, errors.unsupported_content_type).to_owned(),
        }
    }

    /// A replay link whose run is not kept (expired, or never shared).
    pub fn replay_not_found(l: crate::i18n::Locale) -> Self {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "replay_not_found",
            td_string!(l, errors.replay_not_found).to_owned(),
        )
    }

    /// A field the action does not take: refused before anything runs, so a typo (`mistake`
    /// for `mistakes`) never silently runs the lesson's correct code instead.
    pub fn unknown_field(l: crate::i18n::Locale, field: &str, allowed: &[&str]) -> Self {
        let message = if allowed.is_empty() {
            td_string!(l, errors.unknown_field_none, field = field).to_string()
        } else {
            let allowed = allowed.join(", ");
            td_string!(l, errors.unknown_field, field = field, allowed = allowed).to_string()
        };
        ApiError {
            code: "unknown_field".to_owned(),
            status: StatusCode::UNPROCESSABLE_ENTITY.as_u16(),
            message,
        }
    }
}

/// The refusal of a state-changing request that a page of another site sent, in `l`: the
/// JSON error, and a short page for a browser that links back to the playground.
pub fn cross_site(l: crate::i18n::Locale) -> (ApiError, String) {
    let message = td_string!(l, errors.cross_site).to_owned();
    let title = td_string!(l, errors.cross_site_title);
    let back = td_string!(l, errors.cross_site_back);
    let lang = crate::locale::id(l);
    let page = format!(
        "<!DOCTYPE html><html lang=\"{lang}\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title></head><body style=\"font-family: system-ui, sans-serif; \
         max-width: 40rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5\">\
         <h1>{title}</h1><p data-code=\"cross_site\">{message}</p>\
         <p><a href=\"/?lang={lang}\">{back}</a></p></body></html>"
    );
    let error = ApiError {
        code: "cross_site".to_owned(),
        status: StatusCode::FORBIDDEN.as_u16(),
        message,
    };
    (error, page)
}

/// The stepper's refusal of a command, by its stable code, in `l`.
pub fn step_refusal(l: crate::i18n::Locale, code: &str) -> String {
    match code {
        "step_not_now" => td_string!(l, errors.step_not_now),
        "step_bad_fate" => td_string!(l, errors.step_bad_fate),
        "relay_unsupported" => td_string!(l, errors.relay_unsupported),
        "step_too_fast" => td_string!(l, errors.step_too_fast),
        "busy" => td_string!(l, errors.server_busy),
        "internal" => td_string!(l, errors.internal),
        _ => td_string!(l, errors.step_bad_command),
    }
    .to_owned()
}

/// An LTI launch's refusal page, by its reason's code, in `l`: its title, what went wrong,
/// and what the learner can do.
pub fn lti_refusal(l: crate::i18n::Locale, code: &str) -> (String, String, String) {
    let why = match code {
        "login_missing_params" => td_string!(l, lti.login_missing_params),
        "unknown_platform" => td_string!(l, lti.unknown_platform),
        "wrong_target" => td_string!(l, lti.wrong_target),
        "state_missing" => td_string!(l, lti.state_missing),
        "state_unknown" => td_string!(l, lti.state_unknown),
        "state_used" => td_string!(l, lti.state_used),
        "token_missing" => td_string!(l, lti.token_missing),
        "malformed" => td_string!(l, lti.malformed),
        "bad_signature" => td_string!(l, lti.bad_signature),
        "unknown_key" => td_string!(l, lti.unknown_key),
        "keys_unreachable" => td_string!(l, lti.keys_unreachable),
        "wrong_issuer" => td_string!(l, lti.wrong_issuer),
        "wrong_audience" => td_string!(l, lti.wrong_audience),
        "expired" => td_string!(l, lti.expired),
        "nonce_replayed" => td_string!(l, lti.nonce_replayed),
        "nonce_mismatch" => td_string!(l, lti.nonce_mismatch),
        "unknown_deployment" => td_string!(l, lti.unknown_deployment),
        "wrong_message" => td_string!(l, lti.wrong_message),
        "missing_claim" => td_string!(l, lti.missing_claim),
        "unavailable" => td_string!(l, errors.unavailable),
        _ => td_string!(l, lti.no_sandbox),
    };
    (
        td_string!(l, lti.refused_title).to_owned(),
        why.to_owned(),
        td_string!(l, lti.refused_hint).to_owned(),
    )
}

/// Catalogue ids as an error message lists them.
fn ids<'a>(ids: impl Iterator<Item = &'a str>) -> String {
    ids.collect::<Vec<_>>().join(", ")
}

/// What a busy or rate-limited answer's `Retry-After` says.
pub const RETRY_AFTER_SECS: &str = "1";

/// Sets the status of the response being built — except for a form a browser posted without
/// JavaScript: that answer must stay the framework's redirect back to the page, which then
/// shows the error.
pub fn set_status(status: StatusCode) {
    let from_plain_form = leptos::prelude::use_context::<http::request::Parts>().is_some_and(|p| {
        p.headers
            .get(http::header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|accept| accept.contains("text/html"))
    });
    if from_plain_form {
        return;
    }
    if let Some(response) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(status);
        // Busy and rate-limited answers say when to come back; a client that waits that long
        // finds the server free again in the common case (a class pressing together).
        if status == StatusCode::SERVICE_UNAVAILABLE || status == StatusCode::TOO_MANY_REQUESTS {
            response.insert_header(
                http::header::RETRY_AFTER,
                http::HeaderValue::from_static(RETRY_AFTER_SECS),
            );
        }
    }
}
