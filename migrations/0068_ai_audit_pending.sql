-- The AI audit log of DESIGN §12 (package audit, docs/audit.md): one row
-- per chat turn, completion request, voice tool call and live delegation,
-- inserted 'pending' when the unit of work starts and moved once to its
-- final status. It holds which filters ran, the rule ids that fired and
-- SHA-256 hashes of the text in and out, never the text.
--
-- Expand step: every column 0066 made keeps its name and meaning, so a
-- replica of the previous release still inserts its rows (at a turn's end,
-- with its old statuses); the trigger below maps those to the new
-- vocabulary. The contract step (a later release) drops the trigger and
-- the function.

ALTER TABLE ai_audit_log
    -- For a voice tool call, the provider's call id and the tool; the row's
    -- turn_id is then "<session_id>/<call_id>".
    ADD COLUMN call_id     text NOT NULL DEFAULT '',
    ADD COLUMN tool        text NOT NULL DEFAULT '',
    -- The filters that ran on the unit's text (audit.Required lists what
    -- each kind needs), the ids of the rules that fired, and the hashes.
    ADD COLUMN filters_ran text[] NOT NULL DEFAULT '{}',
    ADD COLUMN rule_ids    text[] NOT NULL DEFAULT '{}',
    ADD COLUMN input_hash  text NOT NULL DEFAULT '',
    ADD COLUMN output_hash text NOT NULL DEFAULT '',
    -- The DESIGN §5 code (or "cancelled") a unit that did not answer ended
    -- with; '' otherwise. The status says the class, this the detail.
    ADD COLUMN error_code  text NOT NULL DEFAULT '',
    ADD COLUMN finished_at timestamptz;

-- The previous release's statuses in the new vocabulary: 'ok' and
-- 'confirmation' were answers, but no output filter existed to run, so
-- they are 'degraded', never 'success' (a row never says success if a
-- filter did not run); a §5 code maps to its class and stays in
-- error_code.
CREATE FUNCTION ai_audit_legacy_status(old text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN old IN ('ok', 'confirmation', 'degraded') THEN 'degraded'
        WHEN old IN ('INVALID_REQUEST', 'VALIDATION_ERROR', 'TOOL_VALIDATION_ERROR', 'AI_VALIDATION_ERROR') THEN 'validation_error'
        WHEN old = 'AI_PARSE_ERROR' THEN 'parse_error'
        WHEN old = 'AI_PII_LEAK' THEN 'pii_leak'
        ELSE 'refused'
    END
$$;

UPDATE ai_audit_log SET
    error_code = CASE WHEN status IN ('ok', 'confirmation', 'degraded') THEN '' ELSE status END,
    status = ai_audit_legacy_status(status),
    finished_at = created_at + duration_ms * interval '1 millisecond';

-- An insert from a replica of the previous release carries an old status
-- (mapped as the rows above were) and no finished_at (its rows are
-- written at the turn's end).
CREATE FUNCTION ai_audit_legacy_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.status NOT IN ('pending', 'success', 'degraded', 'refused', 'parse_error',
                          'validation_error', 'pii_leak', 'medical_claim_blocked') THEN
        IF NEW.status NOT IN ('ok', 'confirmation', 'degraded') THEN
            NEW.error_code := NEW.status;
        END IF;
        NEW.status := ai_audit_legacy_status(NEW.status);
    END IF;
    IF NEW.status <> 'pending' AND NEW.finished_at IS NULL THEN
        NEW.finished_at := now();
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER ai_audit_legacy_insert BEFORE INSERT ON ai_audit_log
    FOR EACH ROW EXECUTE FUNCTION ai_audit_legacy_insert();

ALTER TABLE ai_audit_log DROP CONSTRAINT ai_audit_log_kind_check;

ALTER TABLE ai_audit_log
    ADD CONSTRAINT ai_audit_log_kind_check
        CHECK (kind IN ('chat', 'completion', 'voice_tool', 'live_delegation')),
    ADD CONSTRAINT ai_audit_log_status_check
        CHECK (status IN ('pending', 'success', 'degraded', 'refused', 'parse_error',
                          'validation_error', 'pii_leak', 'medical_claim_blocked')),
    -- A final row says when it ended; a pending one has not.
    ADD CONSTRAINT ai_audit_log_finished_check
        CHECK ((status = 'pending') = (finished_at IS NULL)),
    -- Never 'success' unless every filter its kind requires ran. The same
    -- lists are audit.Required in Go; a test keeps the two in step.
    ADD CONSTRAINT ai_audit_log_success_filters_check
        CHECK (status <> 'success' OR filters_ran @> CASE kind
            WHEN 'voice_tool' THEN ARRAY['arguments', 'ranges']
            ELSE ARRAY['input', 'medical', 'prescriptive', 'pii'] END),
    ADD CONSTRAINT ai_audit_log_hash_check
        CHECK (input_hash ~ '^([0-9a-f]{64})?$' AND output_hash ~ '^([0-9a-f]{64})?$');

-- Pending rows older than the turn deadline are abandoned work (a crashed
-- replica); operators find them by this index.
CREATE INDEX ai_audit_log_pending ON ai_audit_log (created_at) WHERE status = 'pending';
CREATE INDEX ai_audit_log_status_created ON ai_audit_log (status, created_at DESC);
