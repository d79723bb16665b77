//! The process's connection budget, and the permits an action takes from it in one step.
//!
//! An action that held one pooled connection and then asked the same pool for another could
//! wait for itself: thirty learners pressing Race together each held two and waited for a
//! third, and every one of them timed out. So every action declares up front what it holds at
//! once ([`Needs`]: lock connections, working connections) and takes all of it before it
//! touches a pool, always in the same order (locks, then work). An action that holds its
//! permits finds its connections free; one that does not yet hold them holds nothing while it
//! waits. Past a bound of waiting actions a new one is refused at once as busy, never after a
//! stall.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{Semaphore, SemaphorePermit};

use super::error::LabError;

/// What one action holds at the same moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Needs {
    /// Connections of the lock pool (one per sandbox whose lock it holds at once).
    pub locks: u32,
    /// Connections of the working pool.
    pub work: u32,
}

impl Needs {
    /// The sandbox's lock and `work` working connections.
    pub const fn locked(work: u32) -> Needs {
        Needs { locks: 1, work }
    }

    /// The lesson's transaction runs on the lock's own session; a working connection serves
    /// a statement "outside the transaction" or Trace A's simulated broker (which commits on
    /// its own). A crashing attempt's transaction is on a connection of its own, and one
    /// working connection waits for its backend to go; the mistake `new_event_id_on_retry`
    /// runs its retry on one.
    pub fn attempt(spec: &crate::input::AttemptSpec) -> Needs {
        use crate::catalog::{Mistake, Mode};
        let beside = spec.mode != Mode::Outbox
            || spec.mistakes.has(Mistake::InsertOutsideTx)
            || spec.mistakes.has(Mistake::UpdateOutsideTx);
        let apart = spec.crash.kills_process() || spec.mistakes.has(Mistake::NewEventIdOnRetry);
        Needs::locked(u32::from(apart) + u32::from(beside))
    }

    /// The most any attempt holds (a comparison's side may be any of them).
    pub const ANY_ATTEMPT: Needs = Needs::locked(2);
    /// Two sessions, and a third that watches B wait.
    pub const RACE: Needs = Needs::locked(3);
    /// Two publishers, and the broker's commit or a third session that watches B wait.
    pub const PUBLISH_RACE: Needs = Needs::locked(3);
    /// One working connection at a time (reopen, reconcile; restart and consume beside the
    /// connection of their own that may be killed).
    pub const ONE: Needs = Needs::locked(1);
    /// The reset runs on the lock's own connection.
    pub const RESET: Needs = Needs::locked(0);
    /// The learner's sandbox locked while each side's sandbox is locked in turn, and a side's
    /// attempt.
    pub const COMPARE: Needs = Needs {
        locks: 2,
        work: Needs::ANY_ATTEMPT.work,
    };
}

/// Permits for the two pools, and the queue of actions waiting for them.
pub struct Budget {
    locks: Semaphore,
    work: Semaphore,
    lock_total: u32,
    work_total: u32,
    waiting: AtomicUsize,
    max_waiting: usize,
    wait_limit: Duration,
}

/// An action's permits; given back when dropped.
#[must_use]
pub struct Reservation<'a> {
    _locks: Option<SemaphorePermit<'a>>,
    _work: Option<SemaphorePermit<'a>>,
}

