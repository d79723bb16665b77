-- An action's bookkeeping in two statements on the connection that holds the sandbox's lock:
-- one takes the lock and reads the tables, one keeps the report and lets the lock go. Each
-- was three statements, on connections of their own.

-- Takes the sandbox's session-level advisory lock (waiting up to lock_timeout), then reads
-- its tables when `read_tables` is set. VOLATILE, so the read takes a snapshot after the lock
-- is held and sees everything the previous action committed.
CREATE FUNCTION lab.enter_action(sandbox text, read_tables boolean) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_lock(hashtextextended(sandbox, 0));
    IF read_tables THEN
        RETURN lab.snapshot(sandbox);
    END IF;
    RETURN NULL;
END
$$;

-- Keeps the action's report (as lab.save_report) and releases the lock. The lock goes before
-- this statement's transaction commits, so a reader that needs the kept row under the lock
-- (reconciliation's pending attempt) reads it FOR SHARE and waits for that commit.
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
