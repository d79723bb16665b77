//! The stepper's pauses: at each crash point of the function, the views from inside and from
//! outside, and the learner's next command.

use std::time::Duration;

use sqlx::PgConnection;
use sqlx::types::Json;
use tokio::sync::mpsc;

use crate::broker;
use crate::catalog::{CommitFate, CrashPoint, PausePoint, Scenario, Step};
use crate::input::AttemptSpec;
use crate::model;
use crate::snapshot::Snapshot;
use crate::sql_trace::{Actor, TxState};
use crate::step::{Backend, Command, LockRow, Message, Pause};
use crate::stepped::WaiterState;

use super::super::error::LabError;
use super::super::names::SchemaName;
use super::super::pauses::{Go, Here, Pauses};
use super::super::runner::Lab;
use super::super::trace::{Tracer, answer_of};
use super::super::wire_fault::Relay;
use super::refused;
use super::writer::{Job, WaiterTask};

/// What a stepped run runs: the ticket function with its spec, or a run after COMMIT.
#[derive(Clone, Copy)]
pub(super) enum Run<'a> {
    Ticket(&'a AttemptSpec),
    Publisher,
    Consumer { inbox: bool },
}

impl Run<'_> {
    pub(super) fn scenario(self) -> Scenario {
        match self {
            Run::Ticket(_) => Scenario::Ticket,
            Run::Publisher => Scenario::Publisher,
            Run::Consumer { .. } => Scenario::Consumer,
        }
    }
}

/// The stepper's [`Pauses`]: at each pause, show the views and wait for the learner.
pub(super) struct Held<'a> {
    pub(super) lab: &'a Lab,
    pub(super) sandbox: &'a SchemaName,
    pub(super) run: Run<'a>,
    /// PostgreSQL's text of the ticket function's payload, `None` if it refuses the cast (the
    /// model's input, asked as the run took the sandbox's lock).
    pub(super) stored_payload: Option<String>,
    /// The state the model starts from: the tables before the run, plus a writer's change
    /// that committed before the held transaction first wrote.
    pub(super) base: Snapshot,
    pub(super) commands: &'a mut mpsc::Receiver<Command>,
    pub(super) out: &'a mpsc::Sender<Message>,
    pub(super) relay: Option<&'a Relay>,
    pub(super) waiter: Option<WaiterTask>,
    /// The transaction id once PostgreSQL has assigned one.
    pub(super) xid: String,
    pub(super) pid: i32,
    pub(super) ended_at: PausePoint,
    /// How often each pause was reached: the publisher's and the consumer's pauses come once
    /// per row or event.
    pub(super) reached: Vec<(PausePoint, usize)>,
    pub(super) lost_reply: Option<CommitFate>,
    pub(super) idle_timeout: bool,
    /// `base` includes the writer's change.
    pub(super) base_has_writer: bool,
}

impl<'a> Held<'a> {
    pub(super) fn new(
        lab: &'a Lab,
        sandbox: &'a SchemaName,
        run: Run<'a>,
        base: Snapshot,
        commands: &'a mut mpsc::Receiver<Command>,
        out: &'a mpsc::Sender<Message>,
    ) -> Self {
        Held {
            lab,
            sandbox,
            run,
            base,
            commands,
            out,
            stored_payload: None,
            relay: None,
            waiter: None,
            xid: String::new(),
            pid: 0,
            ended_at: PausePoint::end_of(run.scenario()),
            reached: Vec::new(),
            lost_reply: None,
            idle_timeout: false,
            base_has_writer: false,
        }
    }
}

