-- The cost ledger (DESIGN §10): one row per voice session and one per chat
-- turn, written in the same transaction that ends the session or turn.
-- Every token class is kept so finance can re-price a record by hand.
-- cost_micros is NULL when the record could not be priced (a model or a
-- token class missing from the price table): unpriced, listed for finance,
-- never a silent $0.
CREATE TABLE usage_records (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id             text NOT NULL,
    session_id          text NOT NULL,
    -- A chat turn's id; '' for a voice session, which has one record.
    turn_id             text NOT NULL DEFAULT '',
    kind                text NOT NULL CHECK (kind IN ('voice', 'chat')),
    provider            text NOT NULL,
    model               text NOT NULL,
    text_in             bigint NOT NULL DEFAULT 0,
    text_cached_in      bigint NOT NULL DEFAULT 0,
    text_out            bigint NOT NULL DEFAULT 0,
    audio_in            bigint NOT NULL DEFAULT 0,
    audio_cached_in     bigint NOT NULL DEFAULT 0,
    audio_out           bigint NOT NULL DEFAULT 0,
    image_in            bigint NOT NULL DEFAULT 0,
    image_cached_in     bigint NOT NULL DEFAULT 0,
    -- Input transcription of a voice session, billed at its own model's
    -- price on the same record.
    transcription_model    text NOT NULL DEFAULT '',
    transcription_text_in  bigint NOT NULL DEFAULT 0,
    transcription_audio_in bigint NOT NULL DEFAULT 0,
    transcription_text_out bigint NOT NULL DEFAULT 0,
    transcription_audio_ms bigint NOT NULL DEFAULT 0,
    duration_ms         bigint NOT NULL DEFAULT 0,
    overrun_s           bigint NOT NULL DEFAULT 0,
    cost_micros         bigint,
    price_version       text NOT NULL,
    usage_source        text NOT NULL
                        CHECK (usage_source IN ('client_reported', 'server_observed', 'provider_reported', 'none')),
    created_at          timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT usage_records_one_per_turn UNIQUE (kind, session_id, turn_id),
    CONSTRAINT usage_records_counts CHECK (
        text_in >= 0 AND text_cached_in BETWEEN 0 AND text_in AND text_out >= 0 AND
        audio_in >= 0 AND audio_cached_in BETWEEN 0 AND audio_in AND audio_out >= 0 AND
        image_in >= 0 AND image_cached_in BETWEEN 0 AND image_in AND
        transcription_text_in >= 0 AND transcription_audio_in >= 0 AND
        transcription_text_out >= 0 AND transcription_audio_ms >= 0 AND
        duration_ms >= 0 AND overrun_s >= 0 AND (cost_micros IS NULL OR cost_micros >= 0))
);

-- Finance reads by time range (summaries, CSV, pages newest first) and by
-- user within a range.
CREATE INDEX usage_records_created ON usage_records (created_at DESC, id DESC);
CREATE INDEX usage_records_user_created ON usage_records (user_id, created_at DESC, id DESC);
CREATE INDEX usage_records_unpriced ON usage_records (created_at) WHERE cost_micros IS NULL;
