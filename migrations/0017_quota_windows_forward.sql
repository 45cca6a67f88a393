-- Windows only move forward. Every statement reads its clock when it
-- starts (quota_clock) and may then wait for a user's row lock; meanwhile
-- the holder, whose statement started a moment later, may have moved the
-- row into the next minute (hour, day, month). A stored window newer than
-- the statement's own is therefore the current one: the request counts in
-- it, where 0010-0013 reset the row to the statement's older window and
-- so dropped the newer window's count (the next request, in the newer
-- window, reset it again). The same held for replicas whose own clocks
-- were skewed, before 0016.
--
-- The functions are replaced in place, with their signatures: every caller,
-- of this release or the previous one, gets the rule. Only the window
-- comparisons differ from 0010, 0011, 0013 and 0015.

CREATE OR REPLACE FUNCTION quota_roll(u quota_users, p_minute timestamptz, p_hour timestamptz, p_day date, p_month date)
RETURNS quota_users
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF u.minute_start < p_minute THEN u.minute_start := p_minute; u.minute_count := 0; END IF;
    IF u.hour_start < p_hour THEN u.hour_start := p_hour; u.hour_count := 0; END IF;
    IF u.day < p_day THEN
        u.day := p_day; u.day_requests := 0; u.day_calls := 0; u.day_tokens := 0; u.day_cost := 0;
    END IF;
    IF u.month < p_month THEN u.month := p_month; u.voice_used := 0; END IF;
    RETURN u;
END $$;

CREATE OR REPLACE FUNCTION quota_admit(
    p_user text, p_fallback text, p_names text[], p_limits bigint[],
    p_now timestamptz, p_minute timestamptz, p_hour timestamptz, p_day date, p_month date,
    p_expires timestamptz, p_calls bigint, p_tokens bigint, p_cost bigint, p_global_cap bigint,
    OUT plan text, OUT reasons text[], OUT ticket_id bigint,
    OUT day_requests bigint, OUT day_calls bigint, OUT day_tokens bigint, OUT day_cost bigint,
    OUT res_calls bigint, OUT res_tokens bigint, OUT res_cost bigint)
LANGUAGE plpgsql AS $$
-- This is the hot path: it is written out inline, with the fewest
-- statements, rather than built from the helpers the other functions use.
DECLARE
    lim bigint[];
    i int;
    u quota_users;
    held bigint;
