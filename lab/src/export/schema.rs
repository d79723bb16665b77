//! The script's preamble (a fresh schema with the playground's tables and the state the run
//! started from) and its closing block (every table, ordered by its key).

use std::fmt::Write as _;

use crate::snapshot::Snapshot;

use super::ExportError;
use super::quote::literal;

/// The schema every script works in: fixed and readable, so a learner can find it, and
/// dropped first so a script can be run again.
pub const SCHEMA: &str = "outbox_playground_run";

/// Lines every session runs first: literals keep their backslashes, and the lesson's
/// unqualified table names point at the run's schema.
pub fn session_setup() -> String {
    format!("SET standard_conforming_strings = on;\nSET search_path TO {SCHEMA};\n")
}

/// The lesson's DDL, byte for byte as the lesson gives it.
const LESSON_DDL: &str = "CREATE TABLE tickets (
    id     text PRIMARY KEY,
    status text NOT NULL
);
CREATE TABLE outbox (
    event_id     text        PRIMARY KEY,
    aggregate_id text        NOT NULL REFERENCES tickets(id),
    payload      jsonb       NOT NULL,
    published_at timestamptz NULL
);
";

/// The playground's stand-ins for Kafka and the History projection, as its migrations
/// leave them in every sandbox.
const STAND_INS_DDL: &str = "CREATE TABLE kafka_log (
    log_offset bigint PRIMARY KEY,
    key        text   NOT NULL,
    value      text   NOT NULL
);
CREATE TABLE history (
    event_id  text   NOT NULL,
    ticket_id text   NOT NULL,
    to_status text   NOT NULL,
    line      bigint PRIMARY KEY
);
CREATE TABLE inbox (
    event_id text PRIMARY KEY
);
CREATE TABLE consumer_offsets (
    consumer    text   PRIMARY KEY,
    next_offset bigint NOT NULL
);
";

/// The schema, the tables and the starting rows.
pub fn preamble(start: &Snapshot) -> Result<String, ExportError> {
    let mut out = String::new();
    let _ = writeln!(out, "DROP SCHEMA IF EXISTS {SCHEMA} CASCADE;");
    let _ = writeln!(out, "CREATE SCHEMA {SCHEMA};");
    out.push_str("-- The lesson's two tables, as lesson 8.2 defines them:\n");
    out.push_str(LESSON_DDL);
    out.push_str(
        "-- The playground's stand-ins for Kafka (topic tickets.status.v1) and History:\n",
    );
    out.push_str(STAND_INS_DDL);
    out.push_str("-- The tables as they were when the run started:\n");
    for t in &start.tickets {
        let _ = writeln!(
            out,
            "INSERT INTO tickets (id, status) VALUES ({}, {});",
            literal(&t.id)?,
            literal(&t.status)?
        );
    }
    for r in &start.outbox {
        let published = match &r.published_at {
            Some(at) => format!("{}::timestamptz", literal(at)?),
            None => "NULL".to_owned(),
        };
        let _ = writeln!(
            out,
            "INSERT INTO outbox (event_id, aggregate_id, payload, published_at) VALUES ({}, {}, {}::jsonb, {published});",
            literal(&r.event_id)?,
            literal(&r.aggregate_id)?,
            literal(&r.payload)?
        );
    }
    for k in &start.kafka {
        let _ = writeln!(
            out,
            "INSERT INTO kafka_log (log_offset, key, value) VALUES ({}, {}, {});",
            k.offset,
            literal(&k.key)?,
            literal(&k.value)?
        );
    }
    // History's line numbers only keep the order the consumer applied in.
    for (line, h) in start.history.iter().enumerate() {
        let _ = writeln!(
            out,
            "INSERT INTO history (event_id, ticket_id, to_status, line) VALUES ({}, {}, {}, {line});",
            literal(&h.event_id)?,
            literal(&h.ticket_id)?,
            literal(&h.to_status)?
        );
    }
    for id in &start.inbox {
        let _ = writeln!(
            out,
            "INSERT INTO inbox (event_id) VALUES ({});",
            literal(id)?
        );
    }
    if start.consumer_offset != 0 {
        let _ = writeln!(
            out,
            "INSERT INTO consumer_offsets (consumer, next_offset) VALUES ('history', {});",
            start.consumer_offset
        );
    }
    Ok(out)
}

/// Every table, ordered by its key as the playground shows it.
pub const FINAL_QUERIES: &str = "SELECT id, status FROM tickets ORDER BY id COLLATE \"C\";
SELECT event_id, aggregate_id, payload, published_at FROM outbox ORDER BY event_id COLLATE \"C\";
SELECT log_offset, key, value FROM kafka_log ORDER BY log_offset;
SELECT line, event_id, ticket_id, to_status FROM history ORDER BY line;
SELECT event_id FROM inbox ORDER BY event_id COLLATE \"C\";
SELECT consumer, next_offset FROM consumer_offsets ORDER BY consumer;
";

#[cfg(test)]
mod tests {
    use super::*;

    /// The template every sandbox is stamped from holds the lesson's DDL byte for byte; the
    /// script must write the same two statements.
    #[test]
    fn the_lessons_ddl_is_the_templates() {
        let template = include_str!("../../../migrations/20261202000001_lesson_template.sql");
        for statement in LESSON_DDL.split_inclusive(");\n") {
            assert!(template.contains(statement), "{statement}");
        }
        assert_eq!(LESSON_DDL.matches("CREATE TABLE").count(), 2);
    }

    #[test]
    fn the_starting_rows_are_literals() {
        let mut start = crate::model::initial_state();
        start.inbox.push("it's".into());
        let sql = preamble(&start).unwrap();
        assert!(sql.contains("INSERT INTO tickets (id, status) VALUES ('ticket-42', 'open');"));
        assert!(sql.contains("INSERT INTO inbox (event_id) VALUES ('it''s');"));
        assert!(
            !sql.contains("consumer_offsets (consumer"),
            "offset 0 needs no row"
        );
    }
}
