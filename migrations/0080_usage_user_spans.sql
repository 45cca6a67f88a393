-- Per-user totals by UTC hour and by UTC day (issue 27, docs/billing.md
-- "Rollups"). usage_user_rollups keys a user's figures by 15-minute bucket,
-- kind, mode and model: with thousands of active users it holds nearly a
-- row per record, so a month's summary by user read as much as the records
-- did. A summary by user cuts no days, so it may read coarser rows: whole
-- UTC days here, whole UTC hours at the range's edges, then the 15-minute
-- rollup and the records for what is left (billing/rollup.go). The spans
-- keep only the user: a summary that also filters on kind, mode or model
-- reads usage_user_rollups as before.
-- Writers wait while this runs: a record an older replica wrote meanwhile
-- would go through the old usage_rollup_add (its 15-minute rollups but no
-- spans) and be missing from the spans for good.
LOCK TABLE usage_records IN SHARE MODE;

CREATE TABLE usage_user_spans (
    width       interval NOT NULL,
    bucket      timestamptz NOT NULL,
    user_id     text NOT NULL,
    records     bigint NOT NULL,
    unpriced    bigint NOT NULL,
    cost_micros numeric NOT NULL,
    duration_ms numeric NOT NULL,
    tokens_in   numeric NOT NULL,
    tokens_out  numeric NOT NULL,
    PRIMARY KEY (width, bucket, user_id),
    CHECK (width IN (interval '1 hour', interval '1 day'))
);

-- One record's share of every rollup, kept by the trigger of migration
-- 0071 in the record's transaction. Its figures are computed once (v, with
-- migration 0079's token functions) and added to each rollup, so the
-- rollups cannot disagree on what a record counts.
CREATE OR REPLACE FUNCTION usage_rollup_add(r usage_records, sign int) RETURNS void LANGUAGE sql AS $$
    WITH v AS (
        SELECT date_bin('15 minutes', r.created_at, timestamptz '2000-01-01 00:00:00+00') AS bucket,
               r.user_id, r.kind, r.mode, r.model, sign AS records, sign * (r.cost_micros IS NULL)::int AS unpriced,
               sign * coalesce(r.cost_micros, 0)::numeric AS cost_micros, sign * r.duration_ms::numeric AS duration_ms,
               sign * usage_record_tokens_in(r) AS tokens_in, sign * usage_record_tokens_out(r) AS tokens_out
    ), models AS (
        INSERT INTO usage_rollups AS u (bucket, kind, mode, model, records, unpriced,
                                        cost_micros, duration_ms, tokens_in, tokens_out)
        SELECT bucket, kind, mode, model, records, unpriced, cost_micros, duration_ms, tokens_in, tokens_out FROM v
        ON CONFLICT (bucket, kind, mode, model) DO UPDATE SET
            records = u.records + EXCLUDED.records,
            unpriced = u.unpriced + EXCLUDED.unpriced,
            cost_micros = u.cost_micros + EXCLUDED.cost_micros,
            duration_ms = u.duration_ms + EXCLUDED.duration_ms,
            tokens_in = u.tokens_in + EXCLUDED.tokens_in,
            tokens_out = u.tokens_out + EXCLUDED.tokens_out
    ), users AS (
        INSERT INTO usage_user_rollups AS u (bucket, user_id, kind, mode, model, records, unpriced,
                                             cost_micros, duration_ms, tokens_in, tokens_out)
        SELECT bucket, user_id, kind, mode, model, records, unpriced, cost_micros, duration_ms, tokens_in, tokens_out FROM v
        ON CONFLICT (user_id, bucket, kind, mode, model) DO UPDATE SET
            records = u.records + EXCLUDED.records,
            unpriced = u.unpriced + EXCLUDED.unpriced,
            cost_micros = u.cost_micros + EXCLUDED.cost_micros,
            duration_ms = u.duration_ms + EXCLUDED.duration_ms,
            tokens_in = u.tokens_in + EXCLUDED.tokens_in,
            tokens_out = u.tokens_out + EXCLUDED.tokens_out
    )
    INSERT INTO usage_user_spans AS u (width, bucket, user_id, records, unpriced,
                                       cost_micros, duration_ms, tokens_in, tokens_out)
    SELECT w, date_bin(w, v.bucket, timestamptz '2000-01-01 00:00:00+00'), user_id,
           records, unpriced, cost_micros, duration_ms, tokens_in, tokens_out
    FROM v, (VALUES (interval '1 hour'), (interval '1 day')) AS widths (w)
    ON CONFLICT (width, bucket, user_id) DO UPDATE SET
        records = u.records + EXCLUDED.records,
        unpriced = u.unpriced + EXCLUDED.unpriced,
        cost_micros = u.cost_micros + EXCLUDED.cost_micros,
        duration_ms = u.duration_ms + EXCLUDED.duration_ms,
        tokens_in = u.tokens_in + EXCLUDED.tokens_in,
        tokens_out = u.tokens_out + EXCLUDED.tokens_out
$$;

-- Builds every rollup from the records (this migration's backfill, and a
-- bulk load that ran with the trigger disabled). Each coarser rollup is
-- summed from the finer one, so all of them count a record the same way.
CREATE OR REPLACE FUNCTION usage_rollups_rebuild() RETURNS void LANGUAGE sql AS $$
    DELETE FROM usage_rollups;
    DELETE FROM usage_user_rollups;
    DELETE FROM usage_user_spans;
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
    INSERT INTO usage_user_spans (width, bucket, user_id, records, unpriced,
                                  cost_micros, duration_ms, tokens_in, tokens_out)
    SELECT interval '1 hour', date_bin('1 hour', bucket, timestamptz '2000-01-01 00:00:00+00'), user_id,
           sum(records), sum(unpriced), sum(cost_micros), sum(duration_ms), sum(tokens_in), sum(tokens_out)
    FROM usage_user_rollups GROUP BY 2, 3;
    INSERT INTO usage_user_spans (width, bucket, user_id, records, unpriced,
                                  cost_micros, duration_ms, tokens_in, tokens_out)
    SELECT interval '1 day', date_bin('1 day', bucket, timestamptz '2000-01-01 00:00:00+00'), user_id,
           sum(records), sum(unpriced), sum(cost_micros), sum(duration_ms), sum(tokens_in), sum(tokens_out)
    FROM usage_user_spans WHERE width = interval '1 hour' GROUP BY 2, 3;
$$;

-- The backfill: the spans from the per-user 15-minute rollup, which the
-- trigger has kept since migration 0071 (the two other rollups are right
-- already; rebuilding them too would hold the writers back for longer).
INSERT INTO usage_user_spans (width, bucket, user_id, records, unpriced,
                              cost_micros, duration_ms, tokens_in, tokens_out)
SELECT w, date_bin(w, bucket, timestamptz '2000-01-01 00:00:00+00'), user_id,
       sum(records), sum(unpriced), sum(cost_micros), sum(duration_ms), sum(tokens_in), sum(tokens_out)
FROM usage_user_rollups, (VALUES (interval '1 hour'), (interval '1 day')) AS widths (w)
GROUP BY 1, 2, 3;
