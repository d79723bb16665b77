//! From a trace to the steps of a replay: which session runs each statement, where a session
//! must wait for a lock, where a process dies, and what the playground's own plumbing did.
//!
//! Sessions are decided from the trace. A race's lanes and the stepper's other writer are
//! sessions of their own (A and B). Any other connection — the simulated broker, the consumer,
//! a statement sent "outside the transaction" — runs in the first session that has no
//! transaction open at that moment: it committed on its own in the run, and in a session with
//! an open transaction it would instead be rolled back with that transaction. Only when A and B
//! both hold a transaction (a publish race's broker) does a third session, C, appear.

use crate::catalog::{CommitFate, Step};
use crate::input::AttemptSpec;
use crate::model;
use crate::report::Report;
use crate::snapshot::Snapshot;
use crate::sql_trace::{Actor, Answer, Lane, Sent, TraceStep};

use super::quote::inline;
use super::words::{self, Note};
use super::{ExportError, Session};

/// What a step of the replay asks of the learner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Run the statements.
    Run,
    /// Kill this session's psql: the process dies, or its network does.
    Kill,
}

/// One numbered step of the replay.
#[derive(Clone, Debug)]
pub struct PlanStep {
    pub session: Session,
    pub kind: Kind,
    /// The session's psql was killed before: this step starts a new one.
    pub reconnect: bool,
    /// The last statement waits for a lock held by another session.
    pub waits: bool,
    pub notes: Vec<Note>,
    /// Lines to run, each a whole statement (or a comment standing for one not sent).
    pub lines: Vec<String>,
    /// What psql should answer, in words.
    pub expect: Vec<String>,
}

/// One trace step placed in a session.
#[derive(Clone, Debug)]
struct Item {
    session: Session,
    actor: Actor,
    lane: Option<Lane>,
    step: Option<Step>,
    what: What,
    waits: bool,
    notes: Vec<Note>,
}

#[derive(Clone, Debug)]
enum What {
    Sql {
        line: String,
        begins: bool,
        expect: Option<String>,
    },
    Kill(Note),
}

type Key = (Actor, Option<Lane>);

/// The replay: its steps in the order they are to run, and what PostgreSQL did after the last
/// of them (told before the closing block).
pub struct Plan {
    pub steps: Vec<PlanStep>,
    pub closing_notes: Vec<Note>,
}

pub fn plan(report: &Report) -> Result<Plan, ExportError> {
    let (items, closing_notes) = place(report)?;
    Ok(Plan {
        steps: group(items),
        closing_notes,
    })
}

