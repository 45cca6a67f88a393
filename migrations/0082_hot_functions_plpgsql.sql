-- Three functions every request calls, moved from LANGUAGE sql to plpgsql
-- with the same bodies (issue 36). PostgreSQL inlines a SQL function only
-- when it is a single scalar expression; these are not (one returns a
-- record, two write), so every call parsed and planned its body again:
-- measured with pg_stat_statements and track_functions under voxgate bench
-- at 32 clients, usage_rollup_add took 0.31 ms a record, quota_clock
-- 0.11 ms a call (two calls a completion) and quota_save 0.17 ms a
-- settlement, together a third of PostgreSQL's time per completion. A
-- plpgsql function keeps its statements' plans for the connection's life.
-- Each function's rule is unchanged; docs/capacity.md has the figures.

CREATE OR REPLACE FUNCTION quota_clock(p_now timestamptz,
    OUT now timestamptz, OUT minute timestamptz, OUT hour timestamptz, OUT day date, OUT month date)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    now := coalesce(p_now, statement_timestamp());
    minute := date_trunc('minute', now, 'UTC');
    hour := date_trunc('hour', now, 'UTC');
    day := (now AT TIME ZONE 'UTC')::date;
    month := date_trunc('month', now AT TIME ZONE 'UTC')::date;
END $$;

CREATE OR REPLACE FUNCTION quota_save(u quota_users) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE quota_users SET
        minute_start = u.minute_start, minute_count = u.minute_count,
        hour_start = u.hour_start, hour_count = u.hour_count,
        day = u.day, day_requests = u.day_requests, day_calls = u.day_calls,
        day_tokens = u.day_tokens, day_cost = u.day_cost,
        leases = u.leases, res_calls = u.res_calls, res_tokens = u.res_tokens, res_cost = u.res_cost,
        lease_min = u.lease_min, month = u.month, voice_used = u.voice_used
    WHERE user_id = u.user_id;
END $$;

CREATE OR REPLACE FUNCTION usage_rollup_add(r usage_records, sign int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_rollup_deltas (bucket, user_id, kind, mode, model, records, unpriced,
                                     cost_micros, duration_ms, tokens_in, tokens_out)
    VALUES (date_bin('15 minutes', r.created_at, timestamptz '2000-01-01 00:00:00+00'),
            r.user_id, r.kind, r.mode, r.model, sign, sign * (r.cost_micros IS NULL)::int,
            sign * coalesce(r.cost_micros, 0), sign * r.duration_ms,
            sign * usage_record_tokens_in(r)::bigint, sign * usage_record_tokens_out(r)::bigint);
END $$;
