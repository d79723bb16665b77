-- The learner's map counts each scenario's cases: beside the failure table's rows and the
-- wrong ways, the publisher's failure table and the consumer's ways to end (issue: one
-- catalogue of scenarios).
ALTER TABLE lab.explored DROP CONSTRAINT explored_kind_check;
ALTER TABLE lab.explored ADD CONSTRAINT explored_kind_check
    CHECK (kind IN ('row', 'wrong', 'publisher', 'consumer'));
-- A wrong prediction of the publisher or the consumer is one of the class's misses too.
ALTER TABLE lab.prediction_misses DROP CONSTRAINT prediction_misses_kind_check;
ALTER TABLE lab.prediction_misses ADD CONSTRAINT prediction_misses_kind_check
    CHECK (kind IN ('row', 'wrong', 'publisher', 'consumer'));
