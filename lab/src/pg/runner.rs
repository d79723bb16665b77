//! The runner's façade: [`Lab`] holds the pools, the sandboxes' lock and the one routine every
//! action ends with (read the tables, judge them against the model, keep the report). The
//! actions themselves live one per file in `actions`.

use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::types::Json;
use sqlx::{ConnectOptions, PgPool};
use tokio::sync::Semaphore;

use crate::catalog::{ActionKind, OutcomeId};
use crate::input::AttemptSettings;
use crate::model;
use crate::report::{Expected, Report};
use crate::snapshot::Snapshot;

use super::budget::{Budget, Needs, Reservation};
use super::database;
use super::error::LabError;
use super::names::{FrameTokens, SandboxToken, SchemaName};
use super::pending::Pending;
use super::replays::ReplayPolicy;
use super::sandbox::{self, RateLimit};
use super::sandbox_lock::{Entered, LocalLocks, SandboxLock};
use super::stepping::Stepping;
use super::trace::Tracer;

/// Limits and sizes. The defaults suit one server on a small machine.
#[derive(Clone, Debug)]
pub struct LabConfig {
    /// The working pool (snapshots, registry, attempts that do not crash). A quarter of it
    /// (at least two) is kept for single reads; actions reserve the rest (see [`super::budget`]).
    pub pool_max: u32,
    /// The lock pool: connections that hold a sandbox's advisory lock while its action runs.
    pub lock_connections: u32,
    /// The lookup pool: connections that find a request's sandbox by its token (one short
    /// statement each, taken back without sqlx's check; see [`super::lock_conns`]).
    pub lookup_connections: u32,
    /// Actions that may wait for their connections at once; past it, `busy` at once.
    pub max_waiting: usize,
    /// How long an action may wait for its connections before it is answered `busy`.
    pub wait_limit: Duration,
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
    /// New sandboxes per client address: a burst, then a steady rate.
    pub claims_per_client: RateLimit,
    /// At the maximum, a learner's sandbox idle this long may be reset for a newcomer.
    pub recycle_after: Duration,
    /// Stepped transactions at once in this process (each holds a connection of its own).
    pub step_sessions: usize,
    /// Other writers a stepped run may send at once in this process (each a connection).
    pub step_writers: usize,
    /// A stepped transaction left idle this long is ended by PostgreSQL itself.
    pub step_idle: Duration,
    /// How long the stepper's other writer waits for the held row lock.
    pub step_waiter_lock_timeout: Duration,
    /// Shared runs (replay links): the largest report kept, how long a link lives, and how
    /// many links one client address may make.
    pub replays: ReplayPolicy,
    /// The quests every action is judged against (checked at start; see `quest::file`).
    pub quests: std::sync::Arc<crate::quest::QuestBook>,
}

impl Default for LabConfig {
    fn default() -> Self {
        LabConfig {
            pool_max: 16,
            lock_connections: 12,
            lookup_connections: 4,
            max_waiting: 512,
            wait_limit: Duration::from_secs(20),
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
            // A classroom behind one address starts together; a script asking for sandbox
            // after sandbox gets one every ten seconds.
            claims_per_client: RateLimit {
                per_second: 0.1,
                burst: 60.0,
            },
            recycle_after: Duration::from_secs(600),
            // A class of thirty stepping together, with room to spare, on PostgreSQL's default
            // 100 connections (see `LabConfig::connections`).
            step_sessions: 40,
            step_writers: 8,
            step_idle: Duration::from_secs(120),
            // Long enough to read the pause and press COMMIT; short enough to meet 55P03.
            step_waiter_lock_timeout: Duration::from_secs(30),
            replays: ReplayPolicy::default(),
            // The shipped file; a unit test holds it valid.
            quests: std::sync::Arc::new(
                crate::quest::file::parse(crate::quest::file::BUILT_IN).unwrap_or_default(),
            ),
        }
    }
}

