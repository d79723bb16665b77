//! The runner on a real PostgreSQL (feature `postgres`).
//!
//! - [`attempt`]: the lesson's transaction with its crash points as named stops.
//! - [`crash`]: killing a connection without a goodbye, and proving the backend is gone.
//! - [`wire_fault`]: a TCP relay that loses a COMMIT or its reply.
//! - [`sandbox`], [`names`]: per-learner schemas, their registry and identifiers.
//! - [`replays`]: shared runs kept for replay links.
//! - [`stepper`]: the same function held at each pause, for the learner to step through.
//! - [`runner`]: [`Lab`], the façade every action goes through; `actions`: one file per action.

mod actions;
pub mod attempt;
pub mod broker;
pub mod budget;
pub mod consumer;
pub mod crash;
pub mod database;
pub mod error;
mod lock_conns;
pub mod naive;
pub mod names;
pub mod outage;
pub mod publisher;
pub mod race;
pub mod replays;
pub mod runner;
pub mod sandbox;
pub mod sandbox_lock;
pub mod sandbox_tx;
pub mod stepper;
pub mod trace;
pub mod wire_fault;

pub use actions::AnswerVerdict;
pub use error::LabError;
pub use names::{FrameTokens, SandboxToken, SchemaName};
pub use replays::{ReplayId, ReplayPolicy};
pub use runner::{Lab, LabConfig};
pub use sandbox::RateLimit;
