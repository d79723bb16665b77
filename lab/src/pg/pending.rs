//! The last attempt kept for reconciliation, and what an action does to it. Kept beside the
//! sandbox's notes in PostgreSQL; the runner, the sandbox lock and the stepper all pass it on.

use serde::{Deserialize, Serialize};

use crate::input::AttemptSettings;
use crate::snapshot::Snapshot;

/// The last attempt's ids and settings, kept for reconciliation.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PendingAttempt {
    /// Empty when the transaction never got one (a stepped run that wrote nothing).
    pub xid: String,
    pub settings: AttemptSettings,
    pub before: Snapshot,
    /// A stepped run's other writer went on after the run ended (see `model::other_writer`).
    #[serde(default)]
    pub writer_after: bool,
}

/// What an action does to the kept attempt: replaces it, forgets it, or leaves it as it is.
pub(super) enum Pending {
    Set(Box<PendingAttempt>),
    Clear,
    Keep,
}
