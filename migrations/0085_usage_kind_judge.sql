-- The safety filter's optional judge (issue #37, docs/safety.md "A second
-- opinion") is a model call of its own: each answered question is a
-- record of kind judge, under its unit's turn id ("<turn>/judge/<n>"),
-- priced as billed and, like a failed attempt, the operator's cost, not
-- the user's quota. The check is replaced, not rewritten in place: NOT
-- VALID then VALIDATE, so the table is not locked against writes while
-- existing rows are read.
ALTER TABLE usage_records DROP CONSTRAINT usage_records_kind_check;
ALTER TABLE usage_records ADD CONSTRAINT usage_records_kind_check
    CHECK (kind IN ('voice', 'chat', 'completion', 'attempt', 'judge')) NOT VALID;
ALTER TABLE usage_records VALIDATE CONSTRAINT usage_records_kind_check;
