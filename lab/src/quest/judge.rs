//! Which of a quest's checks an action's report meets.
//!
//! Table checks read `report.snapshot`, the tables PostgreSQL returned after the action; facts
//! read the trace and what PostgreSQL reported while the action ran (`pg_xact_status`,
//! `pg_blocking_pids`). The reference model and the chosen settings are never read, except
//! that a dead end counts attempts by the mode they ran in.

use crate::catalog::ActionKind;
use crate::report::Report;
use crate::snapshot::Snapshot;
use crate::sql_trace::{Actor, Answer, Lane, Sent, TxState};
use crate::stepped::WaiterState;

use super::seen::QuestSeen;
use super::{Condition, Fact, Quest, QuestBook, Table};

/// What an action's bookkeeping statement records for the quests it concerns, as parallel
/// arrays (`lab.leave_action`): each quest's stages met (a bit mask), its stage count, and for
/// an attempt along its dead end the count its tries stop at (else 0).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Marks {
    pub ids: Vec<String>,
    pub met: Vec<i32>,
    pub stages: Vec<i32>,
    pub tries_to: Vec<i32>,
}

impl Marks {
    pub fn of(book: &QuestBook, seen: &[QuestSeen]) -> Self {
        let mut marks = Marks::default();
        for s in seen {
            let Some(quest) = book.get(&s.quest) else {
                continue;
            };
            let met = s.met();
            if met == 0 && !s.tried {
                continue;
            }
            marks.ids.push(s.quest.clone());
            marks.met.push(i32::try_from(met).unwrap_or(0));
            marks
                .stages
                .push(i32::try_from(quest.stages.len()).unwrap_or(i32::MAX));
            let tries_to = quest.dead_end.as_ref().map_or(0, |d| d.after);
            marks.tries_to.push(if s.tried {
                i32::try_from(tries_to).unwrap_or(i32::MAX)
            } else {
                0
            });
        }
        marks
    }
}

/// Judges `report` against every quest; keeps only the quests it concerns (a check held, or an
/// attempt along a dead end), so a report stays small.
pub fn judge_all(book: &QuestBook, report: &Report) -> Vec<QuestSeen> {
    book.quests
        .iter()
        .filter_map(|q| {
            let seen = judge(q, report);
            let any = seen.tried || seen.held.iter().flatten().any(|&h| h);
            any.then_some(seen)
        })
        .collect()
}

pub fn judge(quest: &Quest, report: &Report) -> QuestSeen {
    let held = quest
        .stages
        .iter()
        .map(|stage| {
            stage
                .checks
                .iter()
                .map(|c| holds(&c.condition, report))
                .collect()
        })
        .collect::<Vec<Vec<bool>>>();
    let tried = quest.dead_end.as_ref().is_some_and(|d| {
        report.action == ActionKind::Attempt
            && report.attempt.as_ref().is_some_and(|a| a.mode == d.mode)
    });
    QuestSeen {
        quest: quest.id.clone(),
        held,
        tried,
    }
}

pub fn holds(condition: &Condition, report: &Report) -> bool {
    match condition {
        Condition::Rows {
            table,
            equal,
            contain,
            null,
            not_null,
            rows,
        } => {
            let matching = table_rows(&report.snapshot, *table)
                .into_iter()
                .filter(|row| {
                    equal
                        .iter()
                        .all(|(col, v)| column(row, col).is_some_and(|c| c == v))
                        && contain
                            .iter()
                            .all(|(col, v)| column(row, col).is_some_and(|c| c.contains(v)))
                        && null.iter().all(|col| column(row, col).is_none())
                        && not_null.iter().all(|col| column(row, col).is_some())
                })
                .count();
            rows.holds(matching)
        }
        Condition::Fact(fact) => fact_holds(*fact, report),
    }
}

/// A row as (column, value) pairs; NULL is `None`.
type Row = Vec<(&'static str, Option<String>)>;

fn column<'r>(row: &'r Row, name: &str) -> Option<&'r str> {
    row.iter()
        .find(|(c, _)| *c == name)
        .and_then(|(_, v)| v.as_deref())
}

