-- One row per validated tool call (DESIGN §8). The unique key on
-- (session_id, call_id) is what makes a call run once across replicas: the
-- replica whose INSERT wins runs the tool; every other one waits for the row
-- to finish and replays it.
CREATE TABLE tool_calls (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id   text NOT NULL,
    call_id      text NOT NULL,
    user_id      text NOT NULL,
    session_kind text NOT NULL CHECK (session_kind IN ('voice', 'chat')),
    source       text NOT NULL,
    tool         text NOT NULL,
    arguments    jsonb NOT NULL,
    status       text NOT NULL DEFAULT 'running'
                 CHECK (status IN ('running', 'succeeded', 'failed')),
    -- The whole response as first returned. json, not jsonb, keeps it
    -- byte for byte, so a replay is identical to the first answer.
    response     json,
    error_code   text,
    started_at   timestamptz NOT NULL DEFAULT now(),
    -- A running row past its deadline belongs to a replica that died; the
    -- next duplicate marks it failed: interrupted instead of re-running it.
    deadline     timestamptz NOT NULL,
    finished_at  timestamptz,
    duration_ms  integer,
    CONSTRAINT tool_calls_session_call UNIQUE (session_id, call_id),
    CONSTRAINT tool_calls_finished CHECK ((status = 'running') = (response IS NULL))
);

CREATE INDEX tool_calls_user_started ON tool_calls (user_id, started_at DESC);
