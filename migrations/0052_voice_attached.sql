-- When the holder's sideband socket attached to the call. A hand-over
-- clears it with the holder, so the releasing replica keeps its own
-- socket until the adopter's is on: no moment without one. Expand only.
ALTER TABLE voice_sessions ADD COLUMN attached_at timestamptz;