impl Pauses for Held<'_> {
    fn forces_xid(&self) -> bool {
        false
    }

    async fn at(
        &mut self,
        here: Here,
        mut conn: Option<&mut PgConnection>,
        trace: &mut Tracer,
    ) -> Result<Go, LabError> {
        let point = here.point;
        let next = here.next;
        let index = self.reach(point);
        let mut show = true;
        loop {
            if show {
                let pause = self
                    .look(point, index, next, conn.as_deref_mut(), trace)
                    .await?;
                if self
                    .out
                    .send(Message::Pause(Box::new(pause)))
                    .await
                    .is_err()
                {
                    self.ended_at = point;
                    return Ok(Go::Die);
                }
            }
            show = true;
            let idle = self.lab.config().step_idle;
            // PostgreSQL ends an idle transaction after `idle`; a moment later the stepper
            // asks, and PostgreSQL's own FATAL is what the learner sees.
            let command = tokio::time::timeout(idle + Duration::from_millis(250), async {
                self.commands.recv().await
            })
            .await;
            match command {
                Ok(Some(Command::Next)) => return Ok(Go::On),
                Ok(Some(Command::Crash)) | Ok(None) => {
                    self.ended_at = point;
                    return Ok(Go::Die);
                }
                Ok(Some(Command::CommitReplyLost { commit_fate })) => {
                    let Some(fate) = CommitFate::parse(&commit_fate) else {
                        self.refuse("step_bad_fate").await;
                        show = false;
                        continue;
                    };
                    // Only where the one-shot attempt offers it too (not in Trace A's modes, not
                    // after COMMIT), so a stepped run never keeps an attempt that
                    // reconciliation cannot read back.
                    let offered = match self.run {
                        Run::Ticket(spec) => spec.mode.has_crash_point(CrashPoint::CommitReplyLost),
                        Run::Publisher | Run::Consumer { .. } => false,
                    };
                    let (Some(relay), Some(Step::Commit), Some(c), true) =
                        (self.relay, next, conn.as_deref_mut(), offered)
                    else {
                        let code = if self.relay.is_none() {
                            "relay_unsupported"
                        } else {
                            "step_not_now"
                        };
                        self.refuse(code).await;
                        show = false;
                        continue;
                    };
                    // Reconciliation asks about this id later; a transaction that wrote
                    // has one already, and asking costs nothing then.
                    self.xid = current_xid(c, true).await?.unwrap_or_default();
                    relay.arm(super::super::actions::fault_of(fate));
                    self.lost_reply = Some(fate);
                    return Ok(Go::On);
                }
                Ok(Some(command @ (Command::OtherWriter | Command::OtherPublisher { .. })))
                    if self.waiter.is_none() && self.job_of(&command).is_some() =>
                {
                    let Some(job) = self.job_of(&command) else {
                        continue;
                    };
                    let started =
                        WaiterTask::start(self.lab, self.sandbox, job, trace.start()).await;
                    let mut task = match started {
                        Err(LabError::Busy) => {
                            self.refuse("busy").await;
                            show = false;
                            continue;
                        }
                        other => other?,
                    };
                    task.wait_until_settled(self.lab).await?;
                    self.waiter = Some(task);
                }
                Ok(Some(Command::OtherWriter))
                | Ok(Some(Command::OtherPublisher { .. }))
                | Ok(Some(Command::Begin { .. })) => {
                    self.refuse("step_not_now").await;
                    show = false;
                }
                Err(_) => {
                    if let Some(c) = conn.as_deref_mut() {
                        match sqlx::query("SELECT 1").execute(&mut *c).await {
                            // Not ended yet (a clock between us): wait again.
                            Ok(_) => continue,
                            Err(err) => trace.sql(
                                Actor::Postgres,
                                "SELECT 1",
                                &[],
                                answer_of(&err),
                                TxState::RolledBack,
                            ),
                        }
                    }
                    self.idle_timeout = true;
                    self.ended_at = point;
                    return Ok(Go::Die);
                }
            }
        }
    }
}

