-- A live session's backend tokens get a cost class of their own (docs/billing.md):
-- the chat model its delegations ran on and its text tokens, cached input and
-- cache writes included, beside the session's voice time on its one record.
-- Before this, a live record kept them in the transcription columns, which
-- have no cached classes; such records keep them there (an older replica
-- still writes them so during a rolling upgrade, and both read them right:
-- the columns name their model and are priced with it).
--
--
-- audio_ms is the record's own model's time billed by duration (a live
-- session's voice seconds, priced per minute). It was priced at the write
-- but not kept, so a live record's detail and repricing saw only its
-- backend; such records get it back from duration_ms, which holds the same
-- milliseconds.
--
-- Expand only: an older replica does not write the columns, and their
-- defaults are what it meant. The count check is added without a scan
-- (every existing row holds zeros).
ALTER TABLE usage_records
    ADD COLUMN audio_ms                    bigint NOT NULL DEFAULT 0,
    ADD COLUMN backend_model               text   NOT NULL DEFAULT '',
    ADD COLUMN backend_text_in             bigint NOT NULL DEFAULT 0,
    ADD COLUMN backend_text_cached_in      bigint NOT NULL DEFAULT 0,
    ADD COLUMN backend_text_cache_write_in bigint NOT NULL DEFAULT 0,
    ADD COLUMN backend_text_out            bigint NOT NULL DEFAULT 0;

ALTER TABLE usage_records ADD CONSTRAINT usage_records_backend_counts
    CHECK (audio_ms >= 0 AND backend_text_in >= 0 AND backend_text_cached_in >= 0 AND backend_text_cache_write_in >= 0
           AND backend_text_cached_in + backend_text_cache_write_in <= backend_text_in
           AND backend_text_out >= 0) NOT VALID;

-- A record's tokens in and out, every model on it: the one definition the
-- rollups (below) and the summary's reading of records (billing/rollup.go)
-- share. Counts are bounded by MaxCount, so the bigint sums cannot wrap.
CREATE FUNCTION usage_record_tokens_in(r usage_records) RETURNS numeric LANGUAGE sql IMMUTABLE AS $$
    SELECT (r.text_in + r.audio_in + r.image_in + r.transcription_text_in + r.transcription_audio_in
            + r.backend_text_in)::numeric
$$;

CREATE FUNCTION usage_record_tokens_out(r usage_records) RETURNS numeric LANGUAGE sql IMMUTABLE AS $$
    SELECT (r.text_out + r.audio_out + r.transcription_text_out + r.backend_text_out)::numeric
$$;

CREATE OR REPLACE FUNCTION usage_rollup_add(r usage_records, sign int) RETURNS void LANGUAGE sql AS $$
    INSERT INTO usage_rollups AS u (bucket, kind, mode, model, records, unpriced,
                                    cost_micros, duration_ms, tokens_in, tokens_out)
    VALUES (date_bin('15 minutes', r.created_at, timestamptz '2000-01-01 00:00:00+00'),
            r.kind, r.mode, r.model, sign, sign * (r.cost_micros IS NULL)::int,
            sign * coalesce(r.cost_micros, 0)::numeric, sign * r.duration_ms::numeric,
            sign * usage_record_tokens_in(r), sign * usage_record_tokens_out(r))
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
            sign * usage_record_tokens_in(r), sign * usage_record_tokens_out(r))
    ON CONFLICT (user_id, bucket, kind, mode, model) DO UPDATE SET
        records = u.records + EXCLUDED.records,
        unpriced = u.unpriced + EXCLUDED.unpriced,
        cost_micros = u.cost_micros + EXCLUDED.cost_micros,
        duration_ms = u.duration_ms + EXCLUDED.duration_ms,
        tokens_in = u.tokens_in + EXCLUDED.tokens_in,
        tokens_out = u.tokens_out + EXCLUDED.tokens_out
$$;

CREATE OR REPLACE FUNCTION usage_rollups_rebuild() RETURNS void LANGUAGE sql AS $$
    DELETE FROM usage_rollups;
    DELETE FROM usage_user_rollups;
    INSERT INTO usage_user_rollups (bucket, user_id, kind, mode, model, records, unpriced,
                                    cost_micros, duration_ms, tokens_in, tokens_out)
    SELECT date_bin('15 minutes', created_at, timestamptz '2000-01-01 00:00:00+00'), user_id, kind, mode, model,
           count(*), count(*) FILTER (WHERE cost_micros IS NULL), coalesce(sum(cost_micros), 0), sum(duration_ms),
           sum(usage_record_tokens_in(r)), sum(usage_record_tokens_out(r))
    FROM usage_records r GROUP BY 1, 2, 3, 4, 5;
    INSERT INTO usage_rollups (bucket, kind, mode, model, records, unpriced,
                               cost_micros, duration_ms, tokens_in, tokens_out)
    SELECT bucket, kind, mode, model, sum(records), sum(unpriced), sum(cost_micros), sum(duration_ms),
           sum(tokens_in), sum(tokens_out)
    FROM usage_user_rollups GROUP BY 1, 2, 3, 4;
$$;

UPDATE usage_records SET audio_ms = duration_ms WHERE kind = 'voice' AND mode = 'live' AND audio_ms = 0;
