//! One list of refusal codes: every code the server can answer is in
//! `app::backend::errors::REFUSAL_CODES`, and the README's table says the same, status included.

use app::backend::errors::REFUSAL_CODES;
use outbox_lab::catalog::{CrashPoint, Mistake, Mode};
use outbox_lab::input::InputError;
use outbox_lab::pg::LabError;

/// The README's table of refusal codes: (code, status) per row.
fn readme_table() -> Vec<(String, Option<u16>)> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("the README");
    let start = readme
        .find("| code | status | when |")
        .expect("the README has a table of refusal codes");
    readme[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let code = cells[1].trim_matches('`').to_owned();
            let status = cells[2].parse().ok();
            (code, status)
        })
        .collect()
}

#[test]
fn the_readme_lists_exactly_the_servers_refusal_codes() {
    let ours: Vec<(String, Option<u16>)> = REFUSAL_CODES
        .iter()
        .map(|(c, s)| ((*c).to_owned(), *s))
        .collect();
    assert_eq!(readme_table(), ours);
}

/// Every error of the lab, one of each (a new variant fails to compile here until it is added).
fn every_lab_error() -> Vec<LabError> {
    let all = vec![
        LabError::Unavailable(sqlx::Error::PoolTimedOut),
        LabError::Database(sqlx::Error::RowNotFound),
        LabError::SandboxGone("sb".into()),
        LabError::SandboxLimit(1),
        LabError::BackendLingers {
            pid: 1,
            waited: std::time::Duration::ZERO,
        },
        LabError::LockWaitNotSeen { pid: 1 },
        LabError::Relay(std::io::Error::other("x")),
        LabError::RelayUnsupported,
        LabError::SandboxRateLimited,
        LabError::RateLimited,
        LabError::NothingToReconcile,
        LabError::NothingToShare,
        LabError::UnknownQuest("x".into()),
        LabError::UnknownAnswer {
            quest: "x".into(),
            answer: "y".into(),
        },
        LabError::QuestNotReached("x".into()),
        LabError::ReplayTooLarge { bytes: 2, limit: 1 },
        LabError::ShareRateLimited,
        LabError::Report(serde_json::from_str::<u8>("x").unwrap_err()),
        LabError::StepBusy,
        LabError::StepLimit,
        LabError::Busy,
        LabError::ClientLimit,
        LabError::StepInProgress,
        LabError::Config("x".into()),
        LabError::Migrate(sqlx::migrate::MigrateError::VersionMissing(1)),
    ];
    for e in &all {
        match e {
            LabError::Unavailable(_)
            | LabError::Database(_)
            | LabError::SandboxGone(_)
            | LabError::SandboxLimit(_)
            | LabError::BackendLingers { .. }
            | LabError::LockWaitNotSeen { .. }
            | LabError::Relay(_)
            | LabError::RelayUnsupported
            | LabError::SandboxRateLimited
            | LabError::RateLimited
            | LabError::NothingToReconcile
            | LabError::NothingToShare
            | LabError::UnknownQuest(_)
            | LabError::UnknownAnswer { .. }
            | LabError::QuestNotReached(_)
            | LabError::ReplayTooLarge { .. }
            | LabError::ShareRateLimited
            | LabError::Report(_)
            | LabError::StepBusy
            | LabError::StepLimit
            | LabError::Busy
            | LabError::ClientLimit
            | LabError::StepInProgress
            | LabError::Config(_)
            | LabError::Migrate(_) => {}
        }
    }
    all
}

/// Every input error, one of each (the same check by an exhaustive match).
fn every_input_error() -> Vec<InputError> {
    let all = vec![
        InputError::UnknownCrashPoint("x".into()),
        InputError::UnknownCommitFate("x".into()),
        InputError::EmptyEventId,
        InputError::EventIdTooLong,
        InputError::EventIdControlChar,
        InputError::PayloadTooLong,
        InputError::PayloadNulByte,
        InputError::PayloadTextTooLarge,
        InputError::UnknownMode("x".into()),
        InputError::UnknownMistake("x".into()),
        InputError::CrashPointNotInMode {
            mode: Mode::Naive,
            crash: CrashPoint::AfterInsert,
        },
        InputError::MistakesNeedOutbox(Mode::Naive),
        InputError::BothOutsideTx,
        InputError::MistakeNotInRace(Mistake::InsertOutsideTx),
        InputError::UnknownPrediction {
            field: "predict_ticket",
            value: "x".into(),
        },
        InputError::UnknownValue {
            field: "inbox",
            value: "x".into(),
            allowed: "on, off".into(),
        },
    ];
    for e in &all {
        match e {
            InputError::UnknownCrashPoint(_)
            | InputError::UnknownCommitFate(_)
            | InputError::EmptyEventId
            | InputError::EventIdTooLong
            | InputError::EventIdControlChar
            | InputError::PayloadTooLong
            | InputError::PayloadNulByte
            | InputError::PayloadTextTooLarge
            | InputError::UnknownMode(_)
            | InputError::UnknownMistake(_)
            | InputError::CrashPointNotInMode { .. }
            | InputError::MistakesNeedOutbox(_)
            | InputError::BothOutsideTx
            | InputError::MistakeNotInRace(_)
            | InputError::UnknownPrediction { .. }
            | InputError::UnknownValue { .. } => {}
        }
    }
    all
}

fn listed(code: &str, status: u16) -> bool {
    REFUSAL_CODES
        .iter()
        .any(|(c, s)| *c == code && s.is_none_or(|s| s == status))
}

#[test]
fn every_code_the_server_produces_is_listed_with_its_status() {
    let l = app::i18n::Locale::en;
    for e in every_lab_error() {
        let what = e.to_string();
        let api = app::api::ApiError::from_lab_in(e, l);
        assert!(listed(&api.code, api.status), "{what}: {api:?}");
    }
    for e in every_input_error() {
        let api = app::api::ApiError::from_input_in(e, l);
        assert!(listed(&api.code, api.status), "{api:?}");
    }
    let (cross_site, _) = app::backend::errors::cross_site(l);
    let others = [
        cross_site,
        app::api::ApiError::unknown_field(l, "x", &["crash"]),
        app::api::ApiError::unsupported_content_type(l),
        app::api::ApiError::replay_not_found(l),
    ];
    for api in others {
        assert!(listed(&api.code, api.status), "{api:?}");
    }
    // The socket's own codes: each has a text of its own (an unknown code reads as a bad
    // command).
    let unknown = app::backend::errors::step_refusal(l, "no such code");
    for code in ["step_not_now", "step_bad_fate", "step_too_fast"] {
        assert!(REFUSAL_CODES.iter().any(|(c, _)| *c == code), "{code}");
        assert_ne!(
            app::backend::errors::step_refusal(l, code),
            unknown,
            "{code}"
        );
    }
    assert!(REFUSAL_CODES.iter().any(|(c, _)| *c == "step_bad_command"));
}
