-- Pending confirmations (DESIGN §7): a standard or elevated tool call the
-- model made, stored with its validated arguments until the user allows or
-- denies it. Bound to the user and the session, good for one use, and
-- expired after 15 minutes; any replica can continue the turn from the row.
CREATE TABLE chat_confirmations (
    -- The call's id, keyed by turn, so it never collides across turns.
    call_id          text PRIMARY KEY,
    user_id          text NOT NULL,
    session_id       text NOT NULL REFERENCES chat_sessions (id) ON DELETE CASCADE,
    turn_id          text NOT NULL,
    tool             text NOT NULL,
    arguments        jsonb NOT NULL,
    -- What the model said before calling, replayed to it with the result.
    assistant_text   text NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL DEFAULT now(),
    expires_at       timestamptz NOT NULL,
    used_at          timestamptz
);

CREATE INDEX chat_confirmations_expires ON chat_confirmations (expires_at);