fn table_rows(s: &Snapshot, table: Table) -> Vec<Row> {
    let some = |v: &str| Some(v.to_owned());
    match table {
        Table::Tickets => s
            .tickets
            .iter()
            .map(|t| vec![("id", some(&t.id)), ("status", some(&t.status))])
            .collect(),
        Table::Outbox => s
            .outbox
            .iter()
            .map(|r| {
                vec![
                    ("event_id", some(&r.event_id)),
                    ("aggregate_id", some(&r.aggregate_id)),
                    ("payload", some(&r.payload)),
                    ("published_at", r.published_at.clone()),
                ]
            })
            .collect(),
        Table::KafkaLog => s
            .kafka
            .iter()
            .map(|r| {
                vec![
                    ("log_offset", Some(r.offset.to_string())),
                    ("key", some(&r.key)),
                    ("value", some(&r.value)),
                ]
            })
            .collect(),
        Table::History => s
            .history
            .iter()
            .map(|h| {
                vec![
                    ("event_id", some(&h.event_id)),
                    ("ticket_id", some(&h.ticket_id)),
                    ("to_status", some(&h.to_status)),
                ]
            })
            .collect(),
        Table::Inbox => s
            .inbox
            .iter()
            .map(|e| vec![("event_id", some(e))])
            .collect(),
    }
}

fn is_sql(sent: &Sent, want: &str) -> bool {
    matches!(sent, Sent::Sql { sql, .. } if sql == want)
}

fn is_update(sent: &Sent) -> bool {
    matches!(sent, Sent::Sql { sql, .. } if sql.trim_start().starts_with("UPDATE tickets"))
}

fn fact_holds(fact: Fact, report: &Report) -> bool {
    let service_commits = || {
        report
            .trace
            .iter()
            .filter(|s| s.actor == Actor::Service && is_sql(&s.sent, "COMMIT"))
    };
    match fact {
        Fact::CommitReplyLost => service_commits().any(|s| s.tx == TxState::Unknown),
        Fact::CommitConfirmed => {
            service_commits().any(|s| s.tx == TxState::Committed && ok(&s.answer))
        }
        Fact::ProvenFromDatabase => report.reconciliation.as_ref().is_some_and(|r| {
            r.xact_status.is_some() && r.by_xid_committed == Some(r.by_ids_committed)
        }),
        Fact::OtherWriterWaited => report
            .stepped
            .as_ref()
            .and_then(|s| s.waiter.as_ref())
            .is_some_and(|w| !w.blocked_by.is_empty() || !w.waited_behind.is_empty()),
        Fact::OtherWriterFoundZeroRows => report
            .stepped
            .as_ref()
            .and_then(|s| s.waiter.as_ref())
            .is_some_and(|w| w.state == WaiterState::Done && w.rows == Some(0)),
        Fact::ServiceCrashed => report
            .trace
            .iter()
            .any(|s| s.actor == Actor::Service && s.sent == Sent::ProcessCrashed),
        Fact::UpdateChangedNothing => report.trace.iter().any(|s| {
            s.actor == Actor::Service
                && is_update(&s.sent)
                && s.answer == Answer::Ok { rows: Some(0) }
        }),
        Fact::TwoCallersToldResolved => [Lane::A, Lane::B].iter().all(|&lane| {
            let steps = || {
                report
                    .trace
                    .iter()
                    .filter(move |s| s.lane == Some(lane) && s.actor == Actor::Service)
            };
            steps().any(|s| is_update(&s.sent) && s.answer == Answer::Ok { rows: Some(1) })
                && steps().any(|s| {
                    is_sql(&s.sent, "COMMIT") && s.tx == TxState::Committed && ok(&s.answer)
                })
        }),
    }
}

fn ok(answer: &Answer) -> bool {
    matches!(answer, Answer::Ok { .. })
}
