//! Recording the SQL trace while an action runs.

use std::time::Instant;

use crate::catalog::Step;
use crate::sql_trace::{Actor, Answer, Lane, Sent, TraceStep, TxState};

use super::error::{is_connection_failure, sqlstate};

/// Collects trace steps with their time since the action started.
pub struct Tracer {
    start: Instant,
    steps: Vec<TraceStep>,
    lane: Option<Lane>,
    /// The function's step that the next records belong to.
    step: Option<Step>,
    /// While set, `enter` changes nothing: a scenario run inside another's step (Trace A's
    /// service consumes inside its publish step) keeps that step.
    pinned: bool,
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
            lane: None,
            step: None,
            pinned: false,
        }
    }

    /// A tracer for one lane of a race, on the race's clock.
    pub fn lane(start: Instant, lane: Lane) -> Self {
        Tracer {
            start,
            steps: Vec::new(),
            lane: Some(lane),
            step: None,
            pinned: false,
        }
    }

    /// When the action started (a lane of it runs on the same clock).
    pub fn start(&self) -> Instant {
        self.start
    }

    /// Microseconds since the action started.
    pub fn now_us(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// The steps of several lanes, in the order they happened.
    pub fn merge(start: Instant, lanes: Vec<Tracer>) -> Tracer {
        let mut steps: Vec<TraceStep> = lanes.into_iter().flat_map(|t| t.steps).collect();
        steps.sort_by_key(|s| s.at_us);
        Tracer {
            start,
            steps,
            lane: None,
            step: None,
            pinned: false,
        }
    }

    /// From now on, records belong to `step` of the function.
    pub fn enter(&mut self, step: Step) {
        if !self.pinned {
            self.step = Some(step);
        }
    }

    /// Keeps the current step until [`Tracer::unpin`], whatever is entered meanwhile.
    pub fn pin(&mut self) {
        self.pinned = true;
    }

    pub fn unpin(&mut self) {
        self.pinned = false;
    }

    pub fn push(&mut self, actor: Actor, sent: Sent, answer: Answer, tx: TxState) {
        let at_us = self.now_us();
        self.steps.push(TraceStep {
            actor,
            sent,
            answer,
            tx,
            at_us,
            lane: self.lane,
            answered_us: None,
            step: self.step,
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

    pub fn steps(&self) -> &[TraceStep] {
        &self.steps
    }

    pub fn steps_mut(&mut self) -> &mut [TraceStep] {
        &mut self.steps
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
