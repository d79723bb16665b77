//! Recording the SQL trace while an action runs.

use std::time::Instant;

use crate::outcome::{Actor, Answer, Sent, TraceStep, TxState};

use super::error::{is_connection_failure, sqlstate};

/// Collects trace steps with their time since the action started.
pub struct Tracer {
    start: Instant,
    steps: Vec<TraceStep>,
}

impl Default for Tracer {
    fn default() -> Self {
        Self::new()
    }
}

impl Tracer {
    pub fn new() -> Self {
        Tracer {
            start: Instant::now(),
            steps: Vec::new(),
        }
    }

    pub fn push(&mut self, actor: Actor, sent: Sent, answer: Answer, tx: TxState) {
        let at_us = u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.steps.push(TraceStep {
            actor,
            sent,
            answer,
            tx,
            at_us,
        });
    }

    /// Records a statement with its parameters as they were bound.
    pub fn sql(&mut self, actor: Actor, sql: &str, params: &[&str], answer: Answer, tx: TxState) {
        let sent = Sent::Sql {
            sql: sql.to_owned(),
            params: params.iter().map(|p| (*p).to_owned()).collect(),
        };
        self.push(actor, sent, answer, tx);
    }

    /// The transaction state after the last step.
    pub fn last_tx(&self) -> Option<TxState> {
        self.steps.last().map(|s| s.tx)
    }

    pub fn into_steps(self) -> Vec<TraceStep> {
        self.steps
    }
}

/// PostgreSQL's answer as the trace shows it.
pub fn answer_of(err: &sqlx::Error) -> Answer {
    match err {
        sqlx::Error::Database(db) => Answer::Error {
            sqlstate: sqlstate(err).unwrap_or_default(),
            message: db.message().to_owned(),
        },
        e if is_connection_failure(e) => Answer::Io {
            message: e.to_string(),
        },
        other => Answer::Io {
            message: other.to_string(),
        },
    }
}

pub fn rows(n: u64) -> Answer {
    Answer::Ok { rows: Some(n) }
}

pub fn done() -> Answer {
    Answer::Ok { rows: None }
}
