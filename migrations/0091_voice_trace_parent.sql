-- A voice session is one trace (docs/operations.md, "Traces"): its start
-- writes the W3C traceparent of the start's span here, and every replica
-- that later works on the session (the SDP exchange, the holder of its
-- call and an adopter after it, the end) parents its spans on it, so a
-- held call's tool calls, delegations and end stay in the start's trace
-- across an adoption.
--
-- Expand only: an older replica writes nothing here and its sessions keep
-- the default '', which a newer one reads as "no trace to continue".
ALTER TABLE voice_sessions ADD COLUMN trace_parent text NOT NULL DEFAULT '';
