//! Learner input, parsed at the edge: a value of these types is valid by construction.

use serde::{Deserialize, Serialize};

use crate::catalog::{
    CommitFate, ConsumerCrash, CrashPoint, Mistake, Mode, PublisherCrash, Scenario, names,
};

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
    #[error("payload must not contain a NUL byte")]
    PayloadNulByte,
    /// The payload is small, but the jsonb text PostgreSQL would store and print could be
    /// large (see [`Payload::text_bound`]).
    #[error(
        "payload's jsonb text could be longer than {} bytes",
        Payload::MAX_TEXT_BYTES
    )]
    PayloadTextTooLarge,
    #[error("unknown mode {0:?}")]
    UnknownMode(String),
    #[error("unknown mistake {0:?}")]
    UnknownMistake(String),
    #[error("mode {mode} has no crash point {crash}")]
    CrashPointNotInMode { mode: Mode, crash: CrashPoint },
    #[error("mistakes belong to the outbox mode, not to {0}")]
    MistakesNeedOutbox(Mode),
    #[error("insert_outside_tx and update_outside_tx together leave no transaction to look at")]
    BothOutsideTx,
    #[error("a race takes only the unguarded_update mistake")]
    MistakeNotInRace(Mistake),
    #[error("{field} cannot be {value:?}")]
    UnknownPrediction { field: &'static str, value: String },
    #[error("{field} cannot be {value:?}; allowed: {allowed}")]
    UnknownValue {
        field: &'static str,
        value: String,
        allowed: String,
    },
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
            InputError::PayloadNulByte => "payload_nul_byte",
            InputError::PayloadTextTooLarge => "payload_text_too_large",
            InputError::UnknownMode(_) => "unknown_mode",
            InputError::UnknownMistake(_) => "unknown_mistake",
            InputError::CrashPointNotInMode { .. } => "crash_point_not_in_mode",
            InputError::MistakesNeedOutbox(_) => "mistakes_need_outbox",
            InputError::BothOutsideTx => "both_outside_tx",
            InputError::MistakeNotInRace(_) => "mistake_not_in_race",
            InputError::UnknownPrediction { .. } => "unknown_prediction",
            InputError::UnknownValue { .. } => "unknown_value",
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

    /// One of the lesson's fixed ids.
    pub(crate) fn constant(id: &'static str) -> Self {
        EventId(id.to_owned())
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
    /// The most text PostgreSQL may print for the stored jsonb value.
    pub const MAX_TEXT_BYTES: usize = 16 * 1024;

    pub fn parse(raw: &str) -> Result<Self, InputError> {
        if raw.len() > Self::MAX_BYTES {
            return Err(InputError::PayloadTooLong);
        }
        // PostgreSQL's text cannot hold a NUL byte at all: such a payload could never be sent
        // as the lesson's parameter, so it is no outcome to show.
        if raw.contains('\0') {
            return Err(InputError::PayloadNulByte);
        }
        // Whatever PostgreSQL would store is kept in reports and shown on pages: a payload
        // whose stored text could be huge (numbers with large exponents) is refused here,
        // before anything runs. An invalid payload is not: that is one of the lesson's outcomes.
        if Self::text_bound(raw) > Self::MAX_TEXT_BYTES {
            return Err(InputError::PayloadTextTooLarge);
        }
        Ok(Payload(raw.to_owned()))
    }

    /// An upper bound on the length of the text PostgreSQL prints for `raw::jsonb`, from the
    /// bytes alone (no cast, no parse; PostgreSQL itself says what the text is). Each byte
    /// prints at most once, because whitespace is dropped and a string never grows (PostgreSQL
    /// writes back only the escapes it was given, `\"`, `\n`, `\u001f`, and decodes the others
    /// to fewer bytes); a `,` or `:` may gain a space (`", "`, `": "`); and a number grows only
    /// by its exponent, written out in digits (`1e5` is `100000`, `1e-5` is `0.00001`): at
    /// most the exponent's value, plus a `0.` or a sign. Conservative: an exponent that would
    /// fall outside PostgreSQL's numeric range counts too, so such a payload is refused here
    /// rather than by the cast.
    pub fn text_bound(raw: &str) -> usize {
        let bytes = raw.as_bytes();
        let mut bound = bytes.len();
        let (mut in_string, mut escaped) = (false, false);
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            i += 1;
            if in_string {
                match b {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b',' | b':' => bound = bound.saturating_add(1),
                // An exponent follows a number's last digit (or, in a payload PostgreSQL will
                // refuse anyway, its dot); `true`'s and `false`'s `e` follow letters.
                b'e' | b'E' if i >= 2 && matches!(bytes[i - 2], b'0'..=b'9' | b'.') => {
                    if let Some(b'+' | b'-') = bytes.get(i) {
                        i += 1;
                    }
                    let mut exponent: usize = 0;
                    while let Some(&d @ b'0'..=b'9') = bytes.get(i) {
                        exponent = exponent
                            .saturating_mul(10)
                            .saturating_add(usize::from(d - b'0'));
                        i += 1;
                    }
                    bound = bound.saturating_add(exponent).saturating_add(2);
                }
                _ => {}
            }
        }
        bound
    }

    pub fn lesson() -> Self {
        Payload(names::PAYLOAD.to_owned())
    }

    /// One of the lesson's fixed payloads.
    pub(crate) fn constant(payload: &'static str) -> Self {
        Payload(payload.to_owned())
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

/// A set of mistakes, in catalogue order, without repeats.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Mistakes(Vec<Mistake>);

impl Mistakes {
    pub fn none() -> Self {
        Mistakes(Vec::new())
    }

    pub fn of(list: &[Mistake]) -> Self {
        let mut v: Vec<Mistake> = Mistake::ALL
            .iter()
            .copied()
            .filter(|m| list.contains(m))
            .collect();
        v.dedup();
        Mistakes(v)
    }

    /// Parses a comma-separated list of ids (`unguarded_update,new_event_id_on_retry`);
    /// empty means none.
    pub fn parse(raw: &str) -> Result<Self, InputError> {
        let mut list = Vec::new();
        for id in raw.split(',').map(str::trim).filter(|id| !id.is_empty()) {
            list.push(Mistake::parse(id).ok_or_else(|| InputError::UnknownMistake(id.to_owned()))?);
        }
        Ok(Mistakes::of(&list))
    }

    pub fn has(&self, m: Mistake) -> bool {
        self.0.contains(&m)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = Mistake> + '_ {
        self.0.iter().copied()
    }

    pub fn without(&self, m: Mistake) -> Self {
        Mistakes(self.0.iter().copied().filter(|x| *x != m).collect())
    }

    /// The comma-separated ids, as the API takes them.
    pub fn ids(&self) -> String {
        self.0.iter().map(|m| m.id()).collect::<Vec<_>>().join(",")
    }
}

/// One resolve attempt, fully specified and valid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptSpec {
    pub mode: Mode,
    pub mistakes: Mistakes,
    pub crash: CrashPoint,
    pub commit_fate: CommitFate,
    pub event_id: EventId,
    pub payload: Payload,
}

impl AttemptSpec {
    /// The lesson's attempt with the given crash point.
    pub fn lesson(crash: CrashPoint) -> Self {
        AttemptSpec {
            mode: Mode::Outbox,
            mistakes: Mistakes::none(),
            crash,
            commit_fate: CommitFate::Random,
            event_id: EventId::lesson(),
            payload: Payload::lesson(),
        }
    }

    /// The same attempt in another mode with other mistakes, checked again.
    pub fn with_way(&self, mode: Mode, mistakes: Mistakes) -> Result<Self, InputError> {
        let spec = AttemptSpec {
            mode,
            mistakes,
            ..self.clone()
        };
        spec.validate()?;
        Ok(spec)
    }

    /// The client's retry after an unknown COMMIT: a fresh event_id (the mistake), no crash.
    pub fn fresh_id_retry(&self) -> AttemptSpec {
        let id = format!("{}{}", self.event_id.as_str(), names::RETRY_SUFFIX);
        AttemptSpec {
            mistakes: self.mistakes.without(Mistake::NewEventIdOnRetry),
            crash: CrashPoint::None,
            event_id: EventId(id),
            ..self.clone()
        }
    }

    /// The lesson's way at the same place: outbox mode, no mistakes. Trace A's
    /// "after publish, before COMMIT" becomes "after INSERT, before COMMIT".
    pub fn outbox_counterpart(&self) -> AttemptSpec {
        let crash = match self.crash {
            CrashPoint::AfterPublish => CrashPoint::AfterInsert,
            other => other,
        };
        AttemptSpec {
            mode: Mode::Outbox,
            mistakes: Mistakes::none(),
            crash,
            ..self.clone()
        }
    }

    fn validate(&self) -> Result<(), InputError> {
        if !self.mode.has_crash_point(self.crash) {
            return Err(InputError::CrashPointNotInMode {
                mode: self.mode,
                crash: self.crash,
            });
        }
        if self.mode != Mode::Outbox && !self.mistakes.is_empty() {
            return Err(InputError::MistakesNeedOutbox(self.mode));
        }
        if self.mistakes.has(Mistake::InsertOutsideTx)
            && self.mistakes.has(Mistake::UpdateOutsideTx)
        {
            return Err(InputError::BothOutsideTx);
        }
        Ok(())
    }

    /// Parses the form fields of an attempt; absent fields take the lesson's defaults.
    pub fn from_fields(fields: AttemptFields<'_>) -> Result<Self, InputError> {
        let AttemptFields {
            mode,
            mistakes,
            crash,
            commit_fate,
            event_id,
            payload,
        } = fields;
        let mode = match mode {
            None | Some("") => Mode::Outbox,
            Some(id) => Mode::parse(id).ok_or_else(|| InputError::UnknownMode(id.to_owned()))?,
        };
        let mistakes = Mistakes::parse(mistakes.unwrap_or(""))?;
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
        let spec = AttemptSpec {
            mode,
            mistakes,
            crash,
            commit_fate,
            event_id,
            payload,
        };
        spec.validate()?;
        Ok(spec)
    }

    /// Parses a comparison's wrong way (`naive`, `naive_publish_first`, or comma-separated
    /// mistakes) plus the attempt's other fields. An absent way means Trace A.
    pub fn from_way(way: Option<&str>, fields: AttemptFields<'_>) -> Result<Self, InputError> {
        let way = way.unwrap_or("").trim();
        let (mode, mistakes) = match way {
            "" => (Some(Mode::Naive.id()), None),
            id if Mode::parse(id).is_some() => (Some(id), None),
            ids => (Some(Mode::Outbox.id()), Some(ids)),
        };
        AttemptSpec::from_fields(AttemptFields {
            mode,
            mistakes,
            ..fields
        })
    }

    /// Rebuilds a spec from settings echoed in a report (validating them again).
    pub fn from_settings(settings: &AttemptSettings) -> Result<Self, InputError> {
        let spec = AttemptSpec {
            mode: settings.mode,
            mistakes: settings.mistakes.clone(),
            crash: settings.crash,
            commit_fate: settings.commit_fate,
            // A retry's id may be longer than a learner may type; it is ours, not input.
            event_id: EventId(settings.event_id.clone()),
            payload: Payload::parse(&settings.payload)?,
        };
        spec.validate()?;
        Ok(spec)
    }

    pub fn settings(&self) -> AttemptSettings {
        AttemptSettings {
            mode: self.mode,
            mistakes: self.mistakes.clone(),
            crash: self.crash,
            commit_fate: self.commit_fate,
            event_id: self.event_id.as_str().to_owned(),
            payload: self.payload.as_str().to_owned(),
        }
    }
}

/// The settings of one resolve attempt, echoed in its report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptSettings {
    #[serde(default = "outbox_mode")]
    pub mode: Mode,
    #[serde(default)]
    pub mistakes: Mistakes,
    pub crash: CrashPoint,
    pub commit_fate: CommitFate,
    pub event_id: String,
    pub payload: String,
}

fn outbox_mode() -> Mode {
    Mode::Outbox
}

/// The raw form fields of an attempt (`None` = absent).
#[derive(Clone, Copy, Debug, Default)]
pub struct AttemptFields<'a> {
    pub mode: Option<&'a str>,
    pub mistakes: Option<&'a str>,
    pub crash: Option<&'a str>,
    pub commit_fate: Option<&'a str>,
    pub event_id: Option<&'a str>,
    pub payload: Option<&'a str>,
}

