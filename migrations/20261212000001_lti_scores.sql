-- LTI 1.3 score passback (Assignment and Grade Services): a queue kept in the links themselves.
--
-- A change to a learner's map (a failure-table row explored, a quest reached) bumps
-- `score_version` of every link whose sandbox it is, in the statement that records the change:
-- no round trip is added to the learner's action, and nothing is sent on its path. A worker in
-- each server process (server/src/lti/passback.rs) posts the link's score to the platform when
-- `score_version` is ahead of `sent_version`, and marks it sent only once the platform said so;
-- until then the link stays due, with backoff, across restarts of either side.
ALTER TABLE lab.lti_links
    -- The registration the launch came through (an issuer may register the tool twice).
    ADD COLUMN client_id       text,
    ADD COLUMN score_version   integer     NOT NULL DEFAULT 0,
    -- When the map last changed: the score's `timestamp` (platforms keep the latest one).
    ADD COLUMN changed_at      timestamptz,
    ADD COLUMN sent_version    integer     NOT NULL DEFAULT 0,
    -- The score the platform last acknowledged; a later score never goes below it, so starting
    -- over (which clears the map) does not take a grade back.
    ADD COLUMN sent_score      integer,
    ADD COLUMN attempts        integer     NOT NULL DEFAULT 0,
    ADD COLUMN next_attempt_at timestamptz NOT NULL DEFAULT now(),
    -- A worker posting this link's score holds it until then (several server processes).
    ADD COLUMN lease_until     timestamptz,
    ADD COLUMN last_error      text;

CREATE INDEX lti_links_token ON lab.lti_links (token_hash);
CREATE INDEX lti_links_due ON lab.lti_links (next_attempt_at) WHERE score_version > sent_version;

-- Marks the links of one sandbox due; a sandbox without a graded link costs two index probes.
CREATE FUNCTION lab.lti_score_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE lab.lti_links l
       SET score_version = l.score_version + 1, changed_at = now()
      FROM lab.sandboxes s
     WHERE s.schema_name = NEW.schema_name
       AND l.token_hash = s.token_hash
       AND l.ags_lineitem IS NOT NULL;
    RETURN NULL;
END
$$;

-- A row explored for the first time (a repeat goes through ON CONFLICT and inserts nothing).
CREATE TRIGGER lti_row_explored AFTER INSERT ON lab.explored
    FOR EACH ROW WHEN (NEW.kind = 'row') EXECUTE FUNCTION lab.lti_score_changed();
CREATE TRIGGER lti_quest_reached AFTER INSERT ON lab.quest_progress
    FOR EACH ROW WHEN (NEW.reached) EXECUTE FUNCTION lab.lti_score_changed();
CREATE TRIGGER lti_quest_reached_later AFTER UPDATE OF reached ON lab.quest_progress
    FOR EACH ROW WHEN (NEW.reached AND NOT OLD.reached) EXECUTE FUNCTION lab.lti_score_changed();
