-- GPT-Live sessions (mode live): the mode, and each delegation's claim.
-- A delegation id is claimed once per session across replicas, as tool
-- call ids are, so a duplicated event or an adopter's re-read runs it once.
ALTER TABLE voice_sessions DROP CONSTRAINT voice_sessions_mode_check;
ALTER TABLE voice_sessions ADD CONSTRAINT voice_sessions_mode_check CHECK (mode IN ('direct', 'sideband', 'relay', 'live'));

CREATE TABLE voice_live_delegations (
    session_id    text NOT NULL REFERENCES voice_sessions (id) ON DELETE CASCADE,
    delegation_id text NOT NULL,
    claimed_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_id, delegation_id)
);

-- A live session the provider closed for its content ends with reason
-- safety.
ALTER TABLE voice_sessions DROP CONSTRAINT voice_sessions_end_reason_check;
ALTER TABLE voice_sessions ADD CONSTRAINT voice_sessions_end_reason_check CHECK (end_reason IN ('user_hangup', 'app_closed',
    'error', 'timeout', 'replaced', 'expired', 'quota', 'idle', 'upstream_expired', 'safety'));
