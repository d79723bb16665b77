-- The secret that signs the embed's frame tokens, shared by every server process on this
-- database. A frame token names a sandbox before the sandbox exists; the signature says this
-- server issued it (and when), so a token made up elsewhere is never adopted.
CREATE TABLE lab.server_secret (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    secret   bytea   NOT NULL
);
INSERT INTO lab.server_secret (secret)
VALUES (decode(replace(gen_random_uuid()::text, '-', '')
            || replace(gen_random_uuid()::text, '-', ''), 'hex'));
