//! The runner: every learner action on a real PostgreSQL, each answered by a [`Report`] that
//! holds the tables as they really are afterwards, the SQL trace, and the model's prediction.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions, PgSslMode};
use sqlx::types::Json;
use sqlx::{ConnectOptions, Connection, PgConnection, PgPool};
use tokio::sync::Semaphore;

use crate::catalog::{ActionKind, CommitFate, Mistake, OutcomeId, Setup, names};
use crate::compare;
use crate::input::{AttemptSpec, Mistakes};
use crate::model;
use crate::outcome::{
    Actor, Answer, AttemptSettings, CompareReport, Expected, RaceReport, Reconciliation, Report,
    Sent, Snapshot, TxState,
};

use super::attempt::{self, Place, Stop};
use super::crash;
use super::database;
use super::error::LabError;
use super::names::{SandboxToken, SchemaName};
use super::race;
use super::sandbox::{self, RateLimit};
use super::sandbox_lock::{LocalLocks, SandboxLock};
use super::sandbox_tx::enter as enter_sandbox;
use super::trace::{Tracer, done, rows};
use super::wire_fault::{CommitFault, Relay, Upstream};

/// Limits and sizes. The defaults suit one server on a small machine.
#[derive(Clone, Debug)]
pub struct LabConfig {
    /// Pooled connections (snapshots, registry, attempts that do not crash).
    pub pool_max: u32,
    /// Attempts that crash run on a connection of their own; at most this many at once.
    pub crash_connections: usize,
    /// Unclaimed sandboxes kept ready.
    pub warm_sandboxes: usize,
    /// The most sandboxes that may exist.
    pub max_sandboxes: u32,
    pub statement_timeout: Duration,
    pub lock_timeout: Duration,
    pub idle_in_transaction_timeout: Duration,
    /// How long a crashed backend may take to exit before the action fails.
    pub backend_exit_timeout: Duration,
    pub acquire_timeout: Duration,
    /// Requests per sandbox: a burst, then a steady rate (shared by all server processes).
    pub rate: RateLimit,
}

impl Default for LabConfig {
    fn default() -> Self {
        LabConfig {
            pool_max: 16,
            crash_connections: 8,
            warm_sandboxes: 4,
            max_sandboxes: 20_000,
            statement_timeout: Duration::from_secs(5),
            lock_timeout: Duration::from_secs(3),
            idle_in_transaction_timeout: Duration::from_secs(10),
            backend_exit_timeout: Duration::from_secs(5),
            acquire_timeout: Duration::from_secs(5),
            // A learner clicks a few times a second at most; a script hammering one sandbox
            // is slowed down before it can crowd out everyone else.
            rate: RateLimit {
                per_second: 10.0,
                burst: 30.0,
            },
        }
    }
}

/// The last attempt's ids and settings, kept for reconciliation.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PendingAttempt {
    pub xid: String,
    pub settings: AttemptSettings,
    pub before: Snapshot,
}

/// The playground's access to PostgreSQL. Cheap to clone.
#[derive(Clone)]
pub struct Lab {
    inner: Arc<Inner>,
}

struct Inner {
    pool: PgPool,
    /// Options for an attempt's own connection (same database, same session limits).
    connect: PgConnectOptions,
    config: LabConfig,
    crash_slots: Semaphore,
    /// One action at a time per sandbox, so each report is judged against its own "before".
    local_locks: LocalLocks,
    /// Connections that hold the sandboxes' advisory locks, apart from the working pool.
    lock_pool: PgPool,
}

impl Lab {
    /// Prepares the database (creates it, migrates) and opens the pool.
    pub async fn open(database_url: &str, config: LabConfig) -> Result<Lab, LabError> {
        let base = database::prepare(database_url).await?;
        Ok(Self::with_options(base, config))
    }