BEGIN
    -- Admission counters may lose their last fraction of a second if the
    -- database server itself crashes; in exchange the row lock is released
    -- without waiting for the WAL flush. See docs/quota.md.
    PERFORM set_config('synchronous_commit', 'off', true);

    SELECT up.plan INTO plan FROM user_plans up WHERE up.user_id = p_user;
    i := array_position(p_names, plan);
    IF i IS NULL THEN -- no row, or a plan this replica's config does not know
        plan := p_fallback;
        i := array_position(p_names, plan);
    END IF;
    lim := p_limits[(i - 1) * 10 + 1 : i * 10];

    SELECT * INTO u FROM quota_users q WHERE q.user_id = p_user FOR UPDATE;
    IF NOT FOUND THEN
        u := quota_lock_user(p_user);
    END IF;
    IF u.minute_start < p_minute THEN u.minute_start := p_minute; u.minute_count := 0; END IF;
    IF u.hour_start < p_hour THEN u.hour_start := p_hour; u.hour_count := 0; END IF;
    IF u.day < p_day THEN
        u.day := p_day; u.day_requests := 0; u.day_calls := 0; u.day_tokens := 0; u.day_cost := 0;
    END IF;
    held := u.leases;
    IF u.lease_min <= p_now THEN
        u := quota_reclaim(u, p_now);
    END IF;

    reasons := '{}';
    IF lim[1] > 0 AND u.minute_count >= lim[1] THEN reasons := reasons || 'requests_per_minute'::text; END IF;
    IF lim[2] > 0 AND u.hour_count >= lim[2] THEN reasons := reasons || 'requests_per_hour'::text; END IF;
    IF lim[3] > 0 AND u.day_requests >= lim[3] THEN reasons := reasons || 'requests_per_day'::text; END IF;
    -- numeric sums: a limit, a counter and an estimate never overflow here.
    IF lim[4] > 0 AND u.day_tokens::numeric + u.res_tokens + p_tokens > lim[4] THEN
        reasons := reasons || CASE WHEN u.day_tokens::numeric + p_tokens > lim[4]
                                   THEN 'tokens_per_day' ELSE 'tokens_per_day_inflight' END;
    END IF;
    IF lim[5] > 0 AND u.day_cost::numeric + u.res_cost + p_cost > lim[5] THEN
        reasons := reasons || CASE WHEN u.day_cost::numeric + p_cost > lim[5]
                                   THEN 'cost_per_day' ELSE 'cost_per_day_inflight' END;
    END IF;
    IF lim[6] > 0 AND u.day_calls::numeric + u.res_calls + p_calls > lim[6] THEN
        reasons := reasons || CASE WHEN u.day_calls::numeric + p_calls > lim[6]
                                   THEN 'calls_per_day' ELSE 'calls_per_day_inflight' END;
    END IF;
    IF lim[7] > 0 AND u.leases >= lim[7] THEN
        reasons := reasons || 'concurrent_turns'::text;
    END IF;
    IF cardinality(reasons) = 0 AND p_global_cap > 0 AND NOT quota_take_global(p_minute, p_global_cap) THEN
        reasons := ARRAY['global_requests_per_minute'];
    END IF;

    IF cardinality(reasons) = 0 THEN
        INSERT INTO quota_tickets (user_id, expires_at, res_calls, res_tokens, res_cost)
        VALUES (p_user, p_expires, p_calls, p_tokens, p_cost)
        RETURNING id INTO ticket_id;
        -- Counters stay below 1e15 × requests, far from overflow, except
        -- through settlements, which saturate (quota_add).
        UPDATE quota_users q SET
            minute_start = u.minute_start, minute_count = u.minute_count + 1,
            hour_start = u.hour_start, hour_count = u.hour_count + 1,
            day = u.day, day_requests = u.day_requests + 1, day_calls = u.day_calls,
            day_tokens = u.day_tokens, day_cost = u.day_cost,
            leases = u.leases + 1, res_calls = quota_add(u.res_calls, p_calls),
            res_tokens = quota_add(u.res_tokens, p_tokens), res_cost = quota_add(u.res_cost, p_cost),
            lease_min = LEAST(u.lease_min, p_expires)
        WHERE q.user_id = p_user
        RETURNING q.day_requests, q.res_calls, q.res_tokens, q.res_cost
        INTO day_requests, res_calls, res_tokens, res_cost;
    ELSE
        IF u.leases <> held THEN
            PERFORM quota_save(u); -- a refusal writes nothing but the reclaim
        END IF;
        day_requests := u.day_requests;
        res_calls := u.res_calls; res_tokens := u.res_tokens; res_cost := u.res_cost;
    END IF;
    day_calls := u.day_calls; day_tokens := u.day_tokens; day_cost := u.day_cost;
END $$;

CREATE OR REPLACE FUNCTION quota_admit_batch(
    p_users text[], p_fallbacks text[], p_names text[], p_limits bigint[],
    p_now timestamptz, p_minute timestamptz, p_hour timestamptz, p_day date,
    p_expires timestamptz, p_calls bigint[], p_tokens bigint[], p_cost bigint[],
    p_global_cap bigint)
RETURNS TABLE (ord int, plan text, reasons text[], ticket_id bigint,
    day_requests bigint, day_calls bigint, day_tokens bigint, day_cost bigint,
    res_calls bigint, res_tokens bigint, res_cost bigint)
LANGUAGE plpgsql
-- The statements below take arrays, and for those the planner would plan
-- every call afresh: that was nearly half the time of a small batch.
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    n int := cardinality(p_users);
    found_n int;
    expired int;
    room bigint;
    u quota_users;
