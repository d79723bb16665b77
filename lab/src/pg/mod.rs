//! The runner on a real PostgreSQL (feature `postgres`).
//!
//! - [`ticket_function`]: the lesson's transaction with its crash points as named stops;
//!   [`ticket_statements`]: the statements it and Trace A ([`naive`]) share.
//! - [`pauses`]: the hook that holds a scenario's code at its crash points.
//! - [`kafka_topic`]: the simulated topic and the History consumer's reads on PostgreSQL.
//! - [`ticket_race`]: two requests resolving ticket-42 at once, on two connections.
//! - [`crash`]: killing a connection without a goodbye, and proving the backend is gone.
//! - [`wire_fault`]: a TCP relay that loses a COMMIT or its reply.
//! - [`sandbox`], [`names`]: per-learner schemas, their registry and identifiers.
//! - [`replays`]: shared runs kept for replay links.
//! - [`stepper`]: the same function held at each pause, for the learner to step through;
//!   `stepping`: the runs this process holds.
//! - [`pending`]: the last attempt, kept for reconciliation.
//! - [`runner`]: [`Lab`], the façade every action goes through; `actions`: one file per action.

mod actions;
pub mod budget;
pub mod consumer;
pub mod crash;
pub mod database;
pub mod error;
pub mod kafka_topic;
mod lock_conns;
pub mod naive;
pub mod names;
pub mod outage;
pub mod pauses;
pub mod pending;
pub mod publisher;
pub mod replays;
pub mod runner;
pub mod sandbox;
pub mod sandbox_lock;
pub mod sandbox_tx;
pub mod stepper;
mod stepping;
pub mod ticket_function;
pub mod ticket_race;
pub mod ticket_statements;
pub mod trace;
pub mod wire_fault;

pub use actions::AnswerVerdict;
pub use error::LabError;
pub use names::{FrameTokens, SandboxToken, SchemaName};
pub use replays::{ReplayId, ReplayPolicy};
pub use runner::{Lab, LabConfig};
pub use sandbox::RateLimit;