    /// Opens the pool lazily on an already prepared database (tests use this).
    pub fn with_options(base: PgConnectOptions, config: LabConfig) -> Lab {
        let ms = |d: Duration| format!("{}ms", d.as_millis());
        let connect = base
            .options([
                ("statement_timeout", ms(config.statement_timeout)),
                ("lock_timeout", ms(config.lock_timeout)),
                (
                    "idle_in_transaction_session_timeout",
                    ms(config.idle_in_transaction_timeout),
                ),
            ])
            .application_name("outbox-playground")
            .disable_statement_logging();
        let pool = PgPoolOptions::new()
            .max_connections(config.pool_max)
            .acquire_timeout(config.acquire_timeout)
            .connect_lazy_with(connect.clone());
        // As many actions at once as the working pool can serve.
        let lock_pool = PgPoolOptions::new()
            .max_connections(config.pool_max)
            .acquire_timeout(config.acquire_timeout)
            .connect_lazy_with(connect.clone());
        Lab {
            inner: Arc::new(Inner {
                pool,
                connect,
                crash_slots: Semaphore::new(config.crash_connections),
                config,
                local_locks: LocalLocks::default(),
                lock_pool,
            }),
        }
    }

    pub fn pool(&self) -> &PgPool {
        &self.inner.pool
    }

    /// Open connections of both pools (the working pool and the sandbox locks').
    pub fn open_connections(&self) -> u32 {
        self.inner.pool.size() + self.inner.lock_pool.size()
    }

    pub fn config(&self) -> &LabConfig {
        &self.inner.config
    }

    /// One round trip to PostgreSQL.
    pub async fn ping(&self) -> Result<(), LabError> {
        sqlx::query("SELECT 1")
            .execute(self.pool())
            .await
            .map_err(LabError::from_sqlx)?;
        Ok(())
    }

    // ----- sandboxes --------------------------------------------------------------------

    /// A new sandbox for a new learner.
    pub async fn claim_sandbox(&self) -> Result<(SandboxToken, SchemaName), LabError> {
        let claimed = sandbox::claim(self.pool(), self.inner.config.max_sandboxes).await;
        self.refill_soon();
        claimed
    }

    /// The learner's sandbox, if the token still has one. Each call spends one request from
    /// the sandbox's budget; [`LabError::RateLimited`] when it is spent.
    pub async fn find_sandbox(&self, token: &SandboxToken) -> Result<Option<SchemaName>, LabError> {
        sandbox::find(self.pool(), token, &self.inner.config.rate).await
    }

    /// Tops the warm pool up now; returns how many sandboxes were stamped.
    pub async fn refill_warm_pool(&self) -> Result<usize, LabError> {
        let c = &self.inner.config;
        sandbox::refill(self.pool(), c.warm_sandboxes, c.max_sandboxes).await
    }

    /// Drops sandboxes idle for longer than `ttl`; returns how many.
    pub async fn reap_idle(&self, ttl: Duration) -> Result<u64, LabError> {
        sandbox::reap(self.pool(), ttl).await
    }

    fn refill_soon(&self) {
        if self.inner.config.warm_sandboxes == 0 {
            return;
        }
        let lab = self.clone();
        tokio::spawn(async move {
            if let Err(e) = lab.refill_warm_pool().await {
                tracing::warn!(error = %e, "could not top up the warm sandbox pool");
            }
        });
    }

    async fn lock_sandbox(&self, sandbox: &SchemaName) -> Result<SandboxLock, LabError> {
        SandboxLock::acquire(&self.inner.local_locks, &self.inner.lock_pool, sandbox).await
    }

    /// Runs `action` while holding the sandbox's lock.
    async fn locked<T>(
        &self,
        sandbox: &SchemaName,
        action: impl Future<Output = Result<T, LabError>>,
    ) -> Result<T, LabError> {
        let lock = self.lock_sandbox(sandbox).await?;
        let result = action.await;
        // On an error the lock is dropped: its session is closed, which releases it too.
        if result.is_ok()
            && let Err(e) = lock.release().await
        {
            tracing::warn!(error = %e, %sandbox, "could not release a sandbox lock cleanly");
        }
        result
    }

    // ----- reading ------------------------------------------------------------------------

    /// The sandbox's tables, read in one snapshot.
    pub async fn snapshot(&self, sandbox: &SchemaName) -> Result<Snapshot, LabError> {
        let Json(snapshot): Json<Snapshot> = sqlx::query_scalar("SELECT lab.snapshot($1)")
            .bind(sandbox.as_str())
            .fetch_one(self.pool())
            .await
            .map_err(|e| LabError::in_sandbox(e, sandbox.as_str()))?;
        Ok(snapshot)
    }

