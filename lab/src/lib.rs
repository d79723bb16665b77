//! Lesson 8.2's domain: change a ticket's status and write its outbox row in one PostgreSQL
//! transaction, and see what each crash point really leaves behind.
//!
//! - [`catalog`]: crash points, fates, outcomes, failure-table rows — declared once.
//! - [`input`]: learner input, parsed into valid values.
//! - [`model`]: the reference model, a pure prediction of every action.
//! - [`broker`]: the simulated topic, the outbox publisher and the History consumer.
//! - [`report`]: the report that every action answers (shared with the browser).
//! - [`snapshot`]: the sandbox's tables, read in one consistent snapshot.
//! - [`sql_trace`]: the SQL trace, step by step.
//! - [`prediction`]: what the learner expected, and the judgement's shape.
//! - `prediction_judge`: a prediction judged against the tables afterwards.
//! - [`progress`]: which failure-table rows and wrong ways a sandbox has produced.
//! - [`step`]: the stepper's messages (a transaction held between statements).
//! - [`stepped`]: how a stepped run ended, as its report carries it.
//! - [`trail`]: where an attempt ended, as the timeline draws it.
//! - [`ladder`]: the guarantee ladder, 8.2 to 8.4, read off the tables.
//! - [`quest`]: goals the learner makes PostgreSQL reach, judged on the tables.
//! - [`replay`]: a run played back step by step, its tables rebuilt from the report.
//! - `export` (feature `export`, server-only): a run as psql scripts to replay it.
//! - `pg` (feature `postgres`): the runner on a real PostgreSQL.

pub mod broker;
#[macro_use]
pub mod catalog;
pub mod compare;
#[cfg(feature = "export")]
pub mod export;
pub mod input;
pub mod ladder;
pub mod model;
pub mod prediction;
mod prediction_judge;
pub mod progress;
pub mod quest;
pub mod replay;
pub mod report;
pub mod snapshot;
pub mod sql_trace;
pub mod step;
pub mod stepped;
pub mod trail;

#[cfg(feature = "postgres")]
pub mod pg;
