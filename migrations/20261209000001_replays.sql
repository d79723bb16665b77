-- Shared runs: a report kept for a replay link. Content-addressed (the id is the start of the
-- SHA-256 of the stored text, so sharing one run twice gives one link), immutable, and tied
-- to no sandbox, cookie or address; a row lives until `expires_at` (sharing it again later
-- extends it).
CREATE TABLE lab.replays (
    id         text        PRIMARY KEY CHECK (id ~ '^[0-9a-f]{32}$'),
    report     text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX replays_expiry ON lab.replays (expires_at);