    /// The report without acting.
    pub async fn snapshot_report(&self, sandbox: &SchemaName) -> Result<Report, LabError> {
        let snapshot = self.snapshot(sandbox).await?;
        Ok(Report::of_snapshot(
            sandbox.to_string(),
            ActionKind::Snapshot,
            snapshot,
        ))
    }

    /// The last action's report, or the tables alone if there was none.
    pub async fn current_report(&self, sandbox: &SchemaName) -> Result<Report, LabError> {
        let saved: Option<Option<Json<serde_json::Value>>> =
            sqlx::query_scalar("SELECT last_report FROM lab.sandboxes WHERE schema_name = $1")
                .bind(sandbox.as_str())
                .fetch_optional(self.pool())
                .await
                .map_err(LabError::from_sqlx)?;
        match saved {
            None => Err(LabError::SandboxGone(sandbox.to_string())),
            // A report saved by an older version may not parse; then show the tables alone.
            Some(saved) => match saved.and_then(|Json(v)| serde_json::from_value(v).ok()) {
                Some(report) => Ok(report),
                None => self.snapshot_report(sandbox).await,
            },
        }
    }

    // ----- actions ------------------------------------------------------------------------

    /// Puts the sandbox back to the lesson's initial state.
    pub async fn reset(&self, sandbox: &SchemaName) -> Result<Report, LabError> {
        self.locked(sandbox, self.reset_locked(sandbox)).await
    }

    async fn reset_locked(&self, sandbox: &SchemaName) -> Result<Report, LabError> {
        let before = self.snapshot(sandbox).await?;
        let mut trace = Tracer::new();
        const RESET: &str = "SELECT lab.reset_sandbox($1)";
        sqlx::query(RESET)
            .bind(sandbox.as_str())
            .execute(self.pool())
            .await
            .map_err(|e| LabError::in_sandbox(e, sandbox.as_str()))?;
        trace.sql(
            Actor::Playground,
            RESET,
            &[sandbox.as_str()],
            done(),
            TxState::Committed,
        );
        let expected = model::predict_state(model::initial_state());
        self.finish(
            sandbox,
            ActionKind::Reset,
            None,
            before,
            trace,
            None,
            expected,
            Pending::Clear,
            |_| {},
        )
        .await
    }

    /// "Support reopens ticket-42": a separate, committed UPDATE; outbox rows stay.
    pub async fn reopen(&self, sandbox: &SchemaName) -> Result<Report, LabError> {
        self.locked(sandbox, self.reopen_locked(sandbox)).await
    }

    async fn reopen_locked(&self, sandbox: &SchemaName) -> Result<Report, LabError> {
        const REOPEN: &str = "UPDATE tickets SET status = 'open' WHERE id = $1";
        let before = self.snapshot(sandbox).await?;
        let mut trace = Tracer::new();
        let mut conn = self.pool().acquire().await.map_err(LabError::from_sqlx)?;
        let mut tx = conn.begin().await.map_err(LabError::from_sqlx)?;
        trace.sql(Actor::Support, "BEGIN", &[], done(), TxState::Open);
        enter_sandbox(&mut tx, sandbox, &mut trace).await?;
        let n = sqlx::query(REOPEN)
            .bind(names::TICKET_ID)
            .execute(&mut *tx)
            .await
            .map_err(|e| LabError::in_sandbox(e, sandbox.as_str()))?
            .rows_affected();
        trace.sql(
            Actor::Support,
            REOPEN,
            &[names::TICKET_ID],
            rows(n),
            TxState::Open,
        );
        tx.commit().await.map_err(LabError::from_sqlx)?;
        trace.sql(Actor::Support, "COMMIT", &[], done(), TxState::Committed);
        drop(conn);
        let expected = model::predict_state(model::reopened(&before));
        self.finish(
            sandbox,
            ActionKind::Reopen,
            None,
            before,
            trace,
            None,
            expected,
            Pending::Clear,
            |_| {},
        )
        .await
    }

    /// Runs the lesson's transaction with the requested crash point.
    pub async fn attempt(
        &self,
        sandbox: &SchemaName,
        spec: &AttemptSpec,
    ) -> Result<Report, LabError> {
        self.locked(sandbox, self.attempt_locked(sandbox, spec))
            .await
    }

