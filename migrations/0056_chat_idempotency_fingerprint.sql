-- Idempotency-Key (DESIGN §7), expand step: a key reused with a different
-- request is 422 IDEMPOTENCY_MISMATCH, and a replay is the original final
-- response byte for byte.
--
-- fingerprint is the SHA-256 of the request's canonical form (sse's
-- Request.fingerprint); a row a replica of the release before wrote has
-- none and is replayed as before. response_bytes is the response exactly
-- as it was sent: the jsonb column reorders keys and spaces them, so it
-- cannot give the bytes back. Replicas of this release still fill response
-- too, for the release before, which reads only that; a contract migration
-- of a later release drops it and its check.
ALTER TABLE chat_idempotency
    ADD COLUMN fingerprint    bytea,
    ADD COLUMN response_bytes bytea;
