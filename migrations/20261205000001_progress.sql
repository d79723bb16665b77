-- How far each learner's sandbox has gone through the lesson (issue: predict, then see).
--
-- A failure-table row or a wrong way counts as explored once the sandbox has produced it;
-- `predicted` is the verdict of the last prediction made for an attempt that produced it.
-- Reset keeps all of it; "start over" and recycling for a newcomer clear it; reaping the
-- sandbox drops it with the registry row.
CREATE TABLE lab.explored (
    schema_name text    NOT NULL REFERENCES lab.sandboxes ON DELETE CASCADE,
    kind        text    NOT NULL CHECK (kind IN ('row', 'wrong')),
    id          text    NOT NULL CHECK (id ~ '^[a-z_]{1,40}$'),
    predicted   boolean,
    PRIMARY KEY (schema_name, kind, id)
);

ALTER TABLE lab.sandboxes
    ADD COLUMN predictions_made  integer NOT NULL DEFAULT 0,
    ADD COLUMN predictions_right integer NOT NULL DEFAULT 0,
    -- The learner's "predict first" switch; NULL = the page's default (on in the embed).
    ADD COLUMN predict_first     boolean;

-- Keeps the last report and, in the same round trip, what the action explored. Like the
-- report itself this is the playground's bookkeeping, not the lesson: no WAL flush waited for.
DROP FUNCTION lab.save_report(text, jsonb, jsonb, boolean);
CREATE FUNCTION lab.save_report(sandbox text, report jsonb, pending jsonb, keep_pending boolean,
                                found_kind text, found_id text, predicted boolean)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    UPDATE lab.sandboxes s
       SET last_report = save_report.report,
           pending = CASE WHEN keep_pending THEN s.pending ELSE save_report.pending END,
           last_used_at = now(),
           predictions_made = s.predictions_made + (save_report.predicted IS NOT NULL)::integer,
           predictions_right = s.predictions_right + coalesce(save_report.predicted, false)::integer
     WHERE s.schema_name = sandbox;
    IF found_kind IS NOT NULL THEN
        INSERT INTO lab.explored AS e (schema_name, kind, id, predicted)
        VALUES (sandbox, found_kind, found_id, save_report.predicted)
        ON CONFLICT (schema_name, kind, id) DO UPDATE
           SET predicted = coalesce(excluded.predicted, e.predicted);
    END IF;
END
$$;

-- Forgets a sandbox's progress ("start over", and a sandbox recycled for a newcomer).
CREATE FUNCTION lab.forget_progress(sandbox text) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM lab.explored WHERE schema_name = sandbox;
    UPDATE lab.sandboxes SET predictions_made = 0, predictions_right = 0
     WHERE schema_name = sandbox;
$$;

-- As before, and the former learner's progress and switch go too.
CREATE OR REPLACE FUNCTION lab.recycle_sandbox(token_hash bytea, min_idle interval) RETURNS text
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
            PERFORM lab.forget_progress(victim);
            UPDATE lab.sandboxes s
               SET token_hash = recycle_sandbox.token_hash, claimed_at = now(),
                   last_used_at = now(), last_report = NULL, pending = NULL,
                   last_compare = NULL, budget = DEFAULT, budget_at = now(),
                   predict_first = NULL
             WHERE s.schema_name = victim;
            RETURN victim;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;