fn place(report: &Report) -> Result<(Vec<Item>, Vec<Note>), ExportError> {
    let mut items: Vec<Item> = Vec::new();
    let mut open: [Option<Key>; 3] = [None, None, None];
    let mut last: Vec<(Key, Session)> = Vec::new();
    let mut pending: Vec<Note> = Vec::new();
    let applied = lost_commit_applied(report);
    for t in &report.trace {
        let key = (t.actor, t.lane);
        match &t.sent {
            Sent::Sql { sql, .. } if t.actor == Actor::Playground => {
                let note = words::plumbing(sql);
                match items.iter_mut().rev().find(|i| i.lane == t.lane) {
                    Some(item) => item.notes.push(note),
                    None => pending.push(note),
                }
            }
            Sent::Sql { .. } if t.actor == Actor::Postgres => {
                pending.push(words::idle_timeout());
            }
            Sent::Sql { sql, params } => {
                let begins = sql == "BEGIN";
                let session = if begins {
                    let s = begin_session(&open, key)?;
                    open[s.index()] = Some(key);
                    remember(&mut last, key, s);
                    if s != Session::A && !owns_a_lane(key) {
                        pending.push(words::own_session(s));
                    }
                    s
                } else {
                    session_of(&last, key).ok_or(ExportError::Unreplayable(
                        "a statement outside any transaction of its connection",
                    ))?
                };
                let lost_reply = sql == "COMMIT" && matches!(t.answer, Answer::Io { .. });
                let line = if lost_reply && !applied {
                    "-- COMMIT;  (not sent: the network dropped it on the way)".to_owned()
                } else if sql.contains("pg_xact_status") {
                    // The run's transaction id means nothing on another database.
                    "-- SELECT pg_xact_status(<the transaction id the attempt noted>);".to_owned()
                } else {
                    format!("{};", inline(sql, params)?)
                };
                if matches!(sql.as_str(), "COMMIT" | "ROLLBACK") {
                    open[session.index()] = None;
                }
                let mut notes = std::mem::take(&mut pending);
                if lost_reply {
                    notes.push(words::lost_reply(applied));
                }
                items.push(Item {
                    session,
                    actor: t.actor,
                    lane: t.lane,
                    step: t.step,
                    what: What::Sql {
                        line,
                        begins,
                        expect: (!lost_reply).then(|| words::expect(sql, &t.answer)),
                    },
                    waits: t.answered_us.is_some(),
                    notes,
                });
            }
            Sent::ProcessCrashed | Sent::ConnectionCut => {
                let owner = if t.actor == Actor::Network {
                    (Actor::Service, t.lane)
                } else {
                    key
                };
                let session = session_of(&last, owner)
                    .ok_or(ExportError::Unreplayable("a crash before any statement"))?;
                open[session.index()] = None;
                let note = if t.actor == Actor::Network {
                    words::cut(applied)
                } else {
                    words::crash(t.actor, t.tx)
                };
                items.push(Item {
                    session,
                    actor: t.actor,
                    lane: t.lane,
                    step: t.step,
                    what: What::Kill(note),
                    waits: false,
                    notes: std::mem::take(&mut pending),
                });
            }
            Sent::LockWait { .. } => {
                let note = words::lock_wait();
                match items.iter_mut().rev().find(|i| i.lane == t.lane && i.waits) {
                    Some(item) => item.notes.push(note),
                    None => pending.push(note),
                }
            }
            Sent::BackendGone { .. } => pending.push(words::backend_gone(t.tx)),
            Sent::RetryWithNewId { .. } => pending.push(words::retry()),
            Sent::ConsumerSkipped { .. } => pending.push(words::consumer_skipped()),
        }
    }
    move_writer_waits(&mut items);
    Ok((items, pending))
}

/// The session a transaction beginning for `key` runs in.
fn begin_session(open: &[Option<Key>; 3], key: Key) -> Result<Session, ExportError> {
    if let (true, Some(lane)) = (owns_a_lane(key), key.1) {
        let s = match lane {
            Lane::A => Session::A,
            Lane::B => Session::B,
        };
        if open[s.index()].is_some() {
            return Err(ExportError::Unreplayable(
                "two transactions at once in one session",
            ));
        }
        return Ok(s);
    }
    Session::ALL
        .into_iter()
        .find(|s| open[s.index()].is_none())
        .ok_or(ExportError::Unreplayable(
            "more than three transactions at once",
        ))
}

/// A race's lane, or the stepper's other writer: a session of its own for the whole run.
fn owns_a_lane((actor, lane): Key) -> bool {
    lane.is_some()
        && matches!(
            actor,
            Actor::Service | Actor::Publisher | Actor::OtherWriter
        )
}

fn remember(last: &mut Vec<(Key, Session)>, key: Key, session: Session) {
    last.retain(|(k, _)| *k != key);
    last.push((key, session));
}

fn session_of(last: &[(Key, Session)], key: Key) -> Option<Session> {
    last.iter().find(|(k, _)| *k == key).map(|(_, s)| *s)
}

/// The stepper records its other writer's UPDATE when it is answered, but sent it right after
/// its BEGIN: when other sessions acted in between, it waited for their lock all that time.
fn move_writer_waits(items: &mut Vec<Item>) {
    let mut i = 0;
    while i < items.len() {
        let is_update = items[i].actor == Actor::OtherWriter
            && matches!(&items[i].what, What::Sql { line, begins: false, .. }
                if line.starts_with("UPDATE"));
        if is_update {
            let session = items[i].session;
            if let Some(j) = items[..i].iter().rposition(|it| it.session == session)
                && items[j + 1..i].iter().any(|it| it.session != session)
            {
                let mut item = items.remove(i);
                item.waits = true;
                items.insert(j + 1, item);
            }
        }
        i += 1;
    }
}

