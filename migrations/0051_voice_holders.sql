-- One holder per sideband call (DESIGN §13). Each replica renews one
-- lease row for all the calls it holds; a call whose holder's lease has
-- lapsed (or that was handed over: holder NULL) is adopted by another
-- replica. Expand only: older replicas ignore both.
CREATE TABLE voice_replicas (
    id          text PRIMARY KEY,
    lease_until timestamptz NOT NULL
);

ALTER TABLE voice_sessions ADD COLUMN holder text;

-- The calls open now, for the adoption scan and the holders' checks.
CREATE INDEX voice_sessions_calls ON voice_sessions (holder) WHERE ended_at IS NULL AND call_id IS NOT NULL;