BEGIN
    -- Asynchronous commit, as quota_admit: see docs/quota.md. (A SET clause
    -- would not do: it is undone when the function returns, before commit.)
    PERFORM set_config('synchronous_commit', 'off', true);

    IF n = 1 THEN -- the same decision, in fewer statements
        RETURN QUERY
        SELECT 1, a.plan, a.reasons, a.ticket_id, a.day_requests, a.day_calls,
               a.day_tokens, a.day_cost, a.res_calls, a.res_tokens, a.res_cost
          FROM quota_admit(p_users[1], p_fallbacks[1], p_names, p_limits, p_now, p_minute, p_hour,
                           p_day, date_trunc('month', p_day)::date, p_expires,
                           p_calls[1], p_tokens[1], p_cost[1], p_global_cap) a;
        RETURN;
    END IF;

    -- Lock every user row in order, creating the missing ones: ON CONFLICT
    -- DO UPDATE locks an existing row even when its WHERE is false, and
    -- then writes nothing to it. Rows are taken in the SELECT's order.
    INSERT INTO quota_users AS q (user_id)
    SELECT x FROM unnest(p_users) x ORDER BY x COLLATE "C"
    ON CONFLICT (user_id) DO UPDATE SET user_id = q.user_id WHERE false;

    -- Every statement from here takes a fresh snapshot with every row of the
    -- batch locked: it reads the latest state, which nobody else can change.
    SELECT count(*), count(*) FILTER (WHERE q.lease_min <= p_now) INTO found_n, expired
      FROM quota_users q WHERE q.user_id = ANY (p_users);
    IF found_n <> n THEN
        RAISE EXCEPTION 'quota_admit_batch: % requests for % users; one request per user', n, found_n;
    END IF;
    IF expired > 0 THEN -- users with expired tickets: reclaim them (see lease_min)
        FOR u IN SELECT * FROM quota_users q WHERE q.user_id = ANY (p_users) AND q.lease_min <= p_now LOOP
            PERFORM quota_save(quota_reclaim(u, p_now));
        END LOOP;
    END IF;

    IF p_global_cap > 0 THEN
        room := quota_global_room(p_minute, p_global_cap);
        IF room < n THEN
            -- The cap may refuse some: decide one by one, each request
            -- seeing the global count the ones before it left.
            RETURN QUERY
            SELECT r.ord::int, a.plan, a.reasons, a.ticket_id, a.day_requests, a.day_calls,
                   a.day_tokens, a.day_cost, a.res_calls, a.res_tokens, a.res_cost
              FROM unnest(p_users, p_fallbacks, p_calls, p_tokens, p_cost)
                   WITH ORDINALITY r(user_id, fallback, calls, tokens, cost, ord),
                   LATERAL quota_admit(r.user_id, r.fallback, p_names, p_limits, p_now, p_minute, p_hour,
                                       p_day, date_trunc('month', p_day)::date, p_expires,
                                       r.calls, r.tokens, r.cost, p_global_cap) a
             ORDER BY r.ord;
            RETURN;
        END IF;
    END IF;

    RETURN QUERY
    WITH req AS MATERIALIZED ( -- each request with its plan: k-th of p_names
        SELECT r.*, coalesce(
                   -- the user_plans row, unless this config lacks its plan (see quota_plan)
                   array_position(p_names, (SELECT up.plan FROM user_plans up WHERE up.user_id = r.user_id)),
                   array_position(p_names, r.fallback)) AS k
          FROM unnest(p_users, p_fallbacks, p_calls, p_tokens, p_cost)
               WITH ORDINALITY r(user_id, fallback, calls, tokens, cost, ord)
    ), cur AS ( -- beside the plan's limits and the user's counters, windows rolled
        SELECT req.ord::int AS ord, req.user_id, req.calls, req.tokens, req.cost, p_names[req.k] AS name,
               p_limits[req.k * 10 - 9] AS rpm, p_limits[req.k * 10 - 8] AS rph,
               p_limits[req.k * 10 - 7] AS rpd, p_limits[req.k * 10 - 6] AS tokens_pd,
               p_limits[req.k * 10 - 5] AS cost_pd, p_limits[req.k * 10 - 4] AS calls_pd,
               p_limits[req.k * 10 - 3] AS turns,
               CASE WHEN q.minute_start >= p_minute THEN q.minute_count ELSE 0 END AS minute_count,
               CASE WHEN q.hour_start >= p_hour THEN q.hour_count ELSE 0 END AS hour_count,
               CASE WHEN q.day >= p_day THEN q.day_requests ELSE 0 END AS day_requests,
               CASE WHEN q.day >= p_day THEN q.day_calls ELSE 0 END AS day_calls,
               CASE WHEN q.day >= p_day THEN q.day_tokens ELSE 0 END AS day_tokens,
               CASE WHEN q.day >= p_day THEN q.day_cost ELSE 0 END AS day_cost,
               GREATEST(q.minute_start, p_minute) AS minute_start, GREATEST(q.hour_start, p_hour) AS hour_start,
               GREATEST(q.day, p_day) AS day,
               q.leases, q.res_calls, q.res_tokens, q.res_cost, q.lease_min
          FROM req JOIN quota_users q ON q.user_id = req.user_id
    ), dec AS MATERIALIZED ( -- the reasons, as quota_admit has them; an admitted request gets its ticket id
        SELECT cur.*, w.why AS reasons, cardinality(w.why) = 0 AS ok,
               CASE WHEN cardinality(w.why) = 0 THEN nextval('quota_tickets_id_seq') END AS ticket_id
          FROM cur, LATERAL (SELECT array_remove(ARRAY[
            CASE WHEN rpm > 0 AND minute_count >= rpm THEN 'requests_per_minute' END,
            CASE WHEN rph > 0 AND hour_count >= rph THEN 'requests_per_hour' END,
            CASE WHEN rpd > 0 AND day_requests >= rpd THEN 'requests_per_day' END,
            -- numeric sums: a limit, a counter and an estimate never overflow here.
            CASE WHEN tokens_pd > 0 AND day_tokens::numeric + res_tokens + tokens > tokens_pd THEN
                CASE WHEN day_tokens::numeric + tokens > tokens_pd THEN 'tokens_per_day' ELSE 'tokens_per_day_inflight' END END,
            CASE WHEN cost_pd > 0 AND day_cost::numeric + res_cost + cost > cost_pd THEN
                CASE WHEN day_cost::numeric + cost > cost_pd THEN 'cost_per_day' ELSE 'cost_per_day_inflight' END END,
            CASE WHEN calls_pd > 0 AND day_calls::numeric + res_calls + calls > calls_pd THEN
                CASE WHEN day_calls::numeric + calls > calls_pd THEN 'calls_per_day' ELSE 'calls_per_day_inflight' END END,
            CASE WHEN turns > 0 AND leases >= turns THEN 'concurrent_turns' END
          ], NULL) AS why) w
    ), upd AS (
        -- Counters stay below 1e15 × requests, far from overflow, except
        -- through settlements, which saturate (quota_add).
        UPDATE quota_users q SET
            minute_start = d.minute_start, minute_count = d.minute_count + 1,
            hour_start = d.hour_start, hour_count = d.hour_count + 1,
            day = d.day, day_requests = d.day_requests + 1, day_calls = d.day_calls,
            day_tokens = d.day_tokens, day_cost = d.day_cost,
            leases = d.leases + 1, res_calls = quota_add(d.res_calls, d.calls),
            res_tokens = quota_add(d.res_tokens, d.tokens), res_cost = quota_add(d.res_cost, d.cost),
            lease_min = LEAST(d.lease_min, p_expires)
          FROM dec d
         WHERE d.ok AND q.user_id = d.user_id
    ), glob AS ( -- room ≥ n: every admitted request fits under the cap
        UPDATE quota_global g SET count = g.count + (SELECT count(*) FROM dec WHERE dec.ok)
         WHERE room IS NOT NULL AND g.window_start = p_minute
    ), ins AS (
        INSERT INTO quota_tickets (id, user_id, expires_at, res_calls, res_tokens, res_cost)
        OVERRIDING SYSTEM VALUE
        SELECT d.ticket_id, d.user_id, p_expires, d.calls, d.tokens, d.cost FROM dec d WHERE d.ok
    )
    SELECT d.ord, d.name, d.reasons, d.ticket_id,
           d.day_requests + d.ok::int, d.day_calls, d.day_tokens, d.day_cost,
           CASE WHEN d.ok THEN quota_add(d.res_calls, d.calls) ELSE d.res_calls END,
           CASE WHEN d.ok THEN quota_add(d.res_tokens, d.tokens) ELSE d.res_tokens END,
           CASE WHEN d.ok THEN quota_add(d.res_cost, d.cost) ELSE d.res_cost END
      FROM dec d;
END $$;

CREATE OR REPLACE FUNCTION quota_reclaim_voice(u quota_users, p_now timestamptz, p_month date) RETURNS quota_users
LANGUAGE plpgsql AS $$
DECLARE
    s bigint;
BEGIN
    IF u.month < p_month THEN u.month := p_month; u.voice_used := 0; END IF;
    WITH gone AS (
        DELETE FROM quota_voice WHERE user_id = u.user_id AND expires_at <= p_now
        RETURNING session_id, reserved_s, started_at
    ), ended AS (
        INSERT INTO quota_voice_ended (session_id, user_id, reclaimed, reserved_s, charged_s, ended_at)
        SELECT g.session_id, u.user_id, true, g.reserved_s, g.reserved_s, p_now FROM gone g
        ON CONFLICT (session_id) DO NOTHING
    )
    SELECT coalesce(sum(quota_voice_in_month(g.started_at, g.reserved_s, p_month)), 0) INTO s FROM gone g;
    u.voice_used := quota_add(u.voice_used, s);
    RETURN u;
END $$;