/// Parses the race's one field: a race takes no mistake but `unguarded_update`.
pub fn race_mistakes(raw: Option<&str>) -> Result<Mistakes, InputError> {
    let mistakes = Mistakes::parse(raw.unwrap_or(""))?;
    let other = mistakes.iter().find(|m| *m != Mistake::UnguardedUpdate);
    match other {
        Some(m) => Err(InputError::MistakeNotInRace(m)),
        None => Ok(mistakes),
    }
}

/// A field that names one variant of a catalogue, or the first variant when absent.
fn one_of<T: Copy>(
    field: &'static str,
    raw: Option<&str>,
    all: &[T],
    id: fn(T) -> &'static str,
) -> Result<T, InputError> {
    let Some(raw) = raw.filter(|r| !r.is_empty()) else {
        return Ok(all[0]);
    };
    all.iter()
        .copied()
        .find(|v| id(*v) == raw)
        .ok_or_else(|| InputError::UnknownValue {
            field,
            value: raw.chars().take(40).collect(),
            allowed: all.iter().map(|v| id(*v)).collect::<Vec<_>>().join(", "),
        })
}

/// Where the publisher dies (`crash`); absent means it does not.
pub fn publisher_crash(raw: Option<&str>) -> Result<PublisherCrash, InputError> {
    one_of("crash", raw, PublisherCrash::ALL, PublisherCrash::id)
}

