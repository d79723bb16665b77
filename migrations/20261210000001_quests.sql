-- Quests (issue: goals judged by PostgreSQL) and what the class got wrong.
--
-- A sandbox's standing on each quest it has touched. Like lab.explored it is the learner's
-- map: reset keeps it, "start over" and recycling clear it, reaping drops it.
CREATE TABLE lab.quest_progress (
    schema_name   text    NOT NULL REFERENCES lab.sandboxes ON DELETE CASCADE,
    quest         text    NOT NULL CHECK (quest ~ '^[a-z0-9_]{1,40}$'),
    -- Stages met so far, in order; `reached` once it equals the quest's stage count.
    stage         integer NOT NULL DEFAULT 0,
    reached       boolean NOT NULL DEFAULT false,
    -- Attempts along the quest's dead end while it was not reached.
    tries         integer NOT NULL DEFAULT 0,
    hints_used    integer NOT NULL DEFAULT 0,
    -- NULL until answered; true once a right answer was given, false while only wrong ones.
    explained     boolean,
    -- The distinct wrong choices this learner gave, in order (for the author's page).
    wrong_answers text[]  NOT NULL DEFAULT '{}',
    -- The learner's latest answer, so the page (with or without JavaScript) can say why.
    last_answer   text,
    PRIMARY KEY (schema_name, quest)
);

-- Wrong predictions by the sentence that names their misunderstanding, per failure-table row
-- or wrong way, counted per sandbox (for the author's page).
CREATE TABLE lab.prediction_misses (
    schema_name text    NOT NULL REFERENCES lab.sandboxes ON DELETE CASCADE,
    kind        text    NOT NULL CHECK (kind IN ('row', 'wrong')),
    id          text    NOT NULL CHECK (id ~ '^[a-z_]{1,40}$'),
    why         text    NOT NULL CHECK (why ~ '^[a-z_]{1,60}$'),
    times       integer NOT NULL DEFAULT 1,
    PRIMARY KEY (schema_name, kind, id, why)
);

-- As before, and the action's quest marks (parallel arrays: quest id, the stages this action
-- met as a bit mask, the quest's stage count, and for an attempt along the quest's dead end the
-- count at which it says so, else 0) and its prediction's misses: one statement still, on the
-- connection that holds the lock. A stage counts only when the one before it was met by an
-- earlier action. A row is written only when its values change (a class repeating a reached
-- quest writes no WAL for it), and tries stop counting at the dead end's count.
DROP FUNCTION lab.leave_action(text, jsonb, jsonb, boolean, text, text, boolean);
CREATE FUNCTION lab.leave_action(sandbox text, report jsonb, pending jsonb, keep_pending boolean,
                                 found_kind text, found_id text, predicted boolean,
                                 quest_ids text[], quest_met integer[], quest_stages integer[],
                                 quest_tries_to integer[], missed text[] DEFAULT '{}')
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    cur_stage   integer;
    cur_reached boolean;
    cur_tries   integer;
    met         boolean;
    new_stage   integer;
    new_reached boolean;
    new_tries   integer;
BEGIN
    PERFORM lab.save_report(sandbox, report, pending, keep_pending, found_kind, found_id,
                            predicted);
    FOR i IN 1..coalesce(array_length(quest_ids, 1), 0) LOOP
        SELECT q.stage, q.reached, q.tries INTO cur_stage, cur_reached, cur_tries
          FROM lab.quest_progress q
         WHERE q.schema_name = sandbox AND q.quest = quest_ids[i];
        IF NOT FOUND THEN
            cur_stage := 0;
            cur_reached := false;
            cur_tries := 0;
        END IF;
        met := NOT cur_reached AND quest_met[i] & (1 << cur_stage) <> 0;
        new_stage := cur_stage + met::integer;
        new_reached := cur_reached OR (met AND new_stage >= quest_stages[i]);
        new_tries := CASE WHEN quest_tries_to[i] > 0 AND NOT cur_reached
                          THEN least(cur_tries + 1, quest_tries_to[i]) ELSE cur_tries END;
        CONTINUE WHEN (new_stage, new_reached, new_tries) = (cur_stage, cur_reached, cur_tries);
        INSERT INTO lab.quest_progress AS q (schema_name, quest, stage, reached, tries)
        VALUES (sandbox, quest_ids[i], new_stage, new_reached, new_tries)
        ON CONFLICT (schema_name, quest) DO UPDATE
           SET stage = excluded.stage, reached = excluded.reached, tries = excluded.tries;
    END LOOP;
    IF found_kind IS NOT NULL AND cardinality(missed) > 0 THEN
        INSERT INTO lab.prediction_misses AS m (schema_name, kind, id, why)
        SELECT DISTINCT sandbox, found_kind, found_id, w FROM unnest(missed) AS w
        ON CONFLICT (schema_name, kind, id, why) DO UPDATE SET times = m.times + 1;
    END IF;
    PERFORM pg_advisory_unlock(hashtextextended(sandbox, 0));
END
$$;

-- The next hint: counts one more, up to `available`; answers the count after it.
CREATE FUNCTION lab.quest_hint(sandbox text, quest_id text, available integer) RETURNS integer
LANGUAGE sql AS $$
    INSERT INTO lab.quest_progress AS q (schema_name, quest, hints_used)
    VALUES (sandbox, quest_id, least(1, available))
    ON CONFLICT (schema_name, quest) DO UPDATE
       SET hints_used = least(q.hints_used + 1, available)
    RETURNING hints_used;
$$;

-- Records an answer to a reached quest's question. Answers NULL when the quest is not reached
-- (the caller refuses it), else whether the quest now counts as explained.
CREATE FUNCTION lab.quest_answer(sandbox text, quest_id text, answer text, is_right boolean)
RETURNS boolean
LANGUAGE sql AS $$
    UPDATE lab.quest_progress q
       SET explained = coalesce(q.explained, false) OR is_right,
           last_answer = answer,
           wrong_answers = CASE WHEN is_right OR answer = ANY (q.wrong_answers)
                                THEN q.wrong_answers
                                ELSE q.wrong_answers || answer END
     WHERE q.schema_name = sandbox AND q.quest = quest_id AND q.reached
    RETURNING explained;
$$;

-- "Start over" and recycling forget the quests and the misses too.
CREATE OR REPLACE FUNCTION lab.forget_progress(sandbox text) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM lab.explored WHERE schema_name = sandbox;
    DELETE FROM lab.quest_progress WHERE schema_name = sandbox;
    DELETE FROM lab.prediction_misses WHERE schema_name = sandbox;
    UPDATE lab.sandboxes SET predictions_made = 0, predictions_right = 0
     WHERE schema_name = sandbox;
$$;