impl LabConfig {
    /// Working connections that actions may reserve; the rest of the pool serves single reads
    /// (page views, the sandbox lookup), which never hold one connection while asking for
    /// another.
    pub fn reservable_work(&self) -> u32 {
        let for_reads = (self.pool_max / 4).max(2);
        self.pool_max.saturating_sub(for_reads).max(1)
    }

    /// The most connections to PostgreSQL this process may open at once: the three pools,
    /// the crashing attempts' own connections, every stepped run and its other writer, and
    /// the outage probe.
    pub fn connections(&self) -> u32 {
        let own = self.crash_connections + self.step_sessions + self.step_writers;
        self.pool_max + self.lock_connections + self.lookup_connections + own as u32 + 1
    }
}

/// The playground's access to PostgreSQL. Cheap to clone.
#[derive(Clone)]
pub struct Lab {
    pub(super) inner: Arc<Inner>,
    /// Set on the handle a comparison runs its sides with: the comparison has reserved their
    /// connections already, and asking again while holding them could wait for itself.
    pub(super) reserved: bool,
}

pub(super) struct Inner {
    pool: PgPool,
    /// Options for an attempt's own connection (same database, same session limits).
    pub(super) connect: PgConnectOptions,
    config: LabConfig,
    pub(super) crash_slots: Semaphore,
    /// One action at a time per sandbox, so each report is judged against its own "before".
    local_locks: LocalLocks,
    /// Connections that hold the sandboxes' advisory locks, apart from the working pool.
    pub(super) lock_pool: Arc<super::lock_conns::LockConnections>,
    /// Connections that find a request's sandbox by its token.
    lookup_pool: Arc<super::lock_conns::LockConnections>,
    outage: super::outage::Outage,
    pub(super) stepping: Stepping,
    budget: Budget,
    /// Read from the database once (every process on it signs with the same secret).
    frame_tokens: tokio::sync::OnceCell<FrameTokens>,
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
        let pool = pool_options(&config, config.pool_max).connect_lazy_with(connect.clone());
        let lock_pool = super::lock_conns::LockConnections::new(
            connect.clone(),
            config.lock_connections,
            config.acquire_timeout,
        );
        let lookup_pool = super::lock_conns::LockConnections::new(
            connect.clone(),
            config.lookup_connections.max(1),
            config.acquire_timeout,
        );
        let budget = Budget::new(
            config.lock_connections,
            config.reservable_work(),
            config.max_waiting,
            config.wait_limit,
        );
        let stepping = Stepping::new(config.step_sessions, config.step_writers);
        Lab {
            inner: Arc::new(Inner {
                pool,
                connect,
                crash_slots: Semaphore::new(config.crash_connections),
                config,
                local_locks: LocalLocks::default(),
                lock_pool,
                lookup_pool,
                outage: Default::default(),
                stepping,
                budget,
                frame_tokens: tokio::sync::OnceCell::new(),
            }),
            reserved: false,
        }
    }

    pub fn pool(&self) -> &PgPool {
        &self.inner.pool
    }

    /// Open connections of both pools (the working pool and the sandbox locks').
    pub fn open_connections(&self) -> u32 {
        self.inner.pool.size() + self.inner.lock_pool.size() + self.inner.lookup_pool.size()
    }

    pub fn config(&self) -> &LabConfig {
        &self.inner.config
    }

    /// One round trip to PostgreSQL within `bound` (none while a known outage goes on); a
    /// failure or no answer in time counts as an outage.
    pub async fn ping(&self, bound: Duration) -> Result<(), LabError> {
        self.reachable().await?;
        let round_trip = sqlx::query("SELECT 1").execute(self.pool());
        let result = match tokio::time::timeout(bound, round_trip).await {
            Ok(answer) => answer.map(drop).map_err(LabError::from_sqlx),
            Err(_) => Err(LabError::Unavailable(sqlx::Error::PoolTimedOut)),
        };
        self.observe(result)
    }

    /// Fails at once while a known outage goes on (see [`super::outage`]); a caller runs this
    /// before an action and passes the action's result to [`Lab::observe`].
    pub async fn reachable(&self) -> Result<(), LabError> {
        self.inner.outage.check(&self.inner.connect).await
    }

    /// Notes an action's result: an unreachable database makes the next actions fail fast.
    /// A pool that timed out because every connection was in use is busy, not down: that
    /// becomes [`LabError::Busy`] and raises nothing.
    pub fn observe<T>(&self, result: Result<T, LabError>) -> Result<T, LabError> {
        match result {
            Err(LabError::Unavailable(sqlx::Error::PoolTimedOut)) if self.pools_full() => {
                Err(LabError::Busy)
            }
            Err(e) => {
                self.inner.outage.observe(&e);
                Err(e)
            }
            ok => ok,
        }
    }

    /// Every connection of a pool is open and in use.
    fn pools_full(&self) -> bool {
        let full = |pool: &PgPool, max: u32| pool.size() >= max && pool.num_idle() == 0;
        let c = &self.inner.config;
        full(&self.inner.pool, c.pool_max) || self.inner.lock_pool.is_full()
    }

    /// The handle a caller that has reserved an action's connections runs it with.
    pub(super) fn within_reservation(&self) -> Lab {
        Lab {
            inner: Arc::clone(&self.inner),
            reserved: true,
        }
    }

    /// Takes what an action holds at once (see [`super::budget`]) unless the caller did.
    pub(super) async fn reserve(&self, needs: Needs) -> Result<Option<Reservation<'_>>, LabError> {
        if self.reserved {
            return Ok(None);
        }
        self.inner.budget.reserve(needs).await.map(Some)
    }

    /// Reads PostgreSQL's connection limit and refuses a configuration under which this
    /// process alone could pass it; answers the limit and what this process may open.
    pub async fn check_connection_budget(&self) -> Result<(u32, u32), LabError> {
        const LIMITS: &str = "SELECT current_setting('max_connections')::int, \
             current_setting('superuser_reserved_connections')::int \
             + coalesce(current_setting('reserved_connections', true), '0')::int";
        let (max, reserved): (i32, i32) = sqlx::query_as(LIMITS)
            .fetch_one(self.pool())
            .await
            .map_err(LabError::from_sqlx)?;
        let available = (max - reserved).max(0) as u32;
        let needs = self.inner.config.connections();
        if needs > available {
            return Err(LabError::Config(format!(
                "this process may open {needs} connections (PLAYGROUND_POOL_MAX + \
                 PLAYGROUND_LOCK_CONNECTIONS + PLAYGROUND_CRASH_CONNECTIONS + \
                 PLAYGROUND_STEP_SESSIONS + PLAYGROUND_STEP_WRITERS + 1), but PostgreSQL allows \
                 {available} (max_connections {max} less {reserved} reserved); lower those \
                 settings or raise max_connections"
            )));
        }
        Ok((available, needs))
    }

    // ----- sandboxes --------------------------------------------------------------------

    /// A new sandbox for the playground's own use (a comparison's pair): no client pays.
    pub async fn claim_sandbox(&self) -> Result<(SandboxToken, SchemaName), LabError> {
        self.claim_sandbox_for(SandboxToken::generate(), None).await
    }

    /// A new sandbox for a learner under `token`, paid from `client`'s budget of new sandboxes.
    pub async fn claim_sandbox_for(
        &self,
        token: SandboxToken,
        client: Option<&str>,
    ) -> Result<(SandboxToken, SchemaName), LabError> {
        let c = &self.inner.config;
        let policy = sandbox::ClaimPolicy {
            max_sandboxes: c.max_sandboxes,
            per_client: c.claims_per_client,
            recycle_after: c.recycle_after,
        };
        let claimed = sandbox::claim(self.pool(), token, client, &policy).await;
        self.refill_soon();
        claimed
    }

    /// The learner's sandbox, if the token still has one. Each call spends one request from
    /// the sandbox's budget; [`LabError::RateLimited`] when it is spent.
    ///
    /// It runs on a connection of the lookup pool, which is taken back without a round trip
    /// (the statement was answered in full); on any error the connection is closed instead.
    pub async fn find_sandbox(&self, token: &SandboxToken) -> Result<Option<SchemaName>, LabError> {
        let mut conn = self.inner.lookup_pool.acquire().await?;
        let found = sandbox::find(conn.conn()?, token, &self.inner.config.rate).await;
        if matches!(found, Ok(_) | Err(LabError::RateLimited)) {
            conn.give_back();
        }
        found
    }

    /// Whether `token` holds a sandbox (without spending its request budget).
    pub async fn token_has_sandbox(&self, token: &SandboxToken) -> Result<bool, LabError> {
        Ok(sandbox::claimed_by(self.pool(), token).await?.is_some())
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

    /// What signs and checks the embed's frame tokens.
    pub async fn frame_tokens(&self) -> Result<&FrameTokens, LabError> {
        self.inner
            .frame_tokens
            .get_or_try_init(|| async {
                let secret: Vec<u8> = sqlx::query_scalar("SELECT secret FROM lab.server_secret")
                    .fetch_one(self.pool())
                    .await
                    .map_err(LabError::from_sqlx)?;
                Ok(FrameTokens::new(secret))
            })
            .await
    }

    /// Stepped runs held in this process now.
    pub fn held_runs(&self) -> usize {
        self.inner.stepping.held()
    }

    /// This process's turn on `sandbox` (the first half of [`SandboxLock`]).
    pub(super) async fn local_lock(&self, sandbox: &SchemaName) -> super::sandbox_lock::LocalGuard {
        self.inner.local_locks.lock(sandbox).await
    }

    /// Takes the sandbox's lock for an action that holds `needs`: first this process's turn
    /// on the sandbox (holding nothing else, and for at most `lock_timeout`: a learner's own
    /// earlier action), then the action's connections, then the advisory lock (see
    /// [`SandboxLock`]); with `read_tables`, also its tables, and PostgreSQL's text of each of
    /// `payloads`. Always in this order, so that no action holds connections while it waits
    /// for a turn that another holder of connections has.
    async fn lock_sandbox<const N: usize>(
        &self,
        sandbox: &SchemaName,
        needs: Needs,
        read_tables: bool,
        payloads: [&str; N],
    ) -> Result<(SandboxLock, Entered<N>, Option<Reservation<'_>>), LabError> {
        self.refuse_while_stepped(sandbox)?;
        let turn = tokio::time::timeout(self.config().lock_timeout, self.local_lock(sandbox));
        let Ok(local) = turn.await else {
            self.refuse_while_stepped(sandbox)?;
            return Err(LabError::RateLimited);
        };
        // A stepped run may have begun while this action waited for its turn.
        self.refuse_while_stepped(sandbox)?;
        let reserved = self.reserve(needs).await?;
        let (lock, entered) =
            SandboxLock::enter(local, &self.inner.lock_pool, sandbox, read_tables, payloads)
                .await?;
        Ok((lock, entered, reserved))
    }

    /// Runs `action` while holding the sandbox's lock, with the tables read under it and
    /// PostgreSQL's text of each of `payloads` (the model's input for an attempt's outbox row;
    /// none for an action without one). The action ends with [`Lab::finish`], which keeps its
    /// report and lets the lock go.
    pub(super) async fn locked<T, F, const N: usize>(
        &self,
        sandbox: &SchemaName,
        needs: Needs,
        payloads: [&str; N],
        action: impl FnOnce(Locked<N>) -> F,
    ) -> Result<T, LabError>
    where
        F: Future<Output = Result<T, LabError>>,
    {
        let (lock, entered, _reserved) = self.lock_sandbox(sandbox, needs, true, payloads).await?;
        let Entered {
            tables,
            stored_payloads,
        } = entered;
        let before = tables.ok_or_else(|| LabError::SandboxGone(sandbox.to_string()))?;
        action(Locked {
            lock,
            before,
            stored_payloads,
        })
        .await
    }

    /// Runs `action` while holding the sandbox's lock, without reading its tables; the lock is
    /// released when the action succeeds.
    pub(super) async fn locked_only<T>(
        &self,
        sandbox: &SchemaName,
        needs: Needs,
        action: impl Future<Output = Result<T, LabError>>,
    ) -> Result<T, LabError> {
        let (lock, _, _reserved) = self.lock_sandbox(sandbox, needs, false, []).await?;
        let result = action.await;
        // On an error the lock is dropped: its session is closed, which releases it too.
        if result.is_ok()
            && let Err(e) = lock.release().await
        {
            tracing::warn!(error = %e, %sandbox, "could not release a sandbox lock cleanly");
        }
        result
    }

    /// A stepped transaction holds the sandbox for minutes: say so at once, not after a wait
    /// for its lock.
    fn refuse_while_stepped(&self, sandbox: &SchemaName) -> Result<(), LabError> {
        if self.inner.stepping.holds(sandbox) {
            return Err(LabError::StepInProgress);
        }
        Ok(())
    }

    // ----- reading ------------------------------------------------------------------------

    /// The sandbox's tables, read in one snapshot.
    pub async fn snapshot(&self, sandbox: &SchemaName) -> Result<Snapshot, LabError> {
        let mut conn = self.pool().acquire().await.map_err(LabError::from_sqlx)?;
        read_snapshot(&mut conn, sandbox).await
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
        let saved: Option<Option<Json<serde_json::Value>>> = sqlx::query_scalar(
            "SELECT n.last_report FROM lab.sandboxes s \
                 LEFT JOIN lab.sandbox_notes n USING (schema_name) WHERE s.schema_name = $1",
        )
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

    /// Reads the tables after an action, judges them against the model, keeps the report and
    /// releases the sandbox's lock: two round trips on the lock's own connection.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn finish(
        &self,
        mut lock: SandboxLock,
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
        let snapshot = read_snapshot(lock.conn()?, sandbox).await?;
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
            stepped: None,
            prediction: None,
            after_commit: None,
            quests: Vec::new(),
        };
        decorate(&mut report);
        report.quests = crate::quest::judge::judge_all(&self.config().quests, &report);
        let marks = crate::quest::judge::Marks::of(&self.config().quests, &report.quests);
        let (pending, keep) = match &pending {
            Pending::Set(p) => (Some(&**p), false),
            Pending::Clear => (None, false),
            Pending::Keep => (None, true),
        };
        lock.leave(&report, pending, keep, &marks).await?;
        Ok(report)
    }
}

