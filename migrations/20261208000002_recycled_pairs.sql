-- Recycling a learner's sandbox for a newcomer also gives its comparison pair back: the two
-- sandboxes are reset, forgotten and returned to the warm pool, where the next newcomer (or
-- the next comparison) takes them. Before, a pair stayed bound to its main through every
-- recycling and was never a candidate itself, so a registry filled by comparisons could not
-- make room.
CREATE OR REPLACE FUNCTION lab.recycle_sandbox(token_hash bytea, min_idle interval) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    victim text;
    pair   text;
BEGIN
    FOR victim IN
        SELECT s.schema_name FROM lab.sandboxes s
         WHERE s.token_hash IS NOT NULL AND s.pair_of IS NULL
           AND s.last_used_at < now() - min_idle
         ORDER BY s.last_used_at
         LIMIT 10
         FOR UPDATE SKIP LOCKED
    LOOP
        -- The main's lock covers its pair: only its comparisons use them, under that lock.
        IF pg_try_advisory_xact_lock(hashtextextended(victim, 0)) THEN
            PERFORM lab.reset_sandbox(victim);
            PERFORM lab.forget_progress(victim);
            DELETE FROM lab.sandbox_notes n WHERE n.schema_name = victim;
            UPDATE lab.sandboxes s
               SET token_hash = recycle_sandbox.token_hash, claimed_at = now(),
                   last_used_at = now(), budget = DEFAULT, budget_at = now(),
                   predict_first = NULL, compare_pair = NULL
             WHERE s.schema_name = victim;
            FOR pair IN SELECT p.schema_name FROM lab.sandboxes p WHERE p.pair_of = victim LOOP
                PERFORM lab.reset_sandbox(pair);
                PERFORM lab.forget_progress(pair);
                DELETE FROM lab.sandbox_notes n WHERE n.schema_name = pair;
                UPDATE lab.sandboxes p
                   SET token_hash = NULL, claimed_at = NULL, pair_of = NULL,
                       budget = DEFAULT, budget_at = now(), predict_first = NULL
                 WHERE p.schema_name = pair;
            END LOOP;
            RETURN victim;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;
