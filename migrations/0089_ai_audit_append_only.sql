-- The audit log becomes append-only (issue 36, docs/audit.md "Append-only"):
-- a unit's ai_audit_log row is inserted once, final, at its end, so no
-- finish updates the log any more and none pays a new entry in its four
-- indexes and a dead tuple. A unit in flight is a row of ai_audit_pending,
-- inserted at its begin and deleted by the same statement that inserts its
-- final log row. A unit whose replica crashed stays there: that table is
-- what "pending" means now.
--
-- Expand for the pending table: a replica of the previous release (0088's
-- code) still inserts 'pending' rows into ai_audit_log and moves them at
-- their end; the new code finishes and lists those too. Existing pending
-- rows are not moved. Columns and meanings are the pending log row's.
CREATE TABLE ai_audit_pending (
    turn_id    text PRIMARY KEY,
    kind       text NOT NULL,
    user_id    text NOT NULL,
    session_id text NOT NULL,
    call_id    text NOT NULL DEFAULT '',
    tool       text NOT NULL DEFAULT '',
    route      text NOT NULL,
    input_hash text NOT NULL DEFAULT '',
    -- The unit's start: its log row's created_at when it ends.
    created_at timestamptz NOT NULL DEFAULT now()
);

-- No index on created_at: the table holds the units in flight and the rare
-- abandoned ones, and every index would cost each completion two more
-- writes (begin and finish). A listing reads it whole (docs/audit.md).
COMMENT ON INDEX ai_audit_pending_pkey IS
    'a unit''s begin, finish and abandonment by turn_id (audit.Log), GET /v1/admin/chat/turns/{id}, and the stale-row sweep (audit.Log.Sweep)';

COMMENT ON INDEX ai_audit_log_status_created IS
    'GET /v1/admin/audit?status=: rows of a final status in [from, to), newest first, and the pending rows replicas of release 0088 wrote (audit.Log.List)';

-- Contract step of 0068: no replica that writes the 0066 statuses runs any
-- more, and every insert paid this plpgsql trigger.
DROP TRIGGER IF EXISTS ai_audit_legacy_insert ON ai_audit_log;
DROP FUNCTION IF EXISTS ai_audit_legacy_insert();
DROP FUNCTION IF EXISTS ai_audit_legacy_status(text);