    async fn attempt_locked(
        &self,
        sandbox: &SchemaName,
        spec: &AttemptSpec,
    ) -> Result<Report, LabError> {
        let before = self.snapshot(sandbox).await?;
        let expected = model::predict_attempt(&before, spec);
        let mut trace = Tracer::new();
        let place = Place {
            pool: self.pool(),
            sandbox,
        };
        let attempted = if spec.crash.kills_process() {
            self.attempt_on_own_connection(sandbox, spec, &mut trace)
                .await?
        } else {
            let mut conn = self.pool().acquire().await.map_err(LabError::from_sqlx)?;
            attempt::resolve_ticket(&mut conn, place, spec, &mut trace).await?
        };
        let outcome = match attempted.stop {
            Stop::Returned(o) | Stop::Crash(o) => o,
            Stop::CommitUnanswered if spec.mistakes.has(Mistake::NewEventIdOnRetry) => {
                self.retry_with_fresh_id(place, spec, &attempted.xid, &mut trace)
                    .await?
            }
            Stop::CommitUnanswered => OutcomeId::CommitUnknown,
        };
        let pending = PendingAttempt {
            xid: attempted.xid,
            settings: spec.settings(),
            before: before.clone(),
        };
        self.finish(
            sandbox,
            ActionKind::Attempt,
            Some(spec.settings()),
            before,
            trace,
            Some(outcome),
            expected,
            Pending::Set(pending),
            |_| {},
        )
        .await
    }

    /// The mistake `new_event_id_on_retry`: the client takes the unknown COMMIT for a failure
    /// and runs the function again with a fresh event_id.
    async fn retry_with_fresh_id(
        &self,
        place: Place<'_>,
        spec: &AttemptSpec,
        first_xid: &str,
        trace: &mut Tracer,
    ) -> Result<OutcomeId, LabError> {
        const XACT_STATUS: &str = "SELECT pg_xact_status($1::xid8)";
        let retry = spec.fresh_id_retry();
        trace.push(
            Actor::Service,
            Sent::RetryWithNewId {
                event_id: retry.event_id.as_str().to_owned(),
            },
            Answer::Nothing,
            TxState::Idle,
        );
        let mut conn = self.pool().acquire().await.map_err(LabError::from_sqlx)?;
        let again = attempt::resolve_ticket(&mut conn, place, &retry, trace).await?;
        drop(conn);
        let outcome = match again.stop {
            Stop::Returned(o) | Stop::Crash(o) => o,
            Stop::CommitUnanswered => OutcomeId::CommitUnknown,
        };
        Ok(match outcome {
            OutcomeId::GuardRejected => OutcomeId::RetryRefused,
            OutcomeId::Committed | OutcomeId::CommittedSilently => {
                // Did the first COMMIT apply after all? The client cannot tell; the playground
                // asks PostgreSQL, to name what the retry did.
                let status: Option<String> = sqlx::query_scalar(XACT_STATUS)
                    .bind(first_xid)
                    .fetch_one(self.pool())
                    .await
                    .map_err(LabError::from_sqlx)?;
                let values = vec![status.clone().unwrap_or_else(|| "NULL".into())];
                trace.sql(
                    Actor::Playground,
                    XACT_STATUS,
                    &[first_xid],
                    Answer::Values { values },
                    TxState::Idle,
                );
                if status.as_deref() == Some("committed") {
                    OutcomeId::RetryDuplicated
                } else {
                    OutcomeId::RetryCommitted
                }
            }
            other => other,
        })
    }

    /// Two requests resolve ticket-42 at the same moment, on two connections.
    pub async fn race(
        &self,
        sandbox: &SchemaName,
        mistakes: &Mistakes,
    ) -> Result<Report, LabError> {
        self.locked(sandbox, self.race_locked(sandbox, mistakes))
            .await
    }

    async fn race_locked(
        &self,
        sandbox: &SchemaName,
        mistakes: &Mistakes,
    ) -> Result<Report, LabError> {
        let before = self.snapshot(sandbox).await?;
        let expected = model::predict_race(&before, mistakes);
        let limit = self.inner.config.backend_exit_timeout;
        let raced = race::run(self.pool(), sandbox, mistakes, limit).await?;
        let (a_spec, b_spec) = model::race_specs(mistakes);
        let race = RaceReport {
            a: raced.a,
            b: raced.b,
            a_event_id: a_spec.event_id.as_str().to_owned(),
            b_event_id: b_spec.event_id.as_str().to_owned(),
            lock_wait: raced.lock_wait,
        };
        self.finish(
            sandbox,
            ActionKind::Race,
            Some(a_spec.settings()),
            before,
            raced.trace,
            Some(model::race_outcome(raced.a, raced.b)),
            expected,
            Pending::Clear,
            |r| r.race = Some(race),
        )
        .await
    }

