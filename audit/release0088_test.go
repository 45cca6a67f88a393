package audit

// The statements of release 0088 (migration 0088's code), as it wrote
// them: a replica of that release runs beside this one during a rolling
// update (docs/audit.md, "Rollout"), and the benchmark measures them as
// the baseline. It inserted a unit's pending row into the log and moved it
// at its end.
const (
	beginSQL0088 = `INSERT INTO ai_audit_log
	(turn_id, kind, user_id, session_id, call_id, tool, route, status, input_hash, failover_trace, duration_ms)
VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, '[]', 0)
ON CONFLICT (turn_id) DO NOTHING`

	finishSQL0088 = `INSERT INTO ai_audit_log AS a
	(turn_id, kind, user_id, session_id, call_id, tool, route, provider, model, status, error_code,
	 failover_trace, filters_ran, rule_ids, input_hash, output_hash, duration_ms, finished_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, now())
ON CONFLICT (turn_id) DO UPDATE SET
	route = EXCLUDED.route, provider = EXCLUDED.provider, model = EXCLUDED.model,
	status = EXCLUDED.status, error_code = EXCLUDED.error_code, failover_trace = EXCLUDED.failover_trace,
	filters_ran = EXCLUDED.filters_ran, rule_ids = EXCLUDED.rule_ids,
	input_hash = CASE WHEN EXCLUDED.input_hash = '' THEN a.input_hash ELSE EXCLUDED.input_hash END,
	output_hash = EXCLUDED.output_hash, duration_ms = EXCLUDED.duration_ms, finished_at = now()
WHERE a.status = 'pending' AND a.user_id = EXCLUDED.user_id AND a.kind = EXCLUDED.kind
RETURNING 1`

	// legacyTrigger0088 is migration 0068's trigger as 0077 left it, which
	// every insert of release 0088 paid; only its mapping of the 0066
	// statuses, which none of those inserts reached, is shortened.
	legacyTrigger0088 = `CREATE FUNCTION ai_audit_legacy_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.status NOT IN ('pending', 'success', 'degraded', 'refused', 'parse_error',
                          'validation_error', 'pii_leak', 'medical_claim_blocked', 'flagged') THEN
        NEW.error_code := NEW.status;
        NEW.status := 'refused';
    END IF;
    IF NEW.status <> 'pending' AND NEW.finished_at IS NULL THEN
        NEW.finished_at := now();
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER ai_audit_legacy_insert BEFORE INSERT ON ai_audit_log
    FOR EACH ROW EXECUTE FUNCTION ai_audit_legacy_insert();`
)
