//! A run as psql scripts: the report's starting tables, its statements in order with their
//! parameters inlined as literals, what the playground did at each step in words, and the
//! tables at the end, so that a learner can replay the run on their own PostgreSQL (13 or
//! later). A run that used more than one connection at once becomes one script per session,
//! with steps numbered across all of them.
//!
//! Pure: the scripts come from the report alone.

mod plan;
mod quote;
mod schema;
mod words;
mod write;

use serde::{Deserialize, Serialize};

use crate::catalog::{ActionKind, Mode};
use crate::report::Report;

pub use schema::SCHEMA;

/// One psql window of a replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Session {
    A,
    B,
    C,
}

impl Session {
    pub const ALL: [Session; 3] = [Session::A, Session::B, Session::C];

    /// The name in URLs and file names.
    pub fn id(self) -> &'static str {
        match self {
            Session::A => "a",
            Session::B => "b",
            Session::C => "c",
        }
    }

    pub fn parse(raw: &str) -> Option<Session> {
        Session::ALL.into_iter().find(|s| s.id() == raw)
    }

    /// The name in the scripts' words.
    pub fn label(self) -> &'static str {
        match self {
            Session::A => "A",
            Session::B => "B",
            Session::C => "C",
        }
    }

    fn index(self) -> usize {
        match self {
            Session::A => 0,
            Session::B => 1,
            Session::C => 2,
        }
    }
}

/// Why a report cannot be written as a script.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ExportError {
    /// PostgreSQL's text cannot hold a NUL byte, so no literal can carry it.
    #[error("a value holds a NUL byte")]
    NulByte,
    #[error("a statement psql would not read as plain SQL: {0}")]
    UnexpectedStatement(String),
    #[error("a statement's parameters do not match its placeholders: {0}")]
    Parameters(String),
    /// The trace is not one the playground writes (e.g. two transactions at once on one
    /// connection).
    #[error("the trace cannot be replayed: {0}")]
    Unreplayable(&'static str),
}

/// The scripts of one run, one per session it used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exported {
    stem: String,
    scripts: Vec<(Session, String)>,
}

impl Exported {
    /// The sessions the run used, A first.
    pub fn sessions(&self) -> Vec<Session> {
        self.scripts.iter().map(|(s, _)| *s).collect()
    }

    pub fn script(&self, session: Session) -> Option<&str> {
        self.scripts
            .iter()
            .find(|(s, _)| *s == session)
            .map(|(_, text)| text.as_str())
    }

    /// A readable file name, e.g. `outbox-ticket-42-after_insert-session-a.sql`.
    pub fn file_name(&self, session: Session) -> String {
        file_name(&self.stem, session)
    }
}

fn file_name(stem: &str, session: Session) -> String {
    format!("outbox-ticket-42-{stem}-session-{}.sql", session.id())
}

/// The scripts that replay `report`. `label` names the run in file names (e.g. a
/// comparison's side); by default the action and its settings do.
pub fn export(report: &Report, label: Option<&str>) -> Result<Exported, ExportError> {
    let stem = match label {
        Some(l) => format!("{l}-{}", stem_of(report)),
        None => stem_of(report),
    };
    // A reset is the playground's own bookkeeping (no statement of the lesson): its script
    // starts from the tables it left.
    let bare;
    let report = if matches!(report.action, ActionKind::Reset | ActionKind::Snapshot) {
        bare = Report {
            before: Some(report.snapshot.clone()),
            trace: Vec::new(),
            ..report.clone()
        };
        &bare
    } else {
        report
    };
    let plan = plan::plan(report)?;
    let scripts = write::scripts(report, &plan, |s| file_name(&stem, s))?;
    Ok(Exported { stem, scripts })
}

/// The run in a few safe characters: the action, and an attempt's mode and crash point.
fn stem_of(report: &Report) -> String {
    if let Some(stepped) = &report.stepped {
        return format!("stepped-{}", stepped.ended_at.id());
    }
    match (&report.attempt, report.action) {
        (Some(a), ActionKind::Attempt) if a.mode == Mode::Outbox => a.crash.id().to_owned(),
        (Some(a), ActionKind::Attempt) => format!("{}-{}", a.mode.id(), a.crash.id()),
        (_, action) => action.id().to_owned(),
    }
}
