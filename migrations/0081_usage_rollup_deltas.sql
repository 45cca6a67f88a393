-- The rollups stop being a row every request updates (issue 36,
-- docs/billing.md "Rollups"). Until now the record's trigger upserted four
-- rollup rows in the record's own transaction, one of them
-- usage_rollups (bucket, kind, mode, model): every record of a model in a
-- 15-minute bucket, from every replica, updated that one row and held its
-- lock until commit, so the fleet's writes of a model took turns.
--
-- Now the trigger appends the record's share to usage_rollup_deltas, a
-- plain insert into a heap with no key and no index, which no other writer
-- waits on. A background step (usage_rollups_fold, run by every replica
-- under an advisory lock, billing.Ledger.Fold) moves the deltas into the
-- rollups: it deletes a batch and adds its sums to the rollups in one
-- transaction. A summary reads the rollups and the deltas not yet folded
-- (billing/rollup.go), in one statement and so one snapshot: each delta is
-- then either still a delta or already in a rollup, never both and never
-- neither, so a summary is exact at any moment.
--
-- Old replicas may run beside this version: their trigger calls this
-- function (functions are looked up at call time), and their summaries,
-- which do not read the deltas, lag by at most one fold while a new
-- replica folds. With no new replica running nothing folds: upgrade every
-- replica.
CREATE TABLE usage_rollup_deltas (
    bucket      timestamptz NOT NULL,
    user_id     text NOT NULL,
    kind        text NOT NULL,
    mode        text NOT NULL,
    model       text NOT NULL,
    -- One record's figures (or their negation, for an update's old row):
    -- bigint holds them; sums are taken in numeric when folded and read.
    records     bigint NOT NULL,
    unpriced    bigint NOT NULL,
    cost_micros bigint NOT NULL,
    duration_ms bigint NOT NULL,
    tokens_in   bigint NOT NULL,
    tokens_out  bigint NOT NULL
);

-- A record's share, as migration 0080 computed it, appended.
CREATE OR REPLACE FUNCTION usage_rollup_add(r usage_records, sign int) RETURNS void LANGUAGE sql AS $$
    INSERT INTO usage_rollup_deltas (bucket, user_id, kind, mode, model, records, unpriced,
                                     cost_micros, duration_ms, tokens_in, tokens_out)
    VALUES (date_bin('15 minutes', r.created_at, timestamptz '2000-01-01 00:00:00+00'),
            r.user_id, r.kind, r.mode, r.model, sign, sign * (r.cost_micros IS NULL)::int,
            sign * coalesce(r.cost_micros, 0), sign * r.duration_ms,
            sign * usage_record_tokens_in(r)::bigint, sign * usage_record_tokens_out(r)::bigint)
$$;

-- Folds at most batch deltas into the three rollups and returns how many
-- it folded. The deltas are summed by key first, so a rollup row is
-- updated once per fold however many records it gained, and each insert
-- takes its keys in order, so two folds that did run at once would wait
-- on each other rather than deadlock.
CREATE FUNCTION usage_rollups_fold(batch int) RETURNS bigint LANGUAGE sql AS $$
    WITH taken AS (
        DELETE FROM usage_rollup_deltas
        WHERE ctid = ANY (ARRAY(SELECT ctid FROM usage_rollup_deltas LIMIT batch))
        RETURNING *
    ), v AS (
        SELECT bucket, user_id, kind, mode, model, sum(records) AS records, sum(unpriced) AS unpriced,
               sum(cost_micros) AS cost_micros, sum(duration_ms) AS duration_ms,
               sum(tokens_in) AS tokens_in, sum(tokens_out) AS tokens_out
        FROM taken GROUP BY bucket, user_id, kind, mode, model
    ), models AS (
        INSERT INTO usage_rollups AS u (bucket, kind, mode, model, records, unpriced,
                                        cost_micros, duration_ms, tokens_in, tokens_out)
        SELECT bucket, kind, mode, model, sum(records), sum(unpriced), sum(cost_micros), sum(duration_ms),
               sum(tokens_in), sum(tokens_out)
        FROM v GROUP BY bucket, kind, mode, model ORDER BY bucket, kind, mode, model
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
        SELECT bucket, user_id, kind, mode, model, records, unpriced, cost_micros, duration_ms, tokens_in, tokens_out
        FROM v ORDER BY user_id, bucket, kind, mode, model
        ON CONFLICT (user_id, bucket, kind, mode, model) DO UPDATE SET
            records = u.records + EXCLUDED.records,
            unpriced = u.unpriced + EXCLUDED.unpriced,
            cost_micros = u.cost_micros + EXCLUDED.cost_micros,
            duration_ms = u.duration_ms + EXCLUDED.duration_ms,
            tokens_in = u.tokens_in + EXCLUDED.tokens_in,
            tokens_out = u.tokens_out + EXCLUDED.tokens_out
    ), spans AS (
        INSERT INTO usage_user_spans AS u (width, bucket, user_id, records, unpriced,
                                           cost_micros, duration_ms, tokens_in, tokens_out)
        SELECT w, date_bin(w, v.bucket, timestamptz '2000-01-01 00:00:00+00') AS b, user_id,
               sum(records), sum(unpriced), sum(cost_micros), sum(duration_ms), sum(tokens_in), sum(tokens_out)
        FROM v, (VALUES (interval '1 hour'), (interval '1 day')) AS widths (w)
        GROUP BY w, b, user_id ORDER BY w, b, user_id
        ON CONFLICT (width, bucket, user_id) DO UPDATE SET
            records = u.records + EXCLUDED.records,
            unpriced = u.unpriced + EXCLUDED.unpriced,
            cost_micros = u.cost_micros + EXCLUDED.cost_micros,
            duration_ms = u.duration_ms + EXCLUDED.duration_ms,
            tokens_in = u.tokens_in + EXCLUDED.tokens_in,
            tokens_out = u.tokens_out + EXCLUDED.tokens_out
    )
    SELECT count(*) FROM taken
$$;

-- The rebuild (a bulk load with the trigger off) builds the rollups from
-- the records themselves: pending deltas are part of what it recounts.
CREATE OR REPLACE FUNCTION usage_rollups_rebuild() RETURNS void LANGUAGE sql AS $$
    DELETE FROM usage_rollup_deltas;
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
