-- The tables of lesson 8.2, exactly as the lesson defines them, in a template schema.
-- Every learner sandbox is stamped from this schema (lab.stamp_sandbox), so its `tickets`
-- and `outbox` are these definitions and its initial rows are these rows.
CREATE SCHEMA lab_template;

SET LOCAL search_path TO lab_template;

CREATE TABLE tickets (
    id     text PRIMARY KEY,
    status text NOT NULL
);

CREATE TABLE outbox (
    event_id     text        PRIMARY KEY,
    aggregate_id text        NOT NULL REFERENCES tickets(id),
    payload      jsonb       NOT NULL,
    published_at timestamptz NULL
);

-- The lesson's initial state: ticket-42 committed as open; no outbox row.
INSERT INTO tickets (id, status) VALUES ('ticket-42', 'open');

-- Back to the session's search_path: the migrator records this migration in its own table.
RESET search_path;
