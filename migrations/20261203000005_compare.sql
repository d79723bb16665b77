-- Comparisons run in two sandboxes that belong to a learner's sandbox (the outbox way and a
-- wrong way, side by side). They are ordinary claimed sandboxes, reaped when idle like any
-- other; a learner whose pair was reaped gets a new one.
ALTER TABLE lab.sandboxes
    ADD COLUMN compare_pair text[],
    ADD COLUMN last_compare jsonb;
