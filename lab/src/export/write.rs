//! The scripts' text: a header saying how to run them, the numbered steps of each session,
//! and the closing block in session A.

use std::fmt::Write as _;

use crate::model;
use crate::report::Report;

use super::plan::{Kind, Plan, PlanStep};
use super::quote::echo;
use super::schema::{FINAL_QUERIES, SCHEMA, preamble, session_setup};
use super::words::Note;
use super::{ExportError, Session};

const RULE: &str =
    "-- ------------------------------------------------------------------------------------------";

/// One script per session the plan uses, A first.
pub fn scripts(
    report: &Report,
    plan: &Plan,
    file_name: impl Fn(Session) -> String,
) -> Result<Vec<(Session, String)>, ExportError> {
    let start = report.before.clone().unwrap_or_else(model::initial_state);
    let mut sessions: Vec<Session> = plan.steps.iter().map(|s| s.session).collect();
    sessions.push(Session::A);
    sessions.sort();
    sessions.dedup();
    // The setup, the run's steps, and the closing block.
    let total = plan.steps.len() + 2;
    let kills = plan.steps.iter().any(|s| s.kind == Kind::Kill);
    let mut out: Vec<(Session, String)> = sessions
        .iter()
        .map(|&s| (s, header(report, s, &sessions, kills, &file_name)))
        .collect();
    let text = |out: &mut Vec<(Session, String)>, s: Session| -> usize {
        out.iter().position(|(x, _)| *x == s).unwrap_or(0)
    };

    let a = text(&mut out, Session::A);
    step_header(
        &mut out[a].1,
        1,
        total,
        Session::A,
        false,
        "run now: a fresh schema with the run's starting tables",
    );
    out[a].1.push_str(&preamble(&start)?);
    out[a].1.push_str(&echo(&format!("step 1 of {total} (session A) done: the schema {SCHEMA} holds the tables as the run found them")));
    out[a].1.push('\n');

    let mut dead_a = false;
    for (i, step) in plan.steps.iter().enumerate() {
        let n = i + 2;
        let at = text(&mut out, step.session);
        write_step(&mut out[at].1, n, total, step);
        if step.session == Session::A {
            dead_a = step.kind == Kind::Kill;
        }
    }

    let a = text(&mut out, Session::A);
    let script = &mut out[a].1;
    step_header(
        script,
        total,
        total,
        Session::A,
        dead_a,
        "run now: the tables at the end",
    );
    if dead_a {
        script.push_str(&session_setup());
    }
    write_notes(script, &plan.closing_notes, true);
    script.push_str(
        "-- Compare these with the playground's tables (published_at differs: it is now()).\n",
    );
    script.push_str(FINAL_QUERIES);
    Ok(out)
}

fn header(
    report: &Report,
    session: Session,
    sessions: &[Session],
    kills: bool,
    file_name: &impl Fn(Session) -> String,
) -> String {
    let mut h = String::new();
    let _ = writeln!(
        h,
        "-- Outbox playground, lesson 8.2: a run ({}) as psql scripts, for PostgreSQL 13 or later.",
        report.action.id()
    );
    if sessions.len() == 1 {
        h.push_str("-- The run used one session: this file is the whole replay.\n");
        if kills {
            h.push_str("-- Run it step by step in one psql window (psql -X): paste each step in turn. One step\n-- asks you to kill psql, as the playground killed its process; then open a new window.\n");
        } else {
            let _ = writeln!(
                h,
                "-- Run it in psql: psql -X -f {} (or paste the steps one by one).",
                file_name(session)
            );
        }
    } else {
        let _ = writeln!(
            h,
            "-- The run used {} sessions at once: this is session {}. Open one psql window (psql -X) per",
            sessions.len(),
            session.label()
        );
        h.push_str("-- session and paste the steps in the order of their numbers, switching windows as they say:\n");
        for &s in sessions {
            let _ = writeln!(h, "--   session {}: {}", s.label(), file_name(s));
        }
    }
    h.push_str(
        "-- Every statement's values are written as quoted literals; nothing else is run.\n",
    );
    h.push_str(&session_setup());
    h.push('\n');
    h
}

fn step_header(out: &mut String, n: usize, total: usize, s: Session, reconnect: bool, what: &str) {
    out.push('\n');
    out.push_str(RULE);
    out.push('\n');
    let window = if reconnect { ", a new psql window" } else { "" };
    let _ = writeln!(
        out,
        "-- step {n} of {total} (session {}{window}): {what}",
        s.label()
    );
}

fn write_step(out: &mut String, n: usize, total: usize, step: &PlanStep) {
    let what = match (&step.kind, step.waits) {
        (Kind::Kill, _) => "kill this psql now",
        (Kind::Run, true) => "run now, it will wait",
        (Kind::Run, false) => "run now",
    };
    step_header(out, n, total, step.session, step.reconnect, what);
    if step.reconnect {
        out.push_str("-- The psql of this session was killed: start a new one; it needs these two lines first.\n");
        out.push_str(&session_setup());
    }
    // A step that kills or waits says so in one line of its own; its notes stay comments.
    let plain = step.kind == Kind::Run && !step.waits;
    write_notes(out, &step.notes, plain);
    let who = format!("step {n} of {total} (session {})", step.session.label());
    let expect: Vec<&str> = step
        .expect
        .iter()
        .map(String::as_str)
        .filter(|e| !e.is_empty())
        .collect();
    match step.kind {
        Kind::Kill => {
            out.push_str(&echo(&format!(
                "{who}: the process dies here. Kill this psql now (kill -9, or close its window): \
                 quitting politely would send a ROLLBACK, a dead process sends nothing"
            )));
            out.push('\n');
        }
        Kind::Run if step.waits => {
            out.push_str(&echo(&format!(
                "{who}: the last statement below waits for a row lock another session holds \
                 (pg_stat_activity: wait_event_type Lock); go on in the other window. When it \
                 is let go the run saw: {}",
                expect.join(", ")
            )));
            out.push('\n');
            for line in &step.lines {
                out.push_str(line);
                out.push('\n');
            }
        }
        Kind::Run => {
            for line in &step.lines {
                out.push_str(line);
                out.push('\n');
            }
            let said = if expect.is_empty() {
                format!("{who} done")
            } else {
                format!("{who} done; the run saw: {}", expect.join(", "))
            };
            out.push_str(&echo(&said));
            out.push('\n');
        }
    }
}

fn write_notes(out: &mut String, notes: &[Note], echoed: bool) {
    for note in notes {
        for line in wrap(note.text, 92) {
            let _ = writeln!(out, "-- {line}");
        }
    }
    for said in notes.iter().filter_map(|n| n.echo).filter(|_| echoed) {
        out.push_str(&echo(said));
        out.push('\n');
    }
}

/// Words in lines of at most `width` characters (a longer word gets a line of its own).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().map(|l| l.len()).unwrap_or(0);
        if line > 0 && line + 1 + word.len() > width {
            lines.push(String::new());
        }
        if let Some(l) = lines.last_mut() {
            if !l.is_empty() {
                l.push(' ');
            }
            l.push_str(word);
        }
    }
    lines
}
