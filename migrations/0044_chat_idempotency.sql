-- Idempotency-Key on POST /v1/chat (DESIGN §7): the same key from the same
-- user within 24 hours gets the stored final response; while the first
-- request runs, a retry is 409. A running row whose replica died is taken
-- over once its lease (running_until) has passed.
CREATE TABLE chat_idempotency (
    user_id       text NOT NULL,
    key           text NOT NULL,
    state         text NOT NULL CHECK (state IN ('running', 'done')),
    running_until timestamptz NOT NULL,
    response      jsonb,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, key),
    CONSTRAINT chat_idempotency_done CHECK ((state = 'done') = (response IS NOT NULL))
);

CREATE INDEX chat_idempotency_created ON chat_idempotency (created_at);
