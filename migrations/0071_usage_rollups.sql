-- Finance at scale and in any time zone (issue 27, docs/billing.md).
--
-- 1. A record's voice mode (direct, sideband, relay), so finance can filter
--    on it. Filled from voice_sessions by a trigger, so the writers of
--    records (controlplane, sse) do not change; '' for other kinds.
ALTER TABLE usage_records ADD COLUMN mode text NOT NULL DEFAULT '';

CREATE FUNCTION usage_records_fill_mode() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.kind = 'voice' AND NEW.mode = '' THEN
        SELECT vs.mode INTO NEW.mode FROM voice_sessions vs WHERE vs.id = NEW.session_id;
        NEW.mode := coalesce(NEW.mode, '');
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER usage_records_fill_mode BEFORE INSERT ON usage_records
    FOR EACH ROW EXECUTE FUNCTION usage_records_fill_mode();

UPDATE usage_records r SET mode = vs.mode FROM voice_sessions vs
    WHERE r.kind = 'voice' AND vs.id = r.session_id;

-- 2. Rollups: one row per 15-minute UTC bucket and (kind, mode, model),
--    and another per user too, the exact sums a summary needs. 15 minutes, not an hour,
--    because every offset IANA zones use today is a multiple of 15 minutes
--    (+05:30 Kolkata, +05:45 Kathmandu, +12:45 Chatham): any such zone's
--    midnight is a bucket edge, so its days are whole buckets. A day edge
--    that is not (a historical offset) makes the summary read the records
--    instead (billing/rollup.go).
--
--    The rollup is kept by a trigger in the record's own transaction: a
--    record and its share of the rollup commit together, on any replica.
--    A replayed record (the spool, a retried end) is refused by the
--    record's unique key (ON CONFLICT DO NOTHING), which fires no row
--    trigger, so it never counts twice. An update (late usage attached to
--    a record) moves the old figures out and the new in.
--    Sums are numeric: they cannot wrap.
CREATE TABLE usage_rollups (
    bucket      timestamptz NOT NULL,
    kind        text NOT NULL,
    mode        text NOT NULL,
    model       text NOT NULL,
    records     bigint NOT NULL,
    unpriced    bigint NOT NULL,
    cost_micros numeric NOT NULL,
    duration_ms numeric NOT NULL,
    tokens_in   numeric NOT NULL,
    tokens_out  numeric NOT NULL,
    PRIMARY KEY (bucket, kind, mode, model)
);

-- The same per user, for summaries grouped or filtered by user. Kept apart
-- because with many users it has nearly a row per record, and the
-- summaries that do not name users must not read it.
CREATE TABLE usage_user_rollups (
    bucket      timestamptz NOT NULL,
    user_id     text NOT NULL,
    kind        text NOT NULL,
    mode        text NOT NULL,
    model       text NOT NULL,
    records     bigint NOT NULL,
    unpriced    bigint NOT NULL,
    cost_micros numeric NOT NULL,
    duration_ms numeric NOT NULL,
    tokens_in   numeric NOT NULL,
    tokens_out  numeric NOT NULL,
    PRIMARY KEY (user_id, bucket, kind, mode, model)
);
CREATE INDEX usage_user_rollups_bucket ON usage_user_rollups (bucket);

CREATE FUNCTION usage_rollup_add(r usage_records, sign int) RETURNS void LANGUAGE sql AS $$
    INSERT INTO usage_rollups AS u (bucket, kind, mode, model, records, unpriced,
                                    cost_micros, duration_ms, tokens_in, tokens_out)
    VALUES (date_bin('15 minutes', r.created_at, timestamptz '2000-01-01 00:00:00+00'),
            r.kind, r.mode, r.model, sign, sign * (r.cost_micros IS NULL)::int,
            sign * coalesce(r.cost_micros, 0)::numeric, sign * r.duration_ms::numeric,
            sign * (r.text_in::numeric + r.audio_in + r.image_in + r.transcription_text_in + r.transcription_audio_in),
            sign * (r.text_out::numeric + r.audio_out + r.transcription_text_out))
    ON CONFLICT (bucket, kind, mode, model) DO UPDATE SET
        records = u.records + EXCLUDED.records,
        unpriced = u.unpriced + EXCLUDED.unpriced,
        cost_micros = u.cost_micros + EXCLUDED.cost_micros,
        duration_ms = u.duration_ms + EXCLUDED.duration_ms,
        tokens_in = u.tokens_in + EXCLUDED.tokens_in,
        tokens_out = u.tokens_out + EXCLUDED.tokens_out;
    INSERT INTO usage_user_rollups AS u (bucket, user_id, kind, mode, model, records, unpriced,
                                    cost_micros, duration_ms, tokens_in, tokens_out)
    VALUES (date_bin('15 minutes', r.created_at, timestamptz '2000-01-01 00:00:00+00'),
            r.user_id, r.kind, r.mode, r.model, sign, sign * (r.cost_micros IS NULL)::int,
            sign * coalesce(r.cost_micros, 0)::numeric, sign * r.duration_ms::numeric,
            sign * (r.text_in::numeric + r.audio_in + r.image_in + r.transcription_text_in + r.transcription_audio_in),
            sign * (r.text_out::numeric + r.audio_out + r.transcription_text_out))
    ON CONFLICT (user_id, bucket, kind, mode, model) DO UPDATE SET
        records = u.records + EXCLUDED.records,
        unpriced = u.unpriced + EXCLUDED.unpriced,
        cost_micros = u.cost_micros + EXCLUDED.cost_micros,
        duration_ms = u.duration_ms + EXCLUDED.duration_ms,
        tokens_in = u.tokens_in + EXCLUDED.tokens_in,
        tokens_out = u.tokens_out + EXCLUDED.tokens_out
$$;

CREATE FUNCTION usage_rollups_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM usage_rollup_add(OLD, -1);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM usage_rollup_add(NEW, 1);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER usage_rollups_keep AFTER INSERT OR UPDATE OR DELETE ON usage_records
    FOR EACH ROW EXECUTE FUNCTION usage_rollups_keep();

-- Builds both rollups from the records (this migration's backfill, and a
-- bulk load that ran with the trigger disabled).
CREATE FUNCTION usage_rollups_rebuild() RETURNS void LANGUAGE sql AS $$
    DELETE FROM usage_rollups;
    DELETE FROM usage_user_rollups;
    INSERT INTO usage_user_rollups (bucket, user_id, kind, mode, model, records, unpriced,
                                    cost_micros, duration_ms, tokens_in, tokens_out)
    SELECT date_bin('15 minutes', created_at, timestamptz '2000-01-01 00:00:00+00'), user_id, kind, mode, model,
           count(*), count(*) FILTER (WHERE cost_micros IS NULL), coalesce(sum(cost_micros), 0), sum(duration_ms),
           sum(text_in::numeric + audio_in + image_in + transcription_text_in + transcription_audio_in),
           sum(text_out::numeric + audio_out + transcription_text_out)
    FROM usage_records GROUP BY 1, 2, 3, 4, 5;
    INSERT INTO usage_rollups (bucket, kind, mode, model, records, unpriced,
                               cost_micros, duration_ms, tokens_in, tokens_out)
    SELECT bucket, kind, mode, model, sum(records), sum(unpriced), sum(cost_micros), sum(duration_ms),
           sum(tokens_in), sum(tokens_out)
    FROM usage_user_rollups GROUP BY 1, 2, 3, 4;
$$;

SELECT usage_rollups_rebuild();

-- Listing and filtering by model within a range.
CREATE INDEX usage_records_model_created ON usage_records (model, created_at DESC, id DESC);
