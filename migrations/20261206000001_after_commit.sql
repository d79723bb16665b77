-- After COMMIT, previewed (lessons 8.3 and 8.4): the History consumer gets a committed offset
-- and an inbox, and History keeps every application in order, so an event applied twice
-- shows twice. Until now History was keyed by event_id, an inbox built into the table.
ALTER TABLE lab_template.history DROP CONSTRAINT history_pkey;
ALTER TABLE lab_template.history ADD COLUMN line bigint NOT NULL;
ALTER TABLE lab_template.history ADD PRIMARY KEY (line);

-- The consumer's inbox: the ids of the events it applied, written in the same transaction
-- as the projection's change; the primary key refuses a duplicate.
CREATE TABLE lab_template.inbox (
    event_id text PRIMARY KEY
);

-- The broker's record of the consumer group's committed offset (the next record to read).
CREATE TABLE lab_template.consumer_offsets (
    consumer    text   PRIMARY KEY,
    next_offset bigint NOT NULL
);

-- Sandboxes stamped before this migration: History gets its line numbers, and what the old
-- consumer had applied counts as applied through the inbox and read to the end of the topic.
DO $$
DECLARE
    sandbox text;
    pkey    name;
BEGIN
    FOR sandbox IN SELECT schema_name FROM lab.sandboxes LOOP
        SELECT conname INTO pkey FROM pg_catalog.pg_constraint
         WHERE conrelid = format('%I.history', sandbox)::regclass AND contype = 'p';
        IF pkey IS NOT NULL THEN
            EXECUTE format('ALTER TABLE %I.history DROP CONSTRAINT %I', sandbox, pkey);
        END IF;
        EXECUTE format('ALTER TABLE %I.history ADD COLUMN line bigint', sandbox);
        EXECUTE format($q$
            UPDATE %1$I.history h SET line = n.rn
              FROM (SELECT event_id, row_number() OVER (ORDER BY event_id COLLATE "C") - 1 AS rn
                      FROM %1$I.history) n
             WHERE n.event_id = h.event_id$q$, sandbox);
        EXECUTE format('ALTER TABLE %I.history ALTER COLUMN line SET NOT NULL, ADD PRIMARY KEY (line)',
                       sandbox);
        EXECUTE format('CREATE TABLE %I.inbox (LIKE lab_template.inbox INCLUDING ALL)', sandbox);
        EXECUTE format('CREATE TABLE %I.consumer_offsets (LIKE lab_template.consumer_offsets INCLUDING ALL)',
                       sandbox);
        EXECUTE format('INSERT INTO %1$I.inbox (event_id) SELECT event_id FROM %1$I.history', sandbox);
        EXECUTE format($q$
            INSERT INTO %1$I.consumer_offsets (consumer, next_offset)
            SELECT 'history', max(log_offset) + 1 FROM %1$I.kafka_log HAVING count(*) > 0$q$, sandbox);
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION lab.snapshot(sandbox text) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    result jsonb;
BEGIN
    PERFORM lab.check_sandbox_name(sandbox);
    EXECUTE format($q$
        SELECT jsonb_build_object(
            'tickets', coalesce((
                SELECT jsonb_agg(jsonb_build_object('id', id, 'status', status)
                                 ORDER BY id COLLATE "C")
                FROM %1$I.tickets), '[]'::jsonb),
            'outbox', coalesce((
                SELECT jsonb_agg(jsonb_build_object(
                           'event_id', event_id,
                           'aggregate_id', aggregate_id,
                           'payload', payload::text,
                           'published_at', published_at::text)
                       ORDER BY event_id COLLATE "C")
                FROM %1$I.outbox), '[]'::jsonb),
            'kafka', coalesce((
                SELECT jsonb_agg(jsonb_build_object('offset', log_offset, 'key', key, 'value', value)
                                 ORDER BY log_offset)
                FROM %1$I.kafka_log), '[]'::jsonb),
            'history', coalesce((
                SELECT jsonb_agg(jsonb_build_object(
                           'event_id', event_id, 'ticket_id', ticket_id, 'to_status', to_status)
                       ORDER BY line)
                FROM %1$I.history), '[]'::jsonb),
            'inbox', coalesce((
                SELECT jsonb_agg(event_id ORDER BY event_id COLLATE "C")
                FROM %1$I.inbox), '[]'::jsonb),
            'consumer_offset', coalesce((
                SELECT next_offset FROM %1$I.consumer_offsets WHERE consumer = 'history'), 0))
    $q$, sandbox) INTO result;
    RETURN result;
END
$$;
