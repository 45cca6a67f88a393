-- How many offers a sideband session has sent to the provider: each one is
-- a provider call with the server key, so a session gets a small fixed
-- number (controlplane.MaxOfferAttempts). Expand only: an older replica
-- ignores the column.
ALTER TABLE voice_sessions ADD COLUMN offer_attempts integer NOT NULL DEFAULT 0 CHECK (offer_attempts >= 0);