    // ----- comparing ----------------------------------------------------------------------

    /// Runs `spec` (a wrong way) and its outbox counterpart side by side, each in a sandbox of
    /// its own that belongs to the learner's `main` sandbox, from the same starting state.
    pub async fn compare(
        &self,
        main: &SchemaName,
        spec: &AttemptSpec,
    ) -> Result<CompareReport, LabError> {
        self.locked(main, self.compare_locked(main, spec)).await
    }

    async fn compare_locked(
        &self,
        main: &SchemaName,
        spec: &AttemptSpec,
    ) -> Result<CompareReport, LabError> {
        let (left, right) = match sandbox::compare_pair(self.pool(), main).await? {
            Some(pair) => pair,
            None => {
                let (_, left) = self.claim_sandbox().await?;
                let (_, right) = self.claim_sandbox().await?;
                sandbox::set_compare_pair(self.pool(), main, &left, &right).await?;
                (left, right)
            }
        };
        // Both sides must meet the same network: a random fate is drawn once for both.
        let mut spec = spec.clone();
        if spec.commit_fate == CommitFate::Random {
            spec.commit_fate = if rand::random::<bool>() {
                CommitFate::Applied
            } else {
                CommitFate::NotApplied
            };
        }
        let spec = &spec;
        let setup = compare::setup_for(&spec.mistakes);
        let outbox = self
            .compare_side(&left, setup, &spec.outbox_counterpart())
            .await?;
        let wrong = self.compare_side(&right, setup, spec).await?;
        let report = CompareReport {
            setup,
            difference: compare::difference(&outbox, &wrong),
            outbox,
            wrong,
        };
        sandbox::save_compare(self.pool(), main, &report).await?;
        Ok(report)
    }

    async fn compare_side(
        &self,
        sandbox: &SchemaName,
        setup: Setup,
        spec: &AttemptSpec,
    ) -> Result<Report, LabError> {
        self.reset(sandbox).await?;
        if let Some(earlier) = compare::setup_attempt(setup, spec) {
            self.attempt(sandbox, &earlier).await?;
        }
        if setup == Setup::ResolvedThenReopened {
            self.reopen(sandbox).await?;
        }
        self.attempt(sandbox, spec).await
    }

    /// The learner's last comparison, if any (and if it still reads).
    pub async fn last_compare(&self, main: &SchemaName) -> Result<Option<CompareReport>, LabError> {
        sandbox::last_compare(self.pool(), main).await
    }

    /// An attempt whose process dies (or whose network fails) gets a connection of its own,
    /// so killing it never touches the pool.
    async fn attempt_on_own_connection(
        &self,
        sandbox: &SchemaName,
        spec: &AttemptSpec,
        trace: &mut Tracer,
    ) -> Result<attempt::Attempted, LabError> {
        let _slot = self
            .inner
            .crash_slots
            .acquire()
            .await
            .map_err(|_| LabError::Config("the runner is shutting down".into()))?;
        let relay = if spec.crash.needs_relay() {
            Some(self.start_relay(spec.commit_fate).await?)
        } else {
            None
        };
        let options = match &relay {
            Some(relay) => self
                .inner
                .connect
                .clone()
                .host("127.0.0.1")
                .port(relay.port())
                .ssl_mode(PgSslMode::Disable),
            None => self.inner.connect.clone(),
        };
        let mut conn = PgConnection::connect_with(&options)
            .await
            .map_err(LabError::from_sqlx)?;
        let place = Place {
            pool: self.pool(),
            sandbox,
        };
        let attempted = attempt::resolve_ticket(&mut conn, place, spec, trace).await?;
        match attempted.stop {
            Stop::Returned(_) => {
                // The function returned before its crash point: the process lives on.
                conn.close().await.map_err(LabError::from_sqlx)?;
            }
            Stop::Crash(_) => {
                let tx = trace_tx_after_crash(trace);
                crash::kill(conn).await;
                trace.push(Actor::Service, Sent::ProcessCrashed, Answer::Nothing, tx);
                self.observe_backend_exit(attempted.backend_pid, tx, trace)
                    .await?;
            }
            Stop::CommitUnanswered => {
                drop(conn);
                if let Some(relay) = relay {
                    let seen = relay
                        .finish(self.inner.config.backend_exit_timeout)
                        .await
                        .map_err(LabError::Relay)?;
                    tracing::debug!(?seen, "relay finished");
                }
                trace.push(
                    Actor::Network,
                    Sent::ConnectionCut,
                    Answer::Nothing,
                    TxState::Unknown,
                );
                // The client still does not know; the trace must not tell either.
                self.observe_backend_exit(attempted.backend_pid, TxState::Unknown, trace)
                    .await?;
            }
        }
        Ok(attempted)
    }

