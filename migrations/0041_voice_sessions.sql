-- Voice sessions (DESIGN §6). A row is inserted once the provider has
-- minted the session's credentials, and ended exactly once: by the app's
-- end, a replace, or the sweeper at expires_at. The session's cost record
-- (usage_records) is written in the transaction that ends it.
CREATE TABLE voice_sessions (
    id                  text PRIMARY KEY,
    user_id             text NOT NULL,
    mode                text NOT NULL CHECK (mode IN ('direct', 'sideband', 'relay')),
    plan                text NOT NULL,
    provider            text NOT NULL,
    model               text NOT NULL,
    voice               text NOT NULL,
    language            text NOT NULL DEFAULT '',
    transcription_model text NOT NULL DEFAULT '',
    chat_session_id     text,
    max_duration_s      bigint NOT NULL CHECK (max_duration_s > 0),
    started_at          timestamptz NOT NULL DEFAULT now(),
    -- started_at + max_duration_s: the reservation's end, where the sweeper
    -- closes a session nobody ended.
    expires_at          timestamptz NOT NULL,
    ended_at            timestamptz,
    end_reason          text CHECK (end_reason IN ('user_hangup', 'app_closed', 'error', 'timeout',
                                                   'replaced', 'expired', 'quota', 'idle', 'upstream_expired')),
    duration_ms         bigint,
    charged_s           bigint,
    -- The tool-call window: at most N calls in the minute that starts at
    -- tool_minute, counted by the database clock so replicas agree.
    tool_minute         timestamptz NOT NULL DEFAULT 'epoch',
    tool_calls          integer NOT NULL DEFAULT 0,
    CONSTRAINT voice_sessions_ended CHECK ((ended_at IS NULL) = (end_reason IS NULL))
);

CREATE INDEX voice_sessions_user_started ON voice_sessions (user_id, started_at DESC, id DESC);
CREATE INDEX voice_sessions_open ON voice_sessions (expires_at) WHERE ended_at IS NULL;
