//! A run played back step by step: the tables as each step left them, rebuilt from the
//! report alone (its tables before, its trace, its tables after), so that a replay runs
//! nothing on PostgreSQL.
//!
//! The trace names every statement with its bound parameters and PostgreSQL's answer, and
//! the playground sends a small fixed set of statements, so each one's effect is known. Each
//! connection's changes are kept apart until its COMMIT; a crash, a cut or a ROLLBACK drops
//! them. The rebuilt end state must equal the tables PostgreSQL reported; when it does not
//! (a run the rebuild does not know), the replay shows only the two states PostgreSQL gave.

use crate::catalog::names;
use crate::model::normalise;
use crate::report::Report;
use crate::snapshot::{HistoryEntry, KafkaRecord, OutboxRow, Snapshot};
use crate::sql_trace::{Actor, Answer, Lane, Sent};

/// What the tables looked like right after one step of the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepView {
    /// Committed data: what any other session saw.
    pub outside: Snapshot,
    /// Through the connection that ran this step, while its transaction was open (its own
    /// uncommitted changes visible); none when that connection had no transaction open.
    pub inside: Option<Snapshot>,
}

/// The views after each step, or `None` when the report cannot be rebuilt step by step.
pub fn views(report: &Report) -> Option<Vec<StepView>> {
    let start = report
        .before
        .clone()
        .unwrap_or_else(|| report.snapshot.clone());
    // A COMMIT whose reply was lost either happened or not; the end state tells which.
    let unknown = report
        .trace
        .iter()
        .filter(|s| is_sql(s, "COMMIT") && !matches!(s.answer, Answer::Ok { .. }))
        .count()
        .min(4);
    for choice in 0..(1u32 << unknown) {
        if let Some(steps) = fold(report, start.clone(), choice) {
            let end = steps.last().map_or(&start, |v| &v.outside);
            if end.same_as(&report.snapshot) {
                return Some(steps);
            }
        }
    }
    None
}

/// One connection: the actor, and the race lane when there are two of it.
type Conn = (Actor, Option<Lane>);

/// The connections with a transaction open, and what each has changed so far (a handful at
/// most, so a list).
#[derive(Default)]
struct Open(Vec<(Conn, Vec<Change>)>);

impl Open {
    fn begin(&mut self, conn: Conn) {
        self.end(&conn);
        self.0.push((conn, Vec::new()));
    }

    fn end(&mut self, conn: &Conn) -> Option<Vec<Change>> {
        let at = self.0.iter().position(|(c, _)| c == conn)?;
        Some(self.0.remove(at).1)
    }

    fn get(&self, conn: &Conn) -> Option<&Vec<Change>> {
        self.0.iter().find(|(c, _)| c == conn).map(|(_, v)| v)
    }

    fn get_mut(&mut self, conn: &Conn) -> Option<&mut Vec<Change>> {
        self.0.iter_mut().find(|(c, _)| c == conn).map(|(_, v)| v)
    }

    fn drop_actor(&mut self, actor: Actor) {
        self.0.retain(|((a, _), _)| *a != actor);
    }
}

/// A change one statement made.
#[derive(Clone, Debug)]
enum Change {
    Status { id: String, status: String },
    Outbox(OutboxRow),
    Published { event_id: String, at: String },
    Kafka(KafkaRecord),
    History(HistoryEntry),
    Inbox(String),
    Offset(i64),
}

fn apply(state: &mut Snapshot, change: &Change) {
    match change {
        Change::Status { id, status } => {
            if let Some(t) = state.tickets.iter_mut().find(|t| &t.id == id) {
                t.status = status.clone();
            }
        }
        Change::Outbox(row) => state.outbox.push(row.clone()),
        Change::Published { event_id, at } => {
            if let Some(r) = state.outbox.iter_mut().find(|r| &r.event_id == event_id) {
                r.published_at = Some(at.clone());
            }
        }
        Change::Kafka(k) => state.kafka.push(k.clone()),
        Change::History(h) => state.history.push(h.clone()),
        Change::Inbox(id) => state.inbox.push(id.clone()),
        Change::Offset(o) => state.consumer_offset = *o,
    }
    normalise(state);
}

fn with(state: &Snapshot, changes: &[Change]) -> Snapshot {
    let mut s = state.clone();
    for c in changes {
        apply(&mut s, c);
    }
    s
}

fn is_sql(step: &crate::sql_trace::TraceStep, text: &str) -> bool {
    matches!(&step.sent, Sent::Sql { sql, .. } if sql == text)
}

