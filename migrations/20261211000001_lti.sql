-- LTI 1.3 launches (see the README's "LTI 1.3 (launch)").
--
-- A login initiation leaves its state and nonce here; the launch that follows uses them once
-- (used_at), within ten minutes. Used and expired rows stay a while so that a replay is told
-- apart from a state that was never issued, and are then deleted by later logins.
CREATE TABLE lab.lti_logins (
    state      text        PRIMARY KEY,
    nonce      text        NOT NULL UNIQUE,
    issuer     text        NOT NULL,
    client_id  text        NOT NULL,
    -- The language the login asked for (`lang=` on the registered login URL), if any.
    lang       text,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX lti_logins_expiry ON lab.lti_logins (expires_at);

-- One learner on one resource link of one deployment of one platform: their sandbox is the one
-- the token with this hash holds (the token is derived from these four values under the
-- server's secret, so it is never stored). The AGS line item is kept for score passback.
CREATE TABLE lab.lti_links (
    issuer           text        NOT NULL,
    deployment_id    text        NOT NULL,
    subject          text        NOT NULL,
    resource_link_id text        NOT NULL,
    token_hash       bytea       NOT NULL,
    ags_lineitem     text,
    ags_scope        text[]      NOT NULL DEFAULT '{}',
    custom           jsonb       NOT NULL DEFAULT '{}',
    first_launch_at  timestamptz NOT NULL DEFAULT now(),
    last_launch_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (issuer, deployment_id, subject, resource_link_id)
);
