-- Who may get a new sandbox, and what happens when none is left.
--
-- A new sandbox costs a schema, so newcomers from one client address share a budget (a token
-- bucket, like the per-sandbox request budget), spent only when a sandbox is really claimed.
-- Losing the buckets in a PostgreSQL crash only refills them: the table is unlogged.
CREATE UNLOGGED TABLE lab.claim_budgets (
    client    text        PRIMARY KEY,
    budget    real        NOT NULL,
    budget_at timestamptz NOT NULL DEFAULT now()
);

-- Spends one claim from `client`'s bucket: `per_second` flow back in, at most `burst` are
-- kept. False when the bucket is empty (nothing is spent then).
CREATE FUNCTION lab.spend_claim(client text, per_second real, burst real) RETURNS boolean
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    spent boolean;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    INSERT INTO lab.claim_budgets AS b (client, budget, budget_at)
    VALUES (spend_claim.client, spend_claim.burst - 1, now())
    ON CONFLICT ON CONSTRAINT claim_budgets_pkey DO UPDATE
       SET budget = least(spend_claim.burst,
                          b.budget + spend_claim.per_second
                                     * extract(epoch FROM now() - b.budget_at)::real) - 1,
           budget_at = now()
     WHERE least(spend_claim.burst,
                 b.budget + spend_claim.per_second
                            * extract(epoch FROM now() - b.budget_at)::real) >= 1
    RETURNING true INTO spent;
    RETURN coalesce(spent, false);
END
$$;

-- Buckets untouched for `older` are full again anyway: forget them.
CREATE FUNCTION lab.forget_claim_budgets(older interval) RETURNS integer
LANGUAGE sql AS $$
    WITH gone AS (DELETE FROM lab.claim_budgets WHERE budget_at < now() - older RETURNING 1)
    SELECT count(*)::integer FROM gone
$$;

-- The sandboxes a comparison runs in belong to one learner's sandbox; they are never handed
-- to anybody else.
ALTER TABLE lab.sandboxes ADD COLUMN pair_of text;
UPDATE lab.sandboxes p SET pair_of = m.schema_name
  FROM lab.sandboxes m WHERE p.schema_name = ANY (m.compare_pair);
CREATE INDEX sandboxes_recyclable ON lab.sandboxes (last_used_at)
    WHERE token_hash IS NOT NULL AND pair_of IS NULL;

-- When every sandbox is taken: hands the least recently used learner's sandbox that has been
-- idle for at least `min_idle` to a newcomer, back in the lesson's initial state and cleared
-- of everything its former learner kept (their comparison pair stays with it: it is reset
-- before each comparison). A sandbox an action is working on holds its advisory lock and is
-- skipped, and so is one whose row another recycler holds. NULL when none qualifies.
CREATE FUNCTION lab.recycle_sandbox(token_hash bytea, min_idle interval) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    victim text;
BEGIN
    FOR victim IN
        SELECT s.schema_name FROM lab.sandboxes s
         WHERE s.token_hash IS NOT NULL AND s.pair_of IS NULL
           AND s.last_used_at < now() - min_idle
         ORDER BY s.last_used_at
         LIMIT 10
         FOR UPDATE SKIP LOCKED
    LOOP
        IF pg_try_advisory_xact_lock(hashtextextended(victim, 0)) THEN
            PERFORM lab.reset_sandbox(victim);
            UPDATE lab.sandboxes s
               SET token_hash = recycle_sandbox.token_hash, claimed_at = now(),
                   last_used_at = now(), last_report = NULL, pending = NULL,
                   last_compare = NULL, budget = DEFAULT, budget_at = now()
             WHERE s.schema_name = victim;
            RETURN victim;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;