/// `choice`'s bits say, for each COMMIT without an answer in turn, whether it was applied.
fn fold(report: &Report, start: Snapshot, choice: u32) -> Option<Vec<StepView>> {
    let end = &report.snapshot;
    let mut committed = start;
    let mut open = Open::default();
    let mut unknown_seen = 0u32;
    let mut out = Vec::with_capacity(report.trace.len());
    for step in &report.trace {
        // The playground's plumbing (search_path) runs on the connection of the statement
        // it serves: the service's.
        let actor = match step.actor {
            Actor::Playground => Actor::Service,
            other => other,
        };
        let conn: Conn = (actor, step.lane);
        match &step.sent {
            Sent::Sql { sql, params } => match sql.as_str() {
                "BEGIN" => open.begin(conn),
                "COMMIT" => {
                    let changes = open.end(&conn).unwrap_or_default();
                    let applied = match step.answer {
                        Answer::Ok { .. } => true,
                        _ => {
                            let bit = unknown_seen;
                            unknown_seen += 1;
                            choice & (1 << bit.min(31)) != 0
                        }
                    };
                    if applied {
                        committed = with(&committed, &changes);
                    }
                }
                "ROLLBACK" => {
                    open.end(&conn);
                }
                _ => {
                    if let Some(change) = change_of(sql, params, &step.answer, end)? {
                        match open.get_mut(&conn) {
                            // A failed statement changed nothing; the transaction is
                            // rolled back later.
                            Some(changes) => changes.push(change),
                            None => apply(&mut committed, &change),
                        }
                    }
                }
            },
            // The process died or its connection was cut: its open transaction goes with it
            // (a lost COMMIT's fate was settled at the COMMIT above).
            Sent::ProcessCrashed | Sent::ConnectionCut => {
                let actor = if step.actor == Actor::Network {
                    Actor::Service
                } else {
                    step.actor
                };
                open.drop_actor(actor);
            }
            Sent::BackendGone { .. }
            | Sent::LockWait { .. }
            | Sent::RetryWithNewId { .. }
            | Sent::ConsumerSkipped { .. } => {}
        }
        let inside = open.get(&conn).map(|changes| with(&committed, changes));
        out.push(StepView {
            outside: committed.clone(),
            inside,
        });
    }
    Some(out)
}

/// What a statement changed: `Ok(None)` for one that changes nothing (a read, the
/// playground's plumbing), `None` for one this rebuild does not know.
#[allow(clippy::option_option)]
fn change_of(
    sql: &str,
    params: &[String],
    answer: &Answer,
    end: &Snapshot,
) -> Option<Option<Change>> {
    let rows = match answer {
        Answer::Ok { rows } => rows.unwrap_or(1),
        Answer::Values { values } => values.len() as u64,
        // Refused or unanswered: no change.
        Answer::Error { .. } | Answer::Io { .. } | Answer::Nothing => 0,
    };
    let p = |i: usize| params.get(i).cloned();
    let changed = rows > 0;
    let change = if sql.starts_with("UPDATE tickets SET status = ") {
        let status = if sql.contains("'resolved'") {
            names::STATUS_RESOLVED
        } else if sql.contains("'open'") {
            names::STATUS_OPEN
        } else {
            return None;
        };
        changed.then(|| Change::Status {
            id: p(0).unwrap_or_default(),
            status: status.to_owned(),
        })
    } else if sql.starts_with("INSERT INTO outbox ") {
        let event_id = p(0)?;
        // PostgreSQL's own text of the stored jsonb, as the tables afterwards show it.
        let payload = end
            .outbox_row(&event_id)
            .map(|r| r.payload.clone())
            .or_else(|| p(2))?;
        changed.then(|| {
            Change::Outbox(OutboxRow {
                event_id,
                aggregate_id: p(1).unwrap_or_default(),
                payload,
                published_at: None,
            })
        })
    } else if sql.starts_with("UPDATE outbox SET published_at") {
        let event_id = p(0)?;
        let at = end
            .outbox_row(&event_id)
            .and_then(|r| r.published_at.clone())
            .unwrap_or_else(|| "now()".to_owned());
        changed.then_some(Change::Published { event_id, at })
    } else if sql.starts_with("INSERT INTO kafka_log ") {
        let Answer::Values { values } = answer else {
            return Some(None);
        };
        let offset = values.first()?.parse().ok()?;
        Some(Change::Kafka(KafkaRecord {
            offset,
            key: p(0)?,
            value: p(1)?,
        }))
    } else if sql.starts_with("INSERT INTO history ") {
        changed.then(|| {
            Change::History(HistoryEntry {
                event_id: p(0).unwrap_or_default(),
                ticket_id: p(1).unwrap_or_default(),
                to_status: p(2).unwrap_or_default(),
            })
        })
    } else if sql.starts_with("INSERT INTO inbox ") {
        changed.then(|| Change::Inbox(p(0).unwrap_or_default()))
    } else if sql.starts_with("INSERT INTO consumer_offsets ") {
        Some(Change::Offset(p(0)?.parse().ok()?))
    } else if writes(sql) {
        return None;
    } else {
        None
    };
    Some(change)
}

/// A statement that may change the tables and is not one of the above.
fn writes(sql: &str) -> bool {
    let head = sql.trim_start().to_ascii_uppercase();
    ["INSERT", "UPDATE", "DELETE", "TRUNCATE", "MERGE"]
        .iter()
        .any(|w| head.starts_with(w))
        || sql.contains("reset_tables")
}
