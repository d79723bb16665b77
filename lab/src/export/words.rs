//! What the playground did at each step, in a learner's words. Only the script's own text goes
//! here: nothing a learner typed ever reaches a comment or an `\echo` (a line break in it would
//! end the comment and turn the rest into commands).

use crate::catalog::Step;
use crate::sql_trace::{Actor, Answer, TxState};

use super::Session;

/// A few sentences for a step (a comment); `echo`, when there is one, is also printed by psql
/// when the step runs (one plain line: no backslash).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub text: &'static str,
    pub echo: Option<&'static str>,
}

const fn said(text: &'static str) -> Note {
    Note { text, echo: None }
}

const fn shown(text: &'static str) -> Note {
    Note {
        text,
        echo: Some(text),
    }
}

/// Who acts in a step, and which part of the lesson's function it is; `sql` is the step's
/// first statement.
pub fn doing(actor: Actor, step: Option<Step>, sql: &str) -> Note {
    let unguarded = sql.starts_with("UPDATE tickets") && !sql.contains("AND status = 'open'");
    said(match (actor, step) {
        (Actor::Service, Some(Step::Update)) if unguarded => {
            "Step 1 of the lesson's function, with the mistake unguarded_update: the UPDATE of \
             ticket-42 has no AND status = 'open', so it changes the row whatever its status."
        }
        (Actor::Service, Some(Step::Begin)) => {
            "The ticket service opens the lesson's transaction on its connection."
        }
        (Actor::Service, Some(Step::Update)) => {
            "Step 1 of the lesson's function: the UPDATE of ticket-42, through the transaction. \
             With the guard (AND status = 'open') it changes 1 row only if the ticket is still open; \
             0 rows is a business answer: roll back, no event."
        }
        (Actor::Service, Some(Step::Insert)) => {
            "Step 2: the outbox row, the durable intent to publish, in the same transaction. \
             A duplicate event_id is refused by the primary key (23505)."
        }
        (Actor::Service, Some(Step::Commit)) => {
            "Step 3: COMMIT, sent only because both statements succeeded. Once PostgreSQL answers \
             COMMIT, the status and the outbox row are durable together."
        }
        (Actor::Service, Some(Step::Publish)) => {
            "Trace A: the service itself sends the event to Kafka."
        }
        (Actor::Service, Some(Step::Retry)) => {
            "The client retries the whole function with a fresh event_id, on a new connection."
        }
        (Actor::Service, _) => "The ticket service runs the lesson's function.",
        (Actor::ServicePool, _) => {
            "The mistake: this statement goes through another pooled connection, in a \
             transaction of its own that commits at once, outside the ticket transaction. \
             A rollback of the ticket transaction no longer undoes it."
        }
        (Actor::Broker, _) => {
            "The simulated Kafka broker, on a connection of its own: it appends to the topic \
             (or records the consumer's offset) and commits, whatever the ticket transaction \
             does later. Kafka is not a participant of that transaction."
        }
        (Actor::Consumer, _) => {
            "The History consumer, on a connection of its own: it reads from its committed \
             offset and applies each event in a transaction of its own (with its inbox row \
             when it has an inbox)."
        }
        (Actor::Publisher, _) => {
            "The outbox publisher (lesson 8.3), on a connection of its own: it locks the \
             unpublished outbox rows, has the broker append each, marks it published, commits."
        }
        (Actor::OtherWriter, _) => {
            "Another writer: the lesson's guarded UPDATE of ticket-42 in a transaction of its \
             own, on a second connection."
        }
        (Actor::Support, _) => "Support reopens ticket-42 in a transaction of its own.",
        (Actor::Network | Actor::Postgres | Actor::Playground, _) => {
            "What PostgreSQL did meanwhile."
        }
    })
}

/// The playground's plumbing, left out of the script.
pub fn plumbing(sql: &str) -> Note {
    said(if sql.contains("lock_timeout") {
        "The playground also pointed this transaction at the learner's sandbox (search_path), \
         gave it a lock_timeout and a statement_timeout so that a forgotten wait ends, and \
         noted its backend's pid. This script set search_path once at the top instead."
    } else if sql.contains("pg_current_xact_id") {
        "The playground then pointed the transaction at the learner's sandbox (search_path) and \
         noted the backend's pid and the transaction id (pg_current_xact_id(), which \
         reconciliation asks pg_xact_status() about later). This script set search_path once \
         at the top instead."
    } else if sql.contains("pg_xact_status") {
        "The playground asked pg_xact_status() whether the first COMMIT applied, only to name \
         what the retry did; the client could not know."
    } else if sql.contains("set_config('search_path'") {
        "The playground pointed this transaction at the learner's sandbox (search_path); this \
         script set search_path once at the top instead."
    } else {
        "The playground's own bookkeeping ran here; it is not part of the lesson and is left out."
    })
}