/// Where the consumer dies (`crash`); absent means it does not.
pub fn consumer_crash(raw: Option<&str>) -> Result<ConsumerCrash, InputError> {
    one_of("crash", raw, ConsumerCrash::ALL, ConsumerCrash::id)
}

/// An on/off field (`on`/`off`, `true`/`false`); absent means `default`.
/// `/api/step`'s `scenario`: `ticket` (the default), `publisher` or `consumer`.
pub fn scenario(raw: Option<&str>) -> Result<Scenario, InputError> {
    one_of("scenario", raw, Scenario::ALL, Scenario::id)
}

/// A field that the chosen scenario does not take: refused rather than silently ignored.
pub fn not_taken(field: &'static str, raw: &str, scenario: Scenario) -> InputError {
    InputError::UnknownValue {
        field,
        value: raw.chars().take(40).collect(),
        allowed: format!("nothing with scenario={}", scenario.id()),
    }
}

pub fn switch(field: &'static str, raw: Option<&str>, default: bool) -> Result<bool, InputError> {
    match raw.filter(|r| !r.is_empty()) {
        None => Ok(default),
        Some("on" | "true") => Ok(true),
        Some("off" | "false") => Ok(false),
        Some(other) => Err(InputError::UnknownValue {
            field,
            value: other.chars().take(40).collect(),
            allowed: "on, off".to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_commit_fields_take_known_values_only() {
        assert_eq!(publisher_crash(None), Ok(PublisherCrash::None));
        assert_eq!(
            publisher_crash(Some("after_send")),
            Ok(PublisherCrash::AfterSend)
        );
        assert_eq!(
            consumer_crash(Some("after_apply")),
            Ok(ConsumerCrash::AfterApply)
        );
        assert!(matches!(
            publisher_crash(Some("after_apply")),
            Err(InputError::UnknownValue { field: "crash", .. })
        ));
        assert_eq!(switch("inbox", Some("off"), true), Ok(false));
        assert_eq!(switch("inbox", None, true), Ok(true));
        assert!(switch("inbox", Some("maybe"), true).is_err());
    }

    #[test]
    fn absent_fields_take_the_lessons_values() {
        let spec = AttemptSpec::from_fields(AttemptFields::default()).unwrap();
        assert_eq!(spec, AttemptSpec::lesson(CrashPoint::None));
    }

    #[test]
    fn unknown_enum_values_are_refused_by_name() {
        let fields = AttemptFields {
            crash: Some("after_lunch"),
            ..Default::default()
        };
        let err = AttemptSpec::from_fields(fields).unwrap_err();
        assert_eq!(err, InputError::UnknownCrashPoint("after_lunch".into()));
        let fields = AttemptFields {
            commit_fate: Some("maybe"),
            ..Default::default()
        };
        let err = AttemptSpec::from_fields(fields).unwrap_err();
        assert_eq!(err.code(), "unknown_commit_fate");
        let fields = AttemptFields {
            mistakes: Some("unguarded_update,forgot_commit"),
            ..Default::default()
        };
        let err = AttemptSpec::from_fields(fields).unwrap_err();
        assert_eq!(err, InputError::UnknownMistake("forgot_commit".into()));
    }

    #[test]
    fn modes_keep_their_own_crash_points_and_mistakes() {
        let fields = |mode, crash, mistakes| AttemptFields {
            mode: Some(mode),
            crash: Some(crash),
            mistakes: Some(mistakes),
            ..Default::default()
        };
        let err = AttemptSpec::from_fields(fields("naive", "after_insert", "")).unwrap_err();
        assert_eq!(err.code(), "crash_point_not_in_mode");
        let err = AttemptSpec::from_fields(fields("outbox", "after_publish", "")).unwrap_err();
        assert_eq!(err.code(), "crash_point_not_in_mode");
        let err =
            AttemptSpec::from_fields(fields("naive", "none", "unguarded_update")).unwrap_err();
        assert_eq!(err, InputError::MistakesNeedOutbox(Mode::Naive));
        let both = "insert_outside_tx,update_outside_tx";
        let err = AttemptSpec::from_fields(fields("outbox", "none", both)).unwrap_err();
        assert_eq!(err, InputError::BothOutsideTx);
        let spec = AttemptSpec::from_fields(fields(
            "outbox",
            "commit_reply_lost",
            " new_event_id_on_retry , unguarded_update,unguarded_update",
        ))
        .unwrap();
        assert_eq!(
            spec.mistakes.ids(),
            "unguarded_update,new_event_id_on_retry"
        );
        assert_eq!(
            race_mistakes(Some("insert_outside_tx")).unwrap_err().code(),
            "mistake_not_in_race"
        );
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

    #[test]
    fn a_payload_whose_text_could_grow_large_is_refused() {
        // 8 191 bytes of input that PostgreSQL would print as 119 million characters.
        let numbers = vec!["1e131071"; 910].join(",");
        let payload = format!("[{numbers}]");
        assert!(payload.len() < Payload::MAX_BYTES);
        assert_eq!(
            Payload::parse(&payload),
            Err(InputError::PayloadTextTooLarge)
        );
        // One such number alone is over the limit, and so is a tiny one written out far.
        assert_eq!(
            Payload::parse("1e131071"),
            Err(InputError::PayloadTextTooLarge)
        );
        assert_eq!(
            Payload::parse("[1E-16383]"),
            Err(InputError::PayloadTextTooLarge)
        );
        // Modest exponents, and the largest payload without any, are fine.
        assert!(Payload::parse(r#"{"a": [1e3, -2.5E+10, 1e-300]}"#).is_ok());
        let commas = format!("[{}0]", "0,".repeat((Payload::MAX_BYTES - 3) / 2));
        assert!(Payload::parse(&commas).is_ok());
        // An `e` inside a string, or in `true`/`false`, is no exponent.
        assert!(Payload::parse(&format!(r#"["1e{}", true, false]"#, "9".repeat(100))).is_ok());
    }

    #[test]
    fn the_text_bound_counts_what_can_grow() {
        assert_eq!(Payload::text_bound("[1,2]"), 6);
        assert_eq!(Payload::text_bound(r#"{"a":1}"#), 8);
        assert_eq!(Payload::text_bound(r#""a,b:c""#), 7);
        assert_eq!(Payload::text_bound(r#""\",1e9""#), 8);
        assert_eq!(Payload::text_bound("1e5"), 3 + 5 + 2);
        assert_eq!(Payload::text_bound("-1.5E-3"), 7 + 3 + 2);
        assert_eq!(Payload::text_bound("1e99999999999999999999999"), usize::MAX);
    }
}