/// Whether a lost COMMIT reply's COMMIT was applied: the tables tell, through the model of
/// the attempt with that fate. When both fates leave the same tables either replay fits.
fn lost_commit_applied(report: &Report) -> bool {
    let lost = report.trace.iter().any(|t: &TraceStep| {
        matches!(&t.sent, Sent::Sql { sql, .. } if sql == "COMMIT")
            && matches!(t.answer, Answer::Io { .. })
    });
    if !lost {
        return false;
    }
    let before = report.before.clone().unwrap_or_else(model::initial_state);
    let Some(spec) = report
        .attempt
        .as_ref()
        .and_then(|a| AttemptSpec::from_settings(a).ok())
    else {
        return !report.snapshot.same_as(&before);
    };
    let stored = stored_payload(report, &before, &spec);
    let with = |fate| {
        let spec = AttemptSpec {
            commit_fate: fate,
            ..spec.clone()
        };
        model::predict_attempt(&before, &spec, Some(stored))
            .possible
            .iter()
            .any(|p| p.state.same_as(&report.snapshot))
    };
    match (with(CommitFate::Applied), with(CommitFate::NotApplied)) {
        (true, _) => true,
        (false, true) => false,
        // A stepped run's other writer can change what both fates leave; the tables differ
        // from the start only if something committed.
        (false, false) => !report.snapshot.same_as(&before),
    }
}

/// PostgreSQL's text of the attempt's payload, as the tables afterwards show it: a row the
/// attempt (or its retry, which sends the same payload) added. Without such a row, a prediction
/// that adds one cannot fit these tables whatever its text, and the others do not hold it, so
/// the payload as sent stands in. (A refused payload never reaches COMMIT, so it is no lost
/// reply's.)
fn stored_payload<'a>(report: &'a Report, before: &Snapshot, spec: &'a AttemptSpec) -> &'a str {
    let retry = spec.fresh_id_retry();
    [spec.event_id.as_str(), retry.event_id.as_str()]
        .into_iter()
        .filter(|id| before.outbox_row(id).is_none())
        .find_map(|id| report.snapshot.outbox_row(id))
        .map_or(spec.payload.as_str(), |row| row.payload.as_str())
}

/// Consecutive items of one session, one actor and one step of the function make one step of
/// the replay; a BEGIN, a kill, a wait or a new psql window starts or ends one.
fn group(items: Vec<Item>) -> Vec<PlanStep> {
    let mut steps: Vec<PlanStep> = Vec::new();
    let mut dead = [false; 3];
    let mut prev: Option<(Session, Actor, Option<Step>, bool)> = None;
    for item in items {
        let reconnect = dead[item.session.index()];
        let kill = matches!(item.what, What::Kill(_));
        let begins = matches!(item.what, What::Sql { begins: true, .. });
        let same = prev.is_some_and(|(s, a, st, waited)| {
            s == item.session && a == item.actor && st == item.step && !waited
        });
        let fresh = !same || kill || begins || reconnect || steps.is_empty();
        if fresh {
            steps.push(PlanStep {
                session: item.session,
                kind: if kill { Kind::Kill } else { Kind::Run },
                reconnect,
                waits: false,
                notes: vec![],
                lines: vec![],
                expect: vec![],
            });
            dead[item.session.index()] = false;
        }
        let Some(step) = steps.last_mut() else {
            continue;
        };
        if step.notes.is_empty() && !kill {
            let first = match &item.what {
                What::Sql { line, .. } => line.as_str(),
                What::Kill(_) => "",
            };
            step.notes.push(words::doing(item.actor, item.step, first));
        }
        step.notes.extend(item.notes);
        match item.what {
            What::Sql { line, expect, .. } => {
                step.lines.push(line);
                step.expect.extend(expect);
            }
            What::Kill(note) => {
                step.notes.push(note);
                dead[item.session.index()] = true;
            }
        }
        step.waits |= item.waits;
        prev = Some((item.session, item.actor, item.step, item.waits || kill));
    }
    steps
}
