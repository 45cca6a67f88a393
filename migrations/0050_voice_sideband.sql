-- Sideband voice sessions (DESIGN §6). Expand only: direct-mode rows
-- leave every column null, and an older replica ignores them.
ALTER TABLE voice_sessions
    -- The session config the provider was given (instructions with the
    -- user's profile, the plan's tools, voice, transcription): what the
    -- gateway places the call with and re-asserts when the app changes it.
    ADD COLUMN config    jsonb,
    -- The app's SDP offer was taken (one per session).
    ADD COLUMN offer_at  timestamptz,
    -- The provider's call, from the Location of its answer.
    ADD COLUMN call_id   text,
    -- The usage the gateway has observed on the sideband so far, summed
    -- (response.done and input transcription), so any replica ending the
    -- session writes the record with it.
    ADD COLUMN observed  jsonb;
