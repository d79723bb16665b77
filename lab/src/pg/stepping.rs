//! The stepped runs this process holds: which sandboxes are being stepped, and the slots
//! (connections) that costs. The runner asks it before any other action on a sandbox; the
//! stepper claims from it.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::error::LabError;
use super::names::SchemaName;

/// The stepped connection's `application_name`: other server processes find a sandbox's
/// stepped transaction by it.
pub const APPLICATION_PREFIX: &str = "outbox-step:";

/// Which sandboxes are being stepped in this process, and how many connections that holds.
pub struct Stepping {
    active: Mutex<HashSet<String>>,
    slots: Arc<Semaphore>,
    /// Other writers' connections.
    pub(super) writers: Arc<Semaphore>,
}

impl Stepping {
    pub fn new(sessions: usize, writers: usize) -> Self {
        Stepping {
            active: Mutex::new(HashSet::new()),
            slots: Arc::new(Semaphore::new(sessions)),
            writers: Arc::new(Semaphore::new(writers)),
        }
    }

    pub fn holds(&self, sandbox: &SchemaName) -> bool {
        self.set().contains(sandbox.as_str())
    }

    /// Runs held at this moment.
    pub fn held(&self) -> usize {
        self.set().len()
    }

    /// Claims a slot of this process and `sandbox` for a stepped run.
    pub(super) fn claim(&self, sandbox: &SchemaName) -> Result<Claim<'_>, LabError> {
        let slot = Arc::clone(&self.slots)
            .try_acquire_owned()
            .map_err(|_| LabError::StepLimit)?;
        if !self.set().insert(sandbox.to_string()) {
            return Err(LabError::StepBusy);
        }
        Ok(Claim {
            stepping: self,
            sandbox: sandbox.to_string(),
            _slot: slot,
        })
    }

    fn set(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.active
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A run's claim on its sandbox and on one of the process's slots; released on drop.
pub(super) struct Claim<'a> {
    stepping: &'a Stepping,
    sandbox: String,
    _slot: OwnedSemaphorePermit,
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        self.stepping.set().remove(&self.sandbox);
    }
}
