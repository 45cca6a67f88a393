-- Spoken voice answers in the AI audit log (DESIGN §12). Audio cannot be
-- recalled, so a voice answer's output transcript passes the medical-claim
-- and PII detectors after the fact; a hit gets a row of kind
-- 'voice_answer' with the new final status 'flagged' (nothing was
-- blocked), its rule ids and the transcript's hash, never its text.
ALTER TABLE ai_audit_log
    DROP CONSTRAINT ai_audit_log_kind_check,
    DROP CONSTRAINT ai_audit_log_status_check,
    DROP CONSTRAINT ai_audit_log_success_filters_check;

ALTER TABLE ai_audit_log
    ADD CONSTRAINT ai_audit_log_kind_check
        CHECK (kind IN ('chat', 'completion', 'voice_tool', 'live_delegation', 'voice_answer')),
    ADD CONSTRAINT ai_audit_log_status_check
        CHECK (status IN ('pending', 'success', 'degraded', 'refused', 'parse_error',
                          'validation_error', 'pii_leak', 'medical_claim_blocked', 'flagged')),
    -- The same lists as audit.Required; a test keeps the two in step.
    ADD CONSTRAINT ai_audit_log_success_filters_check
        CHECK (status <> 'success' OR filters_ran @> CASE kind
            WHEN 'voice_tool' THEN ARRAY['arguments', 'ranges']
            WHEN 'voice_answer' THEN ARRAY['medical', 'pii']
            ELSE ARRAY['input', 'medical', 'prescriptive', 'pii'] END);

-- A status of this release is not a previous release's: leave it as it is.
CREATE OR REPLACE FUNCTION ai_audit_legacy_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.status NOT IN ('pending', 'success', 'degraded', 'refused', 'parse_error',
                          'validation_error', 'pii_leak', 'medical_claim_blocked', 'flagged') THEN
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
