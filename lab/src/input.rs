//! Learner input, parsed at the edge: a value of these types is valid by construction.

use serde::{Deserialize, Serialize};

use crate::catalog::{CommitFate, CrashPoint, names};
use crate::outcome::AttemptSettings;

/// Why a learner's input was refused. Each variant names the field and the rule.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    #[error("unknown crash point {0:?}")]
    UnknownCrashPoint(String),
    #[error("unknown commit fate {0:?}")]
    UnknownCommitFate(String),
    #[error("event_id must not be empty")]
    EmptyEventId,
    #[error("event_id is longer than {} characters", EventId::MAX_CHARS)]
    EventIdTooLong,
    #[error("event_id must not contain control characters")]
    EventIdControlChar,
    #[error("payload is longer than {} bytes", Payload::MAX_BYTES)]
    PayloadTooLong,
}

impl InputError {
    /// A stable id for the error, used for its texts in the UI.
    pub fn code(&self) -> &'static str {
        match self {
            InputError::UnknownCrashPoint(_) => "unknown_crash_point",
            InputError::UnknownCommitFate(_) => "unknown_commit_fate",
            InputError::EmptyEventId => "empty_event_id",
            InputError::EventIdTooLong => "event_id_too_long",
            InputError::EventIdControlChar => "event_id_control_char",
            InputError::PayloadTooLong => "payload_too_long",
        }
    }
}

/// The stable id of one logical event. Any printable text is a valid id for PostgreSQL's
/// `text` column; we only bound its size and keep control characters out of the page.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct EventId(String);

impl EventId {
    pub const MAX_CHARS: usize = 128;

    pub fn parse(raw: &str) -> Result<Self, InputError> {
        if raw.is_empty() {
            return Err(InputError::EmptyEventId);
        }
        if raw.chars().count() > Self::MAX_CHARS {
            return Err(InputError::EventIdTooLong);
        }
        if raw.chars().any(char::is_control) {
            return Err(InputError::EventIdControlChar);
        }
        Ok(EventId(raw.to_owned()))
    }

    pub fn lesson() -> Self {
        EventId(names::EVENT_ID.to_owned())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for EventId {
    type Error = InputError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        EventId::parse(&value)
    }
}

impl From<EventId> for String {
    fn from(value: EventId) -> Self {
        value.0
    }
}

/// The event's JSON text, sent as a parameter and cast by PostgreSQL (`$3::jsonb`). It is
/// deliberately *not* checked here: an invalid payload is one of the lesson's outcomes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Payload(String);

impl Payload {
    /// Large enough for any event a learner would write; small enough that the deepest
    /// nesting it allows stays well inside PostgreSQL's parser stack.
    pub const MAX_BYTES: usize = 8 * 1024;

    pub fn parse(raw: &str) -> Result<Self, InputError> {
        if raw.len() > Self::MAX_BYTES {
            return Err(InputError::PayloadTooLong);
        }
        Ok(Payload(raw.to_owned()))
    }

    pub fn lesson() -> Self {
        Payload(names::PAYLOAD.to_owned())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for Payload {
    type Error = InputError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Payload::parse(&value)
    }
}

impl From<Payload> for String {
    fn from(value: Payload) -> Self {
        value.0
    }
}

/// One resolve attempt, fully specified and valid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptSpec {
    pub crash: CrashPoint,
    pub commit_fate: CommitFate,
    pub event_id: EventId,
    pub payload: Payload,
}

impl AttemptSpec {
    /// The lesson's attempt with the given crash point.
    pub fn lesson(crash: CrashPoint) -> Self {
        AttemptSpec {
            crash,
            commit_fate: CommitFate::Random,
            event_id: EventId::lesson(),
            payload: Payload::lesson(),
        }
    }

    /// Parses the form fields of an attempt; absent fields take the lesson's defaults.
    pub fn from_fields(
        crash: Option<&str>,
        commit_fate: Option<&str>,
        event_id: Option<&str>,
        payload: Option<&str>,
    ) -> Result<Self, InputError> {
        let crash = match crash {
            None | Some("") => CrashPoint::None,
            Some(id) => {
                CrashPoint::parse(id).ok_or_else(|| InputError::UnknownCrashPoint(id.to_owned()))?
            }
        };
        let commit_fate = match commit_fate {
            None | Some("") => CommitFate::Random,
            Some(id) => {
                CommitFate::parse(id).ok_or_else(|| InputError::UnknownCommitFate(id.to_owned()))?
            }
        };
        let event_id = match event_id {
            None => EventId::lesson(),
            Some(raw) => EventId::parse(raw)?,
        };
        let payload = match payload {
            None => Payload::lesson(),
            Some(raw) => Payload::parse(raw)?,
        };
        Ok(AttemptSpec {
            crash,
            commit_fate,
            event_id,
            payload,
        })
    }

    /// Rebuilds a spec from settings echoed in a report (validating them again).
    pub fn from_settings(settings: &AttemptSettings) -> Result<Self, InputError> {
        Ok(AttemptSpec {
            crash: settings.crash,
            commit_fate: settings.commit_fate,
            event_id: EventId::parse(&settings.event_id)?,
            payload: Payload::parse(&settings.payload)?,
        })
    }

    pub fn settings(&self) -> AttemptSettings {
        AttemptSettings {
            crash: self.crash,
            commit_fate: self.commit_fate,
            event_id: self.event_id.as_str().to_owned(),
            payload: self.payload.as_str().to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_fields_take_the_lessons_values() {
        let spec = AttemptSpec::from_fields(None, None, None, None).unwrap();
        assert_eq!(spec, AttemptSpec::lesson(CrashPoint::None));
    }

    #[test]
    fn unknown_enum_values_are_refused_by_name() {
        let err = AttemptSpec::from_fields(Some("after_lunch"), None, None, None).unwrap_err();
        assert_eq!(err, InputError::UnknownCrashPoint("after_lunch".into()));
        let err = AttemptSpec::from_fields(None, Some("maybe"), None, None).unwrap_err();
        assert_eq!(err.code(), "unknown_commit_fate");
    }

    #[test]
    fn event_ids_are_bounded_but_otherwise_free_text() {
        assert!(EventId::parse("'; DROP TABLE outbox; --").is_ok());
        assert!(EventId::parse("<script>alert(1)</script>").is_ok());
        assert_eq!(EventId::parse(""), Err(InputError::EmptyEventId));
        assert_eq!(
            EventId::parse(&"x".repeat(129)),
            Err(InputError::EventIdTooLong)
        );
        assert_eq!(EventId::parse("a\0b"), Err(InputError::EventIdControlChar));
    }

    #[test]
    fn payloads_are_bounded_but_not_judged() {
        assert!(Payload::parse("not json").is_ok());
        assert_eq!(
            Payload::parse(&"x".repeat(Payload::MAX_BYTES + 1)),
            Err(InputError::PayloadTooLong)
        );
    }
}
