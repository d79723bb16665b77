-- Stand-ins for Kafka (topic tickets.status.v1) and the History projection, per sandbox.
-- They live in PostgreSQL only so the playground can show them; the runner writes them
-- through connections and commits of their own, never inside the ticket transaction, so
-- the broker's commit point stays independent of the ticket database's, as in real life.
CREATE TABLE lab_template.kafka_log (
    log_offset bigint PRIMARY KEY,
    key        text   NOT NULL,
    value      text   NOT NULL
);

CREATE TABLE lab_template.history (
    event_id  text PRIMARY KEY,
    ticket_id text NOT NULL,
    to_status text NOT NULL
);

-- Sandboxes stamped before this migration get the tables too.
DO $$
DECLARE
    sandbox text;
BEGIN
    FOR sandbox IN SELECT schema_name FROM lab.sandboxes LOOP
        EXECUTE format('CREATE TABLE IF NOT EXISTS %I.kafka_log (LIKE lab_template.kafka_log INCLUDING ALL)', sandbox);
        EXECUTE format('CREATE TABLE IF NOT EXISTS %I.history (LIKE lab_template.history INCLUDING ALL)', sandbox);
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
                       ORDER BY event_id COLLATE "C")
                FROM %1$I.history), '[]'::jsonb))
    $q$, sandbox) INTO result;
    RETURN result;
END
$$;
