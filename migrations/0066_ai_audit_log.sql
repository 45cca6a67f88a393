-- One audit row per routed turn (DESIGN §7, §11): which route it took,
-- the target that answered (empty when none did), how it ended, and its
-- failover_trace, one entry per attempt of each of its model calls:
-- {"call": n, "entry": "<provider>/<model>:<outcome>", "status": <http
-- status or 0>, "duration_ms": n}. It never holds message text or a
-- provider's error text, and is never sent to users: admins read it.
-- It outlives the conversation (a deleted session keeps its audit rows,
-- as it keeps its usage records).
CREATE TABLE ai_audit_log (
    turn_id        text PRIMARY KEY,
    user_id        text NOT NULL,
    session_id     text NOT NULL,
    kind           text NOT NULL CHECK (kind IN ('chat', 'completion')),
    route          text NOT NULL,
    provider       text NOT NULL DEFAULT '',
    model          text NOT NULL DEFAULT '',
    -- ok, confirmation, degraded, cancelled, or the §5 code the turn
    -- failed with.
    status         text NOT NULL,
    failover_trace jsonb NOT NULL CHECK (jsonb_typeof(failover_trace) = 'array'),
    duration_ms    bigint NOT NULL CHECK (duration_ms >= 0),
    created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX ai_audit_log_created ON ai_audit_log (created_at DESC);
CREATE INDEX ai_audit_log_user_created ON ai_audit_log (user_id, created_at DESC);
