//! The pause hook: where a scenario's code (the ticket function, the publisher, the consumer)
//! stops between two statements, and who decides what happens there. The one-shot run decides
//! up front ([`Planned`]); the stepper asks the learner.

use sqlx::PgConnection;

use crate::catalog::{CrashPoint, Mode, PausePoint, Step};

use super::error::LabError;
use super::trace::Tracer;

/// What happens at a pause of the function (a crash point of its mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Go {
    /// The next statement runs.
    On,
    /// The process dies here.
    Die,
}

/// A pause as a scenario's code reaches it: the crash point, and the step that runs next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Here {
    pub point: PausePoint,
    /// `None` when the code would simply return.
    pub next: Option<Step>,
}

impl Here {
    /// A pause of the ticket function in `mode`.
    pub fn ticket(mode: Mode, point: CrashPoint) -> Here {
        Here {
            point: PausePoint::Ticket(point),
            next: mode.step_after(point),
        }
    }
}

/// Holds a scenario's code at its pauses — the ticket function's, the publisher's and the
/// consumer's alike. The one-shot run decides up front ([`Planned`]); the stepper asks the
/// learner.
pub trait Pauses: Send {
    /// Called at each crash point the code reaches, in order (the publisher's and the
    /// consumer's once per row or event). `conn` is the scenario's connection while its
    /// transaction is open (`None` otherwise).
    fn at(
        &mut self,
        here: Here,
        conn: Option<&mut PgConnection>,
        trace: &mut Tracer,
    ) -> impl std::future::Future<Output = Result<Go, LabError>> + Send;

    /// Whether BEGIN forces a transaction id at once (the one-shot run notes it for
    /// reconciliation); the stepper lets PostgreSQL assign it at the first write.
    fn forces_xid(&self) -> bool {
        true
    }
}

/// The one-shot run: the process dies the first time it reaches the chosen crash point,
/// nowhere else.
pub struct Planned(pub PausePoint);

impl Pauses for Planned {
    async fn at(
        &mut self,
        here: Here,
        _conn: Option<&mut PgConnection>,
        _trace: &mut Tracer,
    ) -> Result<Go, LabError> {
        Ok(if here.point == self.0 {
            Go::Die
        } else {
            Go::On
        })
    }
}
