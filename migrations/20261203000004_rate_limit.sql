-- A per-sandbox request budget (a token bucket), kept in PostgreSQL so that every server
-- process behind a load balancer spends from the same bucket.
ALTER TABLE lab.sandboxes
    ADD COLUMN budget    real        NOT NULL DEFAULT 30,
    ADD COLUMN budget_at timestamptz NOT NULL DEFAULT now();

-- Finds a learner's sandbox and spends one request from its budget: `per_second` flow back in,
-- at most `burst` are kept. `allowed` is false when the budget is spent; `schema_name` is NULL
-- for an unknown token. The use note for the reaper is refreshed at most once a minute, and
-- an unchanged indexed column keeps the update HOT. Not worth a WAL flush.
CREATE FUNCTION lab.enter_sandbox(token_hash bytea, per_second real, burst real,
                                  OUT schema_name text, OUT allowed boolean)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    UPDATE lab.sandboxes s
       SET budget = least(enter_sandbox.burst,
                          s.budget + enter_sandbox.per_second
                                     * extract(epoch FROM now() - s.budget_at)::real) - 1,
           budget_at = now(),
           last_used_at = CASE WHEN s.last_used_at < now() - interval '1 minute'
                               THEN now() ELSE s.last_used_at END
     WHERE s.token_hash = enter_sandbox.token_hash
       AND least(enter_sandbox.burst,
                 s.budget + enter_sandbox.per_second
                            * extract(epoch FROM now() - s.budget_at)::real) >= 1
    RETURNING s.schema_name INTO schema_name;
    IF schema_name IS NOT NULL THEN
        allowed := true;
        RETURN;
    END IF;
    SELECT s.schema_name INTO schema_name
      FROM lab.sandboxes s WHERE s.token_hash = enter_sandbox.token_hash;
    allowed := false;
END
$$;
