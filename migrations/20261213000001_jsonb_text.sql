-- What PostgreSQL makes of a payload: the text it stores and prints for `payload::jsonb`, or
-- NULL when the cast refuses the payload. The reference model takes this answer as input
-- instead of imitating the cast; the runner asks in the statement that takes the sandbox's lock
-- (lab.enter_action's), so asking costs no round trip.
--
-- The EXCEPTION block runs the cast in a subtransaction of its own: a refusal rolls back only
-- that, and the surrounding statement goes on. Only data exceptions (class 22) are caught —
-- what the lesson's `$3::jsonb` raises for a bad payload, and what the runner counts as
-- invalid_payload; a cancel, a timeout or a too-deep nesting still ends the statement, as it
-- would end the lesson's INSERT.
--
-- No cap on the text's length here: the function must say exactly what the cast says. Input
-- validation refuses, before anything runs, a payload whose text could grow large.
--
-- STRICT: no payload asked (NULL) costs no subtransaction.
CREATE FUNCTION lab.jsonb_text(payload text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
    RETURN payload::jsonb::text;
EXCEPTION WHEN data_exception THEN
    RETURN NULL;
END
$$;
