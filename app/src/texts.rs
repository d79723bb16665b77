//! The texts of catalogue values (crash points, fates, outcomes, failure rows, trace words).
//!
//! Keys are checked at compile time by leptos_i18n; each match is exhaustive, so a new
//! catalogue entry without its texts does not build. The page's language is fixed for the
//! page's life, so these return plain strings for the given locale.

use leptos_i18n::td_string;
use outbox_lab::catalog::{
    ActionKind, CommitFate, ConsumerCrash, CrashPoint, Difference, FailureRow, Mistake, Mode,
    OutcomeId, PausePoint, PublisherCrash, Reading, Setup, Stage,
};
use outbox_lab::sql_trace::{Actor, TxState};

use crate::i18n::Locale;

// The lookups of catalogue values whose texts follow their ids (`crash.{id}.label`, …),
// written by build.rs from the catalogue.
include!(concat!(env!("OUT_DIR"), "/catalogue_texts.rs"));

/// The name of the crash point a run is held at, as its scenario's form calls it (the
/// server draws the stepper's pauses).
#[cfg(feature = "ssr")]
pub fn pause_label(l: Locale, point: PausePoint) -> &'static str {
    match point {
        PausePoint::Ticket(c) => crash_label(l, c),
        PausePoint::Publisher(c) => publisher_crash_text(l, c).1,
        PausePoint::Consumer(c) => consumer_crash_text(l, c).1,
    }
}

/// A crash point's short mark on a strip.
pub fn pause_mark(l: Locale, point: PausePoint) -> &'static str {
    match point {
        PausePoint::Ticket(c) => crash_label(l, c),
        PausePoint::Publisher(c) => publisher_crash_text(l, c).0,
        PausePoint::Consumer(c) => consumer_crash_text(l, c).0,
    }
}

/// A wrong way's name: a mode, or its mistakes joined.
pub fn way_label(l: Locale, mode: Mode, mistakes: &[Mistake]) -> String {
    if mistakes.is_empty() {
        return mode_label(l, mode).to_owned();
    }
    mistakes
        .iter()
        .map(|&m| mistake_label(l, m))
        .collect::<Vec<_>>()
        .join(" + ")
}

/// Title and explanation of an action that has no outcome id.
pub fn action_text(l: Locale, a: ActionKind) -> (&'static str, &'static str) {
    match a {
        ActionKind::Reset => (
            td_string!(l, outcome.reset.title),
            td_string!(l, outcome.reset.body),
        ),
        ActionKind::Reopen => (
            td_string!(l, outcome.reopen.title),
            td_string!(l, outcome.reopen.body),
        ),
        ActionKind::Snapshot
        | ActionKind::Attempt
        | ActionKind::Reconcile
        | ActionKind::Race
        | ActionKind::Restart
        | ActionKind::PublishRace
        | ActionKind::Consume => (
            td_string!(l, outcome.snapshot.title),
            td_string!(l, outcome.snapshot.body),
        ),
    }
}

pub fn actor(l: Locale, a: Actor) -> &'static str {
    match a {
        Actor::Service => td_string!(l, trace.actor.service),
        Actor::Network => td_string!(l, trace.actor.network),
        Actor::Postgres => td_string!(l, trace.actor.postgres),
        Actor::Support => td_string!(l, trace.actor.support),
        Actor::Playground => td_string!(l, trace.actor.playground),
        Actor::ServicePool => td_string!(l, trace.actor.service_pool),
        Actor::Broker => td_string!(l, trace.actor.broker),
        Actor::Consumer => td_string!(l, trace.actor.consumer),
        Actor::Publisher => td_string!(l, trace.actor.publisher),
        Actor::OtherWriter => td_string!(l, trace.actor.other_writer),
    }
}

pub fn tx_state(l: Locale, t: TxState) -> &'static str {
    match t {
        TxState::Idle => td_string!(l, trace.state.idle),
        TxState::Open => td_string!(l, trace.state.open),
        TxState::Failed => td_string!(l, trace.state.failed),
        TxState::Committed => td_string!(l, trace.state.committed),
        TxState::RolledBack => td_string!(l, trace.state.rolled_back),
        TxState::Abandoned => td_string!(l, trace.state.abandoned),
        TxState::Unknown => td_string!(l, trace.state.unknown),
    }
}

/// How an outcome reads at a glance; drives the banner's colour *and* its icon.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Committed,
    RolledBack,
    Refused,
    Unknown,
    /// The tables disagree with each other: the harm a wrong way does.
    Broken,
    Neutral,
}

impl Tone {
    pub fn of(outcome: Option<OutcomeId>) -> Tone {
        match outcome.map(OutcomeId::reading) {
            None | Some(Reading::Neutral) => Tone::Neutral,
            Some(Reading::Committed) => Tone::Committed,
            Some(Reading::RolledBack) => Tone::RolledBack,
            Some(Reading::Refused) => Tone::Refused,
            Some(Reading::Unknown) => Tone::Unknown,
            Some(Reading::Broken) => Tone::Broken,
        }
    }

    pub fn attr(self) -> &'static str {
        match self {
            Tone::Committed => "ok",
            Tone::RolledBack => "rolled-back",
            Tone::Refused => "refused",
            Tone::Unknown => "unknown",
            Tone::Broken => "broken",
            Tone::Neutral => "neutral",
        }
    }

    /// A shape that carries the meaning without colour.
    pub fn icon(self) -> &'static str {
        match self {
            Tone::Committed => "✓",
            Tone::RolledBack => "↺",
            Tone::Refused => "✗",
            Tone::Unknown => "?",
            Tone::Broken => "⚠",
            Tone::Neutral => "•",
        }
    }

    /// What the local transaction's guarantee meant in this attempt.
    pub fn guarantee_here(self, l: Locale) -> &'static str {
        match self {
            Tone::Committed => td_string!(l, guarantee.here_committed),
            Tone::RolledBack => td_string!(l, guarantee.here_rolled_back),
            Tone::Refused => td_string!(l, guarantee.here_refused),
            Tone::Unknown => td_string!(l, guarantee.here_unknown),
            Tone::Broken => td_string!(l, guarantee.here_broken),
            Tone::Neutral => td_string!(l, guarantee.here_none),
        }
    }
}
