-- An action's bookkeeping costs PostgreSQL less: two statements on the connection that holds
-- the sandbox's lock (one takes the lock and gives the tables, one keeps the report and lets the
-- lock go), no WAL for what is kept only for the learner's convenience, and a reset that touches
-- only the tables that changed.

-- Puts back only the named tables (those the reset found different from the template; the
-- caller read them under the sandbox's lock): emptied children before parents, then refilled
-- from the template parents first. A whole reset is twelve statements; after an attempt only
-- tickets and outbox differ, and this is four. Names that are not template tables are ignored.
CREATE FUNCTION lab.reset_tables(sandbox text, changed text[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    tables name[] := ARRAY(SELECT t FROM lab.template_tables() AS t WHERE t = ANY (changed));
    tbl    name;
BEGIN
    PERFORM lab.check_sandbox_name(sandbox);
    FOR i IN REVERSE coalesce(array_length(tables, 1), 0)..1 LOOP
        EXECUTE format('DELETE FROM %I.%I', sandbox, tables[i]);
    END LOOP;
    FOREACH tbl IN ARRAY tables LOOP
        EXECUTE format('INSERT INTO %I.%I SELECT * FROM lab_template.%I', sandbox, tbl, tbl);
    END LOOP;
END
$$;

-- What the playground keeps for a page reload and for reconciliation moves out of the registry
-- into an UNLOGGED table: writing it costs no WAL, and the registry's row, updated on every
-- request to spend the request budget, stays narrow (it carried the last report inline, ~1.5 kB
-- compressed, into the WAL of every update). After a crash of PostgreSQL (not a clean restart)
-- this table comes back empty: a reload then shows the tables without the last report, and
-- "Reconcile" answers that there is nothing to reconcile. The sandboxes, their tables and the
-- lesson's own transactions are untouched by that.
CREATE UNLOGGED TABLE lab.sandbox_notes (
    schema_name  text PRIMARY KEY REFERENCES lab.sandboxes (schema_name) ON DELETE CASCADE,
    -- The report of the last action, so a reload (or a form post without JavaScript) shows it.
    last_report  jsonb,
    -- The last attempt's transaction id and what reconciliation needs to judge it.
    pending      jsonb,
    -- The learner's last comparison.
    last_compare jsonb,
    -- The tables as the last action left them, and whether they are still so (see
    -- lab.enter_action).
    tables       jsonb,
    current      boolean NOT NULL DEFAULT false
);

INSERT INTO lab.sandbox_notes (schema_name, last_report, pending, last_compare)
SELECT schema_name, last_report, pending, last_compare
  FROM lab.sandboxes
 WHERE last_report IS NOT NULL OR pending IS NOT NULL OR last_compare IS NOT NULL;

ALTER TABLE lab.sandboxes DROP COLUMN last_report, DROP COLUMN pending, DROP COLUMN last_compare;

CREATE OR REPLACE FUNCTION lab.save_report(sandbox text, report jsonb, pending jsonb,
                                           keep_pending boolean, found_kind text, found_id text,
                                           predicted boolean)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    -- The report's tables are what the action read afterwards: current (see lab.enter_action).
    INSERT INTO lab.sandbox_notes AS n (schema_name, last_report, pending, tables, current)
    VALUES (sandbox, save_report.report,
            CASE WHEN keep_pending THEN NULL ELSE save_report.pending END,
            save_report.report -> 'snapshot', true)
    ON CONFLICT (schema_name) DO UPDATE
       SET last_report = excluded.last_report,
           pending = CASE WHEN keep_pending THEN n.pending ELSE excluded.pending END,
           tables = excluded.tables,
           current = true;
    -- The registry's row is written only when there is something to note: a prediction, or
    -- a use note older than a minute (the reaper's and the recycler's measure).
    UPDATE lab.sandboxes s
       SET last_used_at = CASE WHEN s.last_used_at < now() - interval '1 minute'
                               THEN now() ELSE s.last_used_at END,
           predictions_made = s.predictions_made + (save_report.predicted IS NOT NULL)::integer,
           predictions_right = s.predictions_right + coalesce(save_report.predicted, false)::integer
     WHERE s.schema_name = sandbox
       AND (save_report.predicted IS NOT NULL OR s.last_used_at < now() - interval '1 minute');
    IF found_kind IS NOT NULL THEN
        INSERT INTO lab.explored AS e (schema_name, kind, id, predicted)
        VALUES (sandbox, found_kind, found_id, save_report.predicted)
        ON CONFLICT (schema_name, kind, id) DO UPDATE
           SET predicted = coalesce(excluded.predicted, e.predicted)
         WHERE e.predicted IS DISTINCT FROM coalesce(excluded.predicted, e.predicted);
    END IF;
END
$$;

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
            DELETE FROM lab.sandbox_notes n WHERE n.schema_name = victim;
            UPDATE lab.sandboxes s
               SET token_hash = recycle_sandbox.token_hash, claimed_at = now(),
                   last_used_at = now(), budget = DEFAULT, budget_at = now(),
                   predict_first = NULL
             WHERE s.schema_name = victim;
            RETURN victim;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

-- Takes the sandbox's session-level advisory lock (waiting up to lock_timeout); with
-- `read_tables` (an action that may write them), returns its tables as they are under the lock.
--
-- Those the last action kept are returned while they are current; otherwise they are read now.
-- An action marks them not current as it starts, and its kept report (lab.leave_action) marks
-- the tables it read afterwards current again. So an action that failed half-way (its session
-- closed, no report kept) leaves them not current, and so does a crash of PostgreSQL (the
-- table comes back empty), and recycling deletes them. Every writer of a sandbox's tables holds
-- its lock and goes through here: while they are current, nothing has touched them since.
--
-- VOLATILE, so that a read takes its snapshot after the lock is held and sees everything the
-- previous action committed.
CREATE FUNCTION lab.enter_action(sandbox text, read_tables boolean) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    kept jsonb;
BEGIN
    PERFORM pg_advisory_lock(hashtextextended(sandbox, 0));
    IF NOT read_tables THEN
        RETURN NULL;
    END IF;
    PERFORM set_config('synchronous_commit', 'off', true);
    UPDATE lab.sandbox_notes n SET current = false
     WHERE n.schema_name = sandbox AND n.current
    RETURNING n.tables INTO kept;
    RETURN coalesce(kept, lab.snapshot(sandbox));
END
$$;

-- Keeps the action's report (as lab.save_report) with the tables it read afterwards, now
-- current, and releases the lock. The lock goes before this statement's transaction commits,
-- so a reader that needs the kept row under the lock (reconciliation's pending attempt) reads it
-- FOR SHARE and waits for that commit.
CREATE FUNCTION lab.leave_action(sandbox text, report jsonb, pending jsonb, keep_pending boolean,
                                 found_kind text, found_id text, predicted boolean)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM lab.save_report(sandbox, report, pending, keep_pending, found_kind, found_id,
                            predicted);
    PERFORM pg_advisory_unlock(hashtextextended(sandbox, 0));
END
$$;

-- A whole reset (recycling a sandbox for a newcomer) is the partial one with every table.
CREATE OR REPLACE FUNCTION lab.reset_sandbox(sandbox text) RETURNS void
LANGUAGE sql AS $$
    SELECT lab.reset_tables(sandbox, ARRAY(SELECT t::text FROM lab.template_tables() AS t));
$$;
