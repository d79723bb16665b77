//! Quests: a goal the learner makes PostgreSQL reach, then a question about why.
//!
//! A quest is data (see `quests/quests.toml` and [`file`]): its goal is one or more stages,
//! each a set of checks on one action's report — conditions on the tables read after the
//! action, and facts of the trace where the claim is about what a caller was told. The stages
//! are reached in order, each by its own action. Nothing here reads the reference model or
//! which buttons were pressed.
//!
//! - [`judge`]: which checks an action's report meets.
//! - [`seen`]: what an action did for each quest, as its report carries it.
//! - [`file`] (feature `quests`, server-only): the file, parsed and checked against the catalogue.

pub mod author;
#[cfg(feature = "quests")]
pub mod file;
pub mod judge;
pub mod seen;

use serde::{Deserialize, Serialize};

/// A sentence in both of the course's languages.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Text {
    pub ru: String,
    pub en: String,
}

impl Text {
    /// The text in `lang` (`"en"`; anything else is the course's Russian).
    pub fn get(&self, lang: &str) -> &str {
        if lang == "en" { &self.en } else { &self.ru }
    }
}

/// The tables a check may read, by the names the page shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Table {
    Tickets,
    Outbox,
    KafkaLog,
    History,
    Inbox,
}

impl Table {
    pub const ALL: &'static [Table] = &[
        Table::Tickets,
        Table::Outbox,
        Table::KafkaLog,
        Table::History,
        Table::Inbox,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Table::Tickets => "tickets",
            Table::Outbox => "outbox",
            Table::KafkaLog => "kafka_log",
            Table::History => "history",
            Table::Inbox => "inbox",
        }
    }

    pub fn parse(id: &str) -> Option<Table> {
        Table::ALL.iter().copied().find(|t| t.id() == id)
    }

    /// The table's columns, as PostgreSQL names them.
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            Table::Tickets => &["id", "status"],
            Table::Outbox => &["event_id", "aggregate_id", "payload", "published_at"],
            Table::KafkaLog => &["log_offset", "key", "value"],
            Table::History => &["event_id", "ticket_id", "to_status"],
            Table::Inbox => &["event_id"],
        }
    }
}

/// A claim about what went over the wire or what a caller was told, read from the trace (and
/// from what PostgreSQL reported while the action ran).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fact {
    /// The service sent COMMIT and its reply never came: the caller cannot tell.
    CommitReplyLost,
    /// The service's COMMIT was answered: its caller was told "done".
    CommitConfirmed,
    /// A reconciliation decided the last attempt from the database alone, and its two ways
    /// (the stable ids, `pg_xact_status`) agree.
    ProvenFromDatabase,
    /// The stepper's other writer was seen waiting, blocked by the held transaction.
    OtherWriterWaited,
    /// The other writer's UPDATE finished having changed no row.
    OtherWriterFoundZeroRows,
    /// Both requests of a race changed ticket-42 and had their COMMIT answered.
    TwoCallersToldResolved,
    /// The service process died mid-function: no ROLLBACK, the socket just closed.
    ServiceCrashed,
    /// The service's UPDATE of ticket-42 was answered with 0 rows changed.
    UpdateChangedNothing,
}

impl Fact {
    pub const ALL: &'static [Fact] = &[
        Fact::CommitReplyLost,
        Fact::CommitConfirmed,
        Fact::ProvenFromDatabase,
        Fact::OtherWriterWaited,
        Fact::OtherWriterFoundZeroRows,
        Fact::TwoCallersToldResolved,
        Fact::ServiceCrashed,
        Fact::UpdateChangedNothing,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Fact::CommitReplyLost => "commit_reply_lost",
            Fact::CommitConfirmed => "commit_confirmed",
            Fact::ProvenFromDatabase => "proven_from_database",
            Fact::OtherWriterWaited => "other_writer_waited",
            Fact::OtherWriterFoundZeroRows => "other_writer_found_zero_rows",
            Fact::TwoCallersToldResolved => "two_callers_told_resolved",
            Fact::ServiceCrashed => "service_crashed",
            Fact::UpdateChangedNothing => "update_changed_nothing",
        }
    }

    pub fn parse(id: &str) -> Option<Fact> {
        Fact::ALL.iter().copied().find(|f| f.id() == id)
    }
}