/// Counts one waiting action for as long as it waits.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Budget {
    pub fn new(locks: u32, work: u32, max_waiting: usize, wait_limit: Duration) -> Budget {
        Budget {
            locks: Semaphore::new(locks as usize),
            work: Semaphore::new(work as usize),
            lock_total: locks,
            work_total: work,
            waiting: AtomicUsize::new(0),
            max_waiting,
            wait_limit,
        }
    }

    /// Takes `needs` in one step: at once when free, else in turn behind the actions already
    /// waiting; [`LabError::Busy`] when too many wait already or the turn does not come within
    /// the wait limit.
    pub async fn reserve(&self, needs: Needs) -> Result<Reservation<'_>, LabError> {
        if needs.locks > self.lock_total || needs.work > self.work_total {
            return Err(LabError::Config(format!(
                "an action needs {needs:?}, more than the pools hold ({} lock, {} working)",
                self.lock_total, self.work_total
            )));
        }
        if self.waiting.load(Ordering::Relaxed) == 0
            && let Some(reservation) = self.try_reserve(needs)
        {
            return Ok(reservation);
        }
        if self.waiting.fetch_add(1, Ordering::Relaxed) >= self.max_waiting {
            self.waiting.fetch_sub(1, Ordering::Relaxed);
            return Err(LabError::Busy);
        }
        let _waiting = Waiting(&self.waiting);
        let take = async {
            let locks = take(&self.locks, needs.locks).await?;
            let work = take(&self.work, needs.work).await?;
            Ok(Reservation {
                _locks: locks,
                _work: work,
            })
        };
        match tokio::time::timeout(self.wait_limit, take).await {
            Ok(reserved) => reserved,
            Err(_) => Err(LabError::Busy),
        }
    }

    fn try_reserve(&self, needs: Needs) -> Option<Reservation<'_>> {
        let locks = try_take(&self.locks, needs.locks)?;
        let work = try_take(&self.work, needs.work)?;
        Some(Reservation {
            _locks: locks,
            _work: work,
        })
    }

    /// Actions waiting for their permits now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }
}

async fn take(semaphore: &Semaphore, n: u32) -> Result<Option<SemaphorePermit<'_>>, LabError> {
    if n == 0 {
        return Ok(None);
    }
    semaphore
        .acquire_many(n)
        .await
        .map(Some)
        .map_err(|_| LabError::Config("the runner is shutting down".into()))
}

/// `Some(None)` for nothing to take; `None` when the permits are not free now.
fn try_take(semaphore: &Semaphore, n: u32) -> Option<Option<SemaphorePermit<'_>>> {
    if n == 0 {
        return Some(None);
    }
    semaphore.try_acquire_many(n).ok().map(Some)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[tokio::test]
    async fn actions_needing_more_than_one_connection_all_finish_in_turn() {
        // Eight actions that each hold three connections at once, on a pool of four: taken
        // one at a time they would wait for themselves; taken in one step each finishes.
        let budget = Arc::new(Budget::new(8, 4, 100, Duration::from_secs(5)));
        let barrier = Arc::new(tokio::sync::Barrier::new(8));
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let (budget, barrier) = (Arc::clone(&budget), Arc::clone(&barrier));
                tokio::spawn(async move {
                    barrier.wait().await;
                    let _held = budget.reserve(Needs::locked(3)).await?;
                    tokio::task::yield_now().await;
                    Ok::<(), LabError>(())
                })
            })
            .collect();
        for task in tasks {
            assert!(matches!(task.await, Ok(Ok(()))));
        }
    }

    #[tokio::test]
    async fn past_the_bound_of_waiting_actions_one_is_refused_at_once() {
        let budget = Budget::new(1, 1, 1, Duration::from_secs(60));
        let held = budget.reserve(Needs::locked(1)).await;
        assert!(held.is_ok());
        let waiter = budget.reserve(Needs::locked(1));
        tokio::pin!(waiter);
        // The first waiter queues...
        assert!(futures_poll_once(&mut waiter).await.is_none());
        assert_eq!(budget.waiting(), 1);
        // ...and the next one is told at once.
        let refused = budget.reserve(Needs::locked(1)).await;
        assert!(matches!(refused, Err(LabError::Busy)));
    }

    #[tokio::test]
    async fn a_need_larger_than_the_pool_is_a_configuration_error() {
        let budget = Budget::new(1, 2, 10, Duration::from_secs(1));
        assert!(matches!(
            budget.reserve(Needs::locked(3)).await,
            Err(LabError::Config(_))
        ));
    }

    async fn futures_poll_once<F: Future + Unpin>(f: &mut F) -> Option<F::Output> {
        std::future::poll_fn(|cx| match std::pin::Pin::new(&mut *f).poll(cx) {
            std::task::Poll::Ready(v) => std::task::Poll::Ready(Some(v)),
            std::task::Poll::Pending => std::task::Poll::Ready(None),
        })
        .await
    }
}
