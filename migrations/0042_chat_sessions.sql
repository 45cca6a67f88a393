-- Text chat conversations (DESIGN §7). A session belongs to one user; it
-- expires after 8 idle hours (the next turn starts a new one) and keeps at
-- most 100 messages. Each message keeps its structured data (cards,
-- actions, suggestions, tool calls, writes, safety flags) as jsonb so the
-- history can be rehydrated as the app first saw it. Deleting a session
-- deletes its messages; its usage records stay (they hold no text).
CREATE TABLE chat_sessions (
    id             text PRIMARY KEY,
    user_id        text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    last_active_at timestamptz NOT NULL DEFAULT now(),
    message_count  integer NOT NULL DEFAULT 0 CHECK (message_count >= 0)
);

-- Lists are newest first by creation, which never changes, so a keyset
-- cursor stays valid while the user keeps chatting.
CREATE INDEX chat_sessions_user_created ON chat_sessions (user_id, created_at DESC, id DESC);
-- The retention purge finds sessions idle past the retention period.
CREATE INDEX chat_sessions_last_active ON chat_sessions (last_active_at);

CREATE TABLE chat_messages (
    id         text PRIMARY KEY,
    session_id text NOT NULL REFERENCES chat_sessions (id) ON DELETE CASCADE,
    user_id    text NOT NULL,
    turn_id    text NOT NULL,
    -- Order within a session: a turn's user message precedes its answer
    -- even when both are inserted at the same instant.
    seq        bigint GENERATED ALWAYS AS IDENTITY,
    role       text NOT NULL CHECK (role IN ('user', 'assistant')),
    content    text NOT NULL,
    data       jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT chat_messages_one_per_role UNIQUE (session_id, turn_id, role)
);

CREATE INDEX chat_messages_session_seq ON chat_messages (session_id, seq DESC);