/// How many rows a table check wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rows {
    Exactly(u32),
    AtLeast(u32),
}

impl Rows {
    pub fn holds(self, n: usize) -> bool {
        match self {
            Rows::Exactly(want) => n == want as usize,
            Rows::AtLeast(want) => n >= want as usize,
        }
    }
}

/// What one check asks of an action's report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    /// Rows of `table` whose columns equal (`equal`), contain (`contain`), are NULL (`null`)
    /// or are not (`not_null`), counted against `rows`.
    Rows {
        table: Table,
        equal: Vec<(String, String)>,
        contain: Vec<(String, String)>,
        null: Vec<String>,
        not_null: Vec<String>,
        rows: Rows,
    },
    Fact(Fact),
}

/// A condition and the sentence that states it to the learner.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    pub condition: Condition,
    pub says: Text,
}

/// What one action must leave behind; a quest's stages are met by successive actions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stage {
    pub checks: Vec<Check>,
}

/// A way that cannot reach the goal: after `after` attempts in `mode`, the quest says so.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadEnd {
    pub mode: crate::catalog::Mode,
    pub after: u32,
    pub says: Text,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choice {
    pub id: String,
    pub text: Text,
    pub right: bool,
    /// For a wrong choice: the misunderstanding it shows, named.
    pub why: Option<Text>,
    /// The prediction sentence this answer's misunderstanding matches, if any (for authors).
    pub why_id: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Question {
    pub ask: Text,
    pub choices: Vec<Choice>,
}

impl Question {
    pub fn choice(&self, id: &str) -> Option<&Choice> {
        self.choices.iter().find(|c| c.id == id)
    }
}

/// Which part of the playground a quest is reached in (for grouping the list).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Area {
    Ticket,
    TraceA,
    Race,
    AfterCommit,
}

impl Area {
    pub const ALL: &'static [Area] = &[Area::Ticket, Area::TraceA, Area::Race, Area::AfterCommit];

    pub fn id(self) -> &'static str {
        match self {
            Area::Ticket => "ticket",
            Area::TraceA => "trace_a",
            Area::Race => "race",
            Area::AfterCommit => "after_commit",
        }
    }

    pub fn parse(id: &str) -> Option<Area> {
        Area::ALL.iter().copied().find(|a| a.id() == id)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quest {
    pub id: String,
    pub area: Area,
    pub title: Text,
    pub goal: Text,
    pub stages: Vec<Stage>,
    pub dead_end: Option<DeadEnd>,
    pub question: Question,
    /// Up to three, each closer to a worked example than the one before.
    pub hints: Vec<Text>,
}

/// Every quest the playground offers, in the file's order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestBook {
    pub quests: Vec<Quest>,
}

impl QuestBook {
    pub fn get(&self, id: &str) -> Option<&Quest> {
        self.quests.iter().find(|q| q.id == id)
    }
}

/// Longest quest id the registry accepts (`lab.quest_progress`).
pub const MAX_ID_LEN: usize = 40;

/// Whether `id` is a well-formed quest or choice id: lowercase letters, digits, `_`.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// One learner's standing on one quest, as `/api/quests` answers it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestState {
    pub id: String,
    pub reached: bool,
    /// Stages met so far (equal to the quest's stage count once reached).
    pub stage: u32,
    /// `null` until answered; then whether a right answer has been given.
    pub explained: Option<bool>,
    pub hints_used: u32,
    /// Attempts made in the quest's dead-end mode while it was not reached.
    pub tries: u32,
    /// The choice the learner gave last, if any.
    pub last_answer: Option<String>,
}

impl QuestState {
    pub fn fresh(id: &str) -> Self {
        QuestState {
            id: id.to_owned(),
            reached: false,
            stage: 0,
            explained: None,
            hints_used: 0,
            tries: 0,
            last_answer: None,
        }
    }
}