impl Held<'_> {
    /// Counts a pause reached; returns how often it was reached before (the row or event).
    fn reach(&mut self, point: PausePoint) -> usize {
        match self.reached.iter_mut().find(|(p, _)| *p == point) {
            Some((_, n)) => {
                *n += 1;
                *n - 1
            }
            None => {
                self.reached.push((point, 1));
                0
            }
        }
    }

    /// The second session a command asks for, if this run has it: another writer beside the
    /// ticket function, another publisher beside the publisher.
    fn job_of(&self, command: &Command) -> Option<Job> {
        match (command, self.run) {
            (Command::OtherWriter, Run::Ticket(_)) => Some(Job::Writer),
            (Command::OtherPublisher { skip_locked }, Run::Publisher) => Some(Job::Publisher {
                skip_locked: *skip_locked,
            }),
            _ => None,
        }
    }

    /// Where the run ended, with the row or event: the stepped report's `ended_at`.
    pub(super) fn ended(&self) -> (PausePoint, usize) {
        let index = self
            .reached
            .iter()
            .find(|(p, _)| *p == self.ended_at)
            .map_or(0, |(_, n)| n.saturating_sub(1));
        (self.ended_at, index)
    }

    async fn refuse(&self, code: &str) {
        // Never wait to refuse: a client sending faster than it reads fills the channel, and
        // a run waiting on it while the socket waits on the run would hold both for good. A
        // refusal that does not fit is dropped; the client is flooding anyway.
        let _ = self.out.try_send(refused(code));
    }

    async fn look(
        &mut self,
        at: PausePoint,
        index: usize,
        next: Option<Step>,
        conn: Option<&mut PgConnection>,
        trace: &Tracer,
    ) -> Result<Pause, LabError> {
        let lab = self.lab;
        let pool = lab.pool();
        let inside = match conn {
            Some(c) => {
                let (Json(snapshot), xid, pid): (Json<Snapshot>, Option<String>, i32) =
                    sqlx::query_as(INSIDE)
                        .bind(self.sandbox.as_str())
                        .fetch_one(&mut *c)
                        .await
                        .map_err(|e| LabError::in_sandbox(e, self.sandbox.as_str()))?;
                self.pid = pid;
                if let Some(xid) = xid {
                    self.xid = xid;
                }
                Some(snapshot)
            }
            None => None,
        };
        let waiter = match &mut self.waiter {
            Some(task) => Some(task.view(lab).await?),
            None => None,
        };
        // A writer that committed while the held transaction had not written yet changed
        // the state this transaction starts from.
        if let Some(w) = &waiter
            && matches!(self.run, Run::Ticket(_))
            && w.state == WaiterState::Done
            && w.rows == Some(1)
            && self.xid.is_empty()
            && !self.base_has_writer
        {
            self.base = model::other_writer(&self.base).1;
            self.base_has_writer = true;
        }
        let outside = lab.snapshot(self.sandbox).await?;
        let (state,): (Option<String>,) =
            sqlx::query_as("SELECT (SELECT state FROM pg_stat_activity WHERE pid = $1)")
                .bind(self.pid)
                .fetch_one(pool)
                .await
                .map_err(LabError::from_sqlx)?;
        let locks: Vec<(String, Option<String>, String, bool)> = sqlx::query_as(LOCKS)
            .bind(self.pid)
            .bind(self.sandbox.as_str())
            .fetch_all(pool)
            .await
            .map_err(LabError::from_sqlx)?;
        let views = self.predicted(at, index);
        let same = |a: &Option<Snapshot>, b: &Option<Snapshot>| match (a, b) {
            (Some(a), Some(b)) => a.same_as(b),
            (None, None) => true,
            _ => false,
        };
        let matches_model = same(&views.inside, &inside) && views.outside.same_as(&outside);
        if !matches_model {
            tracing::warn!(sandbox = %self.sandbox, ?at, ?views, ?inside, ?outside, "a pause differs from the model");
        }
        Ok(Pause {
            point: at,
            next,
            inside,
            outside,
            backend: Backend {
                pid: self.pid,
                state: state.unwrap_or_default(),
                xid: (!self.xid.is_empty()).then(|| self.xid.clone()),
            },
            locks: locks
                .into_iter()
                .map(|(locktype, relation, mode, granted)| LockRow {
                    locktype,
                    relation,
                    mode,
                    granted,
                })
                .collect(),
            waiter,
            trace: trace.steps().to_vec(),
            matches_model,
        })
    }
}

/// The tables through the held connection, and what PostgreSQL says of its transaction.
const INSIDE: &str =
    "SELECT lab.snapshot($1), pg_current_xact_id_if_assigned()::text, pg_backend_pid()";

/// The held backend's locks on the sandbox's tables, and on its own transaction id (a row
/// lock lives in the row itself; a writer queues on the holder's transaction id). The
/// AccessShareLocks are left out: the playground's own reads through the held connection take
/// them, the lesson's statements do not.
const LOCKS: &str = "SELECT l.locktype, c.relname::text, l.mode, l.granted \
     FROM pg_locks l LEFT JOIN pg_class c ON c.oid = l.relation \
     WHERE l.pid = $1 AND (l.locktype = 'transactionid' \
        OR (l.locktype = 'relation' AND c.relkind = 'r' AND l.mode <> 'AccessShareLock' \
            AND c.relnamespace = to_regnamespace($2))) \
     ORDER BY l.locktype, c.relname, l.mode";

/// `pg_current_xact_id_if_assigned()`, or — `force` — `pg_current_xact_id()`.
async fn current_xid(conn: &mut PgConnection, force: bool) -> Result<Option<String>, LabError> {
    let sql = if force {
        "SELECT pg_current_xact_id()::text"
    } else {
        "SELECT pg_current_xact_id_if_assigned()::text"
    };
    sqlx::query_scalar(sql)
        .fetch_one(conn)
        .await
        .map_err(LabError::from_sqlx)
}

impl Held<'_> {
    /// What the reference model says the two views of this pause are.
    fn predicted(&self, at: PausePoint, index: usize) -> model::PauseViews {
        match (self.run, at) {
            (Run::Ticket(spec), PausePoint::Ticket(point)) => {
                model::predict_pause(&self.base, spec, self.stored_payload.as_deref(), point)
            }
            (Run::Publisher, PausePoint::Publisher(point)) => {
                let (inside, outside) = broker::publisher_pause(&self.base, point, index);
                model::PauseViews {
                    inside: Some(inside),
                    outside,
                }
            }
            (Run::Consumer { inbox }, PausePoint::Consumer(point)) => {
                let (inside, outside) = broker::consumer_pause(&self.base, inbox, point, index);
                model::PauseViews { inside, outside }
            }
            // A pause of another scenario never reaches this run's hook.
            _ => model::PauseViews {
                inside: None,
                outside: self.base.clone(),
            },
        }
    }
}
