//! One learner action per file, each an `impl Lab` block: what the action runs, and how its
//! report is built. The façade ([`super::runner::Lab`]) holds what they share: the pools, the
//! sandbox lock, and judging a report against the model before keeping it.

mod after_commit;
pub(super) use after_commit::{consumed_outcome, publisher_outcome};
mod attempt;
pub(super) use attempt::fault_of;
mod compare_sandboxes;
mod quests;
pub use quests::AnswerVerdict;
mod race;
mod reconcile;
mod reset;
mod sandbox_progress;
mod share;