    async fn start_relay(&self, fate: CommitFate) -> Result<Relay, LabError> {
        let c = &self.inner.connect;
        if c.get_socket().is_some()
            || matches!(
                c.get_ssl_mode(),
                PgSslMode::Require | PgSslMode::VerifyCa | PgSslMode::VerifyFull
            )
        {
            return Err(LabError::RelayUnsupported);
        }
        let fault = match fate {
            CommitFate::Applied => CommitFault::DropReply,
            CommitFate::NotApplied => CommitFault::DropCommit,
            CommitFate::Random if rand::random::<bool>() => CommitFault::DropReply,
            CommitFate::Random => CommitFault::DropCommit,
        };
        let upstream = Upstream {
            host: c.get_host().to_owned(),
            port: c.get_port(),
        };
        Relay::start(upstream, fault).await.map_err(LabError::Relay)
    }

    /// Waits until PostgreSQL's backend of a dead connection exits, and records it.
    async fn observe_backend_exit(
        &self,
        pid: i32,
        tx_before: TxState,
        trace: &mut Tracer,
    ) -> Result<(), LabError> {
        crash::wait_until_gone(self.pool(), pid, self.inner.config.backend_exit_timeout).await?;
        let tx = match tx_before {
            TxState::Abandoned => TxState::RolledBack,
            other => other,
        };
        trace.push(
            Actor::Postgres,
            Sent::BackendGone { pid },
            Answer::Nothing,
            tx,
        );
        Ok(())
    }

    /// Decides an unknown outcome from the database alone: by the stable ids, and by the
    /// transaction id the attempt noted.
    pub async fn reconcile(&self, sandbox: &SchemaName) -> Result<Report, LabError> {
        self.locked(sandbox, self.reconcile_locked(sandbox)).await
    }