/// A connection idle this long is checked before use; one used more recently is taken as is.
const CHECK_IF_IDLE_FOR: Duration = Duration::from_secs(1);

/// sqlx checks every connection with a round trip before handing it out. Under load that is a
/// round trip per checkout for nothing, so only a connection that sat idle (and may have been
/// cut by a restart of PostgreSQL) is checked; a dead one is then replaced, as before.
fn pool_options(config: &LabConfig, max: u32) -> PgPoolOptions {
    PgPoolOptions::new()
        .max_connections(max)
        .acquire_timeout(config.acquire_timeout)
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for >= CHECK_IF_IDLE_FOR {
                    sqlx::Connection::ping(conn).await?;
                }
                Ok(true)
            })
        })
}

/// What an action holds while it runs: the sandbox's lock, the tables read under it, and
/// PostgreSQL's text of each payload the action asked about (see [`Entered`]).
pub(super) struct Locked<const N: usize = 0> {
    pub lock: SandboxLock,
    pub before: Snapshot,
    pub stored_payloads: [Option<String>; N],
}

/// The sandbox's tables, read in one snapshot on `conn`.
async fn read_snapshot(
    conn: &mut sqlx::PgConnection,
    sandbox: &SchemaName,
) -> Result<Snapshot, LabError> {
    let Json(snapshot): Json<Snapshot> = sqlx::query_scalar("SELECT lab.snapshot($1)")
        .bind(sandbox.as_str())
        .fetch_one(conn)
        .await
        .map_err(|e| LabError::in_sandbox(e, sandbox.as_str()))?;
    Ok(snapshot)
}
