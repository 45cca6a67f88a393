-- quota_admit_batch admits a batch of chat turns in one statement: the
-- requests one replica gathered while its previous batch was in flight
-- (quota/batch.go). Each request is decided as quota_admit (0011) decides
-- one: admitted (the request counted, a ticket inserted) or refused with its
-- reasons, having counted nothing.
--
-- A batch holds at most one request per user (the caller keeps a user's
-- next request for a later batch), so each decision reads its user's row as
-- earlier transactions left it, independently of the rest of the batch, and
-- the work is set-based: one statement locks the users, one checks them,
-- one decides, writes and answers, whatever the batch size. Only the global
-- cap is shared: when its room this minute is smaller than the batch, the
-- requests go through quota_admit one by one, in batch order, in this same
-- transaction. A batch of one (the common case at low load) goes through
-- quota_admit too: the same decision in fewer statements.
--
-- Locks: every user row of the batch is locked (or created) first, in one
-- statement, in user_id order (COLLATE "C"), so batches from different
-- replicas that share users wait for one another but cannot deadlock; then
-- the users' tickets and the quota_global row, as everywhere else.
--
-- All requests of a batch share one clock (p_now and its windows), read when
-- the batch is sent. p_users … p_cost are parallel arrays, one element per
-- request; the result has one row per request, ord being its 1-based
-- position.
CREATE FUNCTION quota_admit_batch(
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
               CASE WHEN q.minute_start = p_minute THEN q.minute_count ELSE 0 END AS minute_count,
               CASE WHEN q.hour_start = p_hour THEN q.hour_count ELSE 0 END AS hour_count,
               CASE WHEN q.day = p_day THEN q.day_requests ELSE 0 END AS day_requests,
               CASE WHEN q.day = p_day THEN q.day_calls ELSE 0 END AS day_calls,
               CASE WHEN q.day = p_day THEN q.day_tokens ELSE 0 END AS day_tokens,
               CASE WHEN q.day = p_day THEN q.day_cost ELSE 0 END AS day_cost,
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
            minute_start = p_minute, minute_count = d.minute_count + 1,
            hour_start = p_hour, hour_count = d.hour_count + 1,
            day = p_day, day_requests = d.day_requests + 1, day_calls = d.day_calls,
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

-- quota_global_room locks (or creates) the global window of p_minute and
-- returns how many more requests it admits under p_cap. The lock is held
-- until the caller commits, having counted the requests it admitted.
CREATE FUNCTION quota_global_room(p_minute timestamptz, p_cap bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    used bigint;
BEGIN
    INSERT INTO quota_global AS g (window_start, count) VALUES (p_minute, 0)
    ON CONFLICT (window_start) DO UPDATE SET count = g.count WHERE false;
    SELECT g.count INTO used FROM quota_global g WHERE g.window_start = p_minute;
    RETURN GREATEST(p_cap - used, 0);
END $$;