    async fn reconcile_locked(&self, sandbox: &SchemaName) -> Result<Report, LabError> {
        const TICKET_STATUS: &str = "SELECT status FROM tickets WHERE id = $1";
        const OUTBOX_ROW: &str = "SELECT count(*) FROM outbox WHERE event_id = $1";
        const XACT_STATUS: &str = "SELECT pg_xact_status($1::xid8)";
        let pending: Option<Option<Json<PendingAttempt>>> =
            sqlx::query_scalar("SELECT pending FROM lab.sandboxes WHERE schema_name = $1")
                .bind(sandbox.as_str())
                .fetch_optional(self.pool())
                .await
                .map_err(LabError::from_sqlx)?;
        let Json(pending) = pending.flatten().ok_or(LabError::NothingToReconcile)?;
        let before = self.snapshot(sandbox).await?;
        let event_id = pending.settings.event_id.as_str();

        let mut trace = Tracer::new();
        let mut conn = self.pool().acquire().await.map_err(LabError::from_sqlx)?;
        let mut tx = conn.begin().await.map_err(LabError::from_sqlx)?;
        trace.sql(Actor::Service, "BEGIN", &[], done(), TxState::Open);
        enter_sandbox(&mut tx, sandbox, &mut trace).await?;
        let status: Option<String> = sqlx::query_scalar(TICKET_STATUS)
            .bind(names::TICKET_ID)
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| LabError::in_sandbox(e, sandbox.as_str()))?;
        let values = status.iter().cloned().collect();
        trace.sql(
            Actor::Service,
            TICKET_STATUS,
            &[names::TICKET_ID],
            Answer::Values { values },
            TxState::Open,
        );
        let count: i64 = sqlx::query_scalar(OUTBOX_ROW)
            .bind(event_id)
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| LabError::in_sandbox(e, sandbox.as_str()))?;
        let values = vec![count.to_string()];
        trace.sql(
            Actor::Service,
            OUTBOX_ROW,
            &[event_id],
            Answer::Values { values },
            TxState::Open,
        );
        let xact_status: Option<String> = sqlx::query_scalar(XACT_STATUS)
            .bind(pending.xid.as_str())
            .fetch_one(&mut *tx)
            .await
            .map_err(LabError::from_sqlx)?;
        let values = vec![xact_status.clone().unwrap_or_else(|| "NULL".into())];
        trace.sql(
            Actor::Service,
            XACT_STATUS,
            &[pending.xid.as_str()],
            Answer::Values { values },
            TxState::Open,
        );
        tx.commit().await.map_err(LabError::from_sqlx)?;
        trace.sql(Actor::Service, "COMMIT", &[], done(), TxState::Committed);
        drop(conn);

        let by_ids_committed = status.as_deref() == Some(names::STATUS_RESOLVED) && count == 1;
        let by_xid_committed = match xact_status.as_deref() {
            Some("committed") => Some(true),
            Some("aborted") => Some(false),
            _ => None,
        };
        // The transaction id is PostgreSQL's own record; the ids are the fallback when it is
        // too old to be known.
        let committed = by_xid_committed.unwrap_or(by_ids_committed);
        let outcome = if committed {
            OutcomeId::ReconciledCommitted
        } else {
            OutcomeId::ReconciledNotCommitted
        };
        let reconciliation = Reconciliation {
            event_id: event_id.to_owned(),
            xid: pending.xid.clone(),
            xact_status,
            ticket_status: status,
            outbox_row_present: count > 0,
            by_ids_committed,
            by_xid_committed,
        };
        // The model judges the tables against what the attempt leaves from the state before
        // it; only a lost COMMIT reply's fate comes from PostgreSQL's answer.
        let spec = AttemptSpec::from_settings(&pending.settings)
            .map_err(|e| LabError::Config(format!("the stored attempt is no longer valid: {e}")))?;
        let expected = model::predict_reconcile(&pending.before, &spec, committed);
        self.finish(
            sandbox,
            ActionKind::Reconcile,
            Some(pending.settings.clone()),
            before,
            trace,
            Some(outcome),
            expected,
            Pending::Keep,
            |r| r.reconciliation = Some(reconciliation),
        )
        .await
    }

    /// Reads the tables after an action, judges them against the model, and keeps the report.
    #[allow(clippy::too_many_arguments)]
    async fn finish(
        &self,
        sandbox: &SchemaName,
        action: ActionKind,
        attempt: Option<AttemptSettings>,
        before: Snapshot,
        trace: Tracer,
        outcome: Option<OutcomeId>,
        expected: Expected,
        pending: Pending,
        decorate: impl FnOnce(&mut Report),
    ) -> Result<Report, LabError> {
        let snapshot = self.snapshot(sandbox).await?;
        let matches_model = model::matches(&expected, outcome, &snapshot);
        if !matches_model {
            tracing::warn!(%sandbox, ?outcome, ?expected, ?snapshot, "the real outcome differs from the model");
        }
        let mut report = Report {
            sandbox: sandbox.to_string(),
            action,
            attempt,
            before: Some(before),
            snapshot,
            trace: trace.into_steps(),
            outcome,
            expected: Some(expected),
            matches_model: Some(matches_model),
            reconciliation: None,
            race: None,
        };
        decorate(&mut report);
        let (pending, keep) = match &pending {
            Pending::Set(p) => (Some(p), false),
            Pending::Clear => (None, false),
            Pending::Keep => (None, true),
        };
        sandbox::save_report(self.pool(), sandbox, &report, pending, keep).await?;
        Ok(report)
    }
}

enum Pending {
    Set(PendingAttempt),
    Clear,
    Keep,
}

/// What the transaction was doing when the process died: open, or already committed.
fn trace_tx_after_crash(trace: &Tracer) -> TxState {
    match trace.last_tx() {
        Some(TxState::Committed) | Some(TxState::Idle) => TxState::Idle,
        _ => TxState::Abandoned,
    }
}
