-- The safety flags of a voice session (DESIGN §12, docs/safety.md): spoken
-- audio cannot be recalled, so the output transcripts pass the medical-claim
-- and PII detectors after the fact and each hit is kept here, shown with
-- the session. Additive: the previous release reads the table unchanged.
ALTER TABLE voice_sessions ADD COLUMN safety_flags jsonb NOT NULL DEFAULT '[]'::jsonb;
