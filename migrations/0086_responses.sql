-- POST /v1/responses (issue #41, docs/chat.md "The Responses endpoint"):
-- each answer is a record of kind response. The check is replaced, not
-- rewritten in place: NOT VALID then VALIDATE, so the table is not locked
-- against writes while existing rows are read.
ALTER TABLE usage_records DROP CONSTRAINT usage_records_kind_check;
ALTER TABLE usage_records ADD CONSTRAINT usage_records_kind_check
    CHECK (kind IN ('voice', 'chat', 'completion', 'attempt', 'judge', 'response')) NOT VALID;
ALTER TABLE usage_records VALIDATE CONSTRAINT usage_records_kind_check;

-- A response kept with store: true, for its owner alone: GET and DELETE
-- /v1/responses/{id}, and previous_response_id continues from it. input
-- is the whole conversation the model was sent (the items carried from
-- the response it continued, then its own), so a continuation reads one
-- row however long the chain. Purged after chat.retention_days, as chat
-- sessions are.
CREATE TABLE stored_responses (
    id                   text PRIMARY KEY,
    user_id              text NOT NULL,
    created_at           timestamptz NOT NULL DEFAULT now(),
    response             jsonb NOT NULL,
    input                jsonb NOT NULL,
    previous_response_id text
);
CREATE INDEX stored_responses_user ON stored_responses (user_id, created_at);
CREATE INDEX stored_responses_created ON stored_responses (created_at);