pub fn crash(actor: Actor, tx: TxState) -> Note {
    if tx == TxState::Idle && actor == Actor::Consumer {
        return shown(
            "The consumer process dies here, after applying, before its offset is committed. \
             Kill this psql now (close its window, or kill -9 its process from another shell).",
        );
    }
    if tx == TxState::Idle {
        return shown(
            "The process dies here, after COMMIT returned and before it published anything. \
             Kill this psql now (close its window, or kill -9 its process from another shell).",
        );
    }
    Note {
        text: "The process dies here. Kill this psql now: close its window, or kill -9 its \
               process from another shell. Do not type \\q: that would end the session politely \
               with a ROLLBACK; a dead process sends nothing, its connection just drops, and \
               PostgreSQL rolls the open transaction back by itself.",
        echo: Some(
            "The process dies here: kill this psql now (kill -9, or close its window). Quitting \
             politely would send a ROLLBACK; a dead process sends nothing.",
        ),
    }
}

pub fn cut(applied: bool) -> Note {
    shown(if applied {
        "The network fails here: PostgreSQL received COMMIT and committed, but the reply never \
         reached the service, which only sees an I/O error. Kill this psql now: the connection \
         is gone. The client cannot know whether it committed; it must read the state by the \
         stable ids, never retry with a new event_id."
    } else {
        "The network fails here: COMMIT never reached PostgreSQL. Kill this psql now: the \
         connection is gone, and PostgreSQL rolls the open transaction back. The client cannot \
         know whether it committed; it must read the state by the stable ids."
    })
}

pub fn lost_reply(applied: bool) -> Note {
    said(if applied {
        "In the run this COMMIT reached PostgreSQL and was applied; its reply was lost."
    } else {
        "In the run this COMMIT was lost on the way: PostgreSQL never received it."
    })
}

pub fn backend_gone(tx: TxState) -> Note {
    shown(match tx {
        TxState::RolledBack => {
            "PostgreSQL found the dropped connection and rolled back its open transaction; \
             the backend has left pg_stat_activity (wait for that before going on)."
        }
        TxState::Unknown => {
            "PostgreSQL has ended the dropped connection's backend. The service still does not \
             know whether COMMIT applied."
        }
        _ => {
            "PostgreSQL has ended the dropped connection's backend; nothing was left open \
             (wait until it has left pg_stat_activity before going on)."
        }
    })
}

/// Why a connection of its own gets another psql window.
pub fn own_session(session: Session) -> Note {
    said(match session {
        Session::C => {
            "Session C: in the run this was a third connection, committing on its own while \
             sessions A and B both held a transaction open. Run inside either of them it would \
             be rolled back with that transaction (or wait behind it), so it gets a window of \
             its own."
        }
        _ => {
            "Another window: in the run this was a connection of its own that committed by \
             itself while session A's transaction was still open. Run in session A it would \
             become part of that transaction and be rolled back with it."
        }
    })
}

pub fn lock_wait() -> Note {
    shown(
        "This session now waits for a row lock that another session holds: pg_stat_activity \
         shows it with wait_event_type = Lock, and pg_blocking_pids() names the holder. Go on \
         with the next step in the other window.",
    )
}

pub fn retry() -> Note {
    said(
        "The mistake new_event_id_on_retry: the client took the unknown COMMIT for a failure \
         and runs the function again with a fresh event_id, on a new connection.",
    )
}

pub fn consumer_skipped() -> Note {
    said("The consumer could not read a record as an event and skipped it.")
}

pub fn idle_timeout() -> Note {
    shown(
        "PostgreSQL ended the held transaction itself: it sat idle longer than \
         idle_in_transaction_session_timeout.",
    )
}

/// What psql prints for a statement, as the run's answer says.
pub fn expect(sql: &str, answer: &Answer) -> String {
    let verb = sql.split_whitespace().next().unwrap_or("");
    match answer {
        Answer::Ok { rows: Some(n) } if verb == "INSERT" => format!("INSERT 0 {n}"),
        Answer::Ok { rows: Some(n) } => format!("{verb} {n}"),
        Answer::Ok { rows: None } => verb.to_owned(),
        Answer::Values { values } if values.len() == 1 => format!("{verb}: 1 row"),
        Answer::Values { values } => format!("{verb}: {} rows", values.len()),
        Answer::Error { sqlstate, .. } if is_sqlstate(sqlstate) => {
            format!("ERROR (SQLSTATE {sqlstate})")
        }
        Answer::Error { .. } => "ERROR".to_owned(),
        Answer::Io { .. } => "no answer".to_owned(),
        Answer::Nothing => String::new(),
    }
}

/// A SQLSTATE is five letters or digits; anything else is not printed.
fn is_sqlstate(code: &str) -> bool {
    code.len() == 5
        && code
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}
