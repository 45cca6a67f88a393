-- The chat admission rule, written once. quota_admit_requests decides one
-- or many requests in one set-based statement (one request is a batch of
-- one) and takes the plans as JSON of named limits, read into the
-- quota_limits type, instead of a positional array.
--
-- Expand step of a rollout: replicas of the previous release still call
-- quota_admit_batch with its positional arrays, so it keeps its signature
-- and becomes a thin adapter onto quota_admit_requests; old and new
-- replicas then share one rule, rows and locks. A later migration drops it
-- (with quota_plans_of and quota_limits_of) once no replica calls it.
-- quota_admit, the single admission, is dropped: since batching (0013) no
-- release calls it but the old quota_admit_batch, whose body no longer
-- does. quota_roll and quota_window_denials keep their signatures (the
-- voice and settlement functions call them) and become the one window rule.

-- A plan's limits, named as in the config file; 0 is unlimited.
CREATE TYPE quota_limits AS (
    requests_per_minute     bigint,
    requests_per_hour       bigint,
    requests_per_day        bigint,
    tokens_per_day          bigint,
    cost_per_day_micros     bigint,
    calls_per_day           bigint,
    concurrent_turns        bigint,
    voice_seconds_per_month bigint,
    max_session_s           bigint,
    voice_sessions          bigint
);

-- quota_limits_of reads the positional layout of quota_plan (0010) into
-- quota_limits: only for the functions older replicas call.
CREATE FUNCTION quota_limits_of(lim bigint[]) RETURNS quota_limits
LANGUAGE sql IMMUTABLE
RETURN ROW(lim[1], lim[2], lim[3], lim[4], lim[5], lim[6], lim[7], lim[8], lim[9], lim[10])::quota_limits;

-- quota_plans_of is the JSON of named limits for the positional plans.
CREATE FUNCTION quota_plans_of(p_names text[], p_limits bigint[]) RETURNS jsonb
LANGUAGE sql IMMUTABLE
RETURN (SELECT jsonb_object_agg(n.name, to_jsonb(quota_limits_of(p_limits[n.k * 10 - 9 : n.k * 10])))
          FROM unnest(p_names) WITH ORDINALITY n(name, k));

-- quota_roll is the window rule: a stored window older than the given one
-- is over, and its counts read as 0; a newer one is current (0017). It is
-- plain SQL so that the planner inlines it into the admission statement.
-- The row lists quota_users' columns in table order.
CREATE OR REPLACE FUNCTION quota_roll(u quota_users, p_minute timestamptz, p_hour timestamptz, p_day date, p_month date)
RETURNS quota_users
LANGUAGE sql IMMUTABLE
RETURN ROW(
    u.user_id,
    GREATEST(u.minute_start, p_minute), CASE WHEN u.minute_start >= p_minute THEN u.minute_count ELSE 0 END,
    GREATEST(u.hour_start, p_hour), CASE WHEN u.hour_start >= p_hour THEN u.hour_count ELSE 0 END,
    GREATEST(u.day, p_day),
    CASE WHEN u.day >= p_day THEN u.day_requests ELSE 0 END,
    CASE WHEN u.day >= p_day THEN u.day_calls ELSE 0 END,
    CASE WHEN u.day >= p_day THEN u.day_tokens ELSE 0 END,
    CASE WHEN u.day >= p_day THEN u.day_cost ELSE 0 END,
    u.leases, u.res_calls, u.res_tokens, u.res_cost, u.lease_min,
    GREATEST(u.month, p_month), CASE WHEN u.month >= p_month THEN u.voice_used ELSE 0 END
)::quota_users;

-- quota_request_denials lists the request windows that would refuse one
-- more request of u (rolled); 0 is unlimited.
CREATE FUNCTION quota_request_denials(u quota_users, l quota_limits) RETURNS text[]
LANGUAGE sql IMMUTABLE
RETURN array_remove(ARRAY[
    CASE WHEN l.requests_per_minute > 0 AND u.minute_count >= l.requests_per_minute THEN 'requests_per_minute' END,
    CASE WHEN l.requests_per_hour > 0 AND u.hour_count >= l.requests_per_hour THEN 'requests_per_hour' END,
    CASE WHEN l.requests_per_day > 0 AND u.day_requests >= l.requests_per_day THEN 'requests_per_day' END
], NULL);

CREATE OR REPLACE FUNCTION quota_window_denials(u quota_users, lim bigint[]) RETURNS text[]
LANGUAGE sql IMMUTABLE
RETURN quota_request_denials(u, quota_limits_of(lim));

-- quota_budget_denial is the daily budget rule (DESIGN §9): admit iff
-- settled + reserved + estimate <= limit, in numeric so no sum overflows.
-- A refusal is name_inflight when the settled usage alone would admit, so
-- the caller is told to wait for turns in flight, not for tomorrow.
CREATE FUNCTION quota_budget_denial(name text, lim bigint, settled bigint, reserved bigint, est bigint)
RETURNS text
LANGUAGE sql IMMUTABLE
RETURN CASE WHEN lim > 0 AND settled::numeric + reserved + est > lim THEN
           CASE WHEN settled::numeric + est > lim THEN name ELSE name || '_inflight' END END;

-- One request's answer: its position in the batch, its plan, what refused
-- it (empty: admitted, with a ticket) and the user's daily counters after.
CREATE TYPE quota_admission AS (
    ord          int,
    plan         text,
    reasons      text[],
    ticket_id    bigint,
    day_requests bigint,
    day_calls    bigint,
    day_tokens   bigint,
    day_cost     bigint,
    res_calls    bigint,
    res_tokens   bigint,
    res_cost     bigint
);

-- quota_admit_requests admits a batch of chat requests, at most one per
-- user, each decided on its own: plan (the user_plans row if p_plans has
-- it, else the fallback), request windows, daily budgets, concurrency, and
-- the global cap, which admits the first requests in batch order that
-- pass their own limits, as many as the minute has room for. An admitted
-- request counts in every window and gets a ticket; a refused one writes
-- nothing but the reclaim of expired tickets.
CREATE FUNCTION quota_admit_requests(
    p_plans jsonb, p_users text[], p_fallbacks text[],
    p_calls bigint[], p_tokens bigint[], p_cost bigint[],
    p_now timestamptz, p_minute timestamptz, p_hour timestamptz, p_day date,
    p_expires timestamptz, p_global_cap bigint)
RETURNS SETOF quota_admission
LANGUAGE plpgsql
-- Custom plans for statements over array parameters would be made afresh
-- on every call, which costs a small batch about as much as its work.
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    n int := cardinality(p_users);
    found_n int;
    expired int;
    room bigint; -- NULL: no global cap
BEGIN
    -- Admissions commit asynchronously: see docs/quota.md. (A SET clause
    -- would not do: it is undone when the function returns, before commit.)
    PERFORM set_config('synchronous_commit', 'off', true);

    -- Users seen for the first time get their row, then every user's row is
    -- locked, all in one order (two batches sharing users then queue instead
    -- of deadlocking). Each statement below sees the rows as last committed
    -- (a fresh snapshot per statement), and the locks keep them so until
    -- commit. A user twice would be decided twice on the same counters, so
    -- a batch must lock as many rows as it has requests.
    INSERT INTO quota_users (user_id)
    SELECT x FROM unnest(p_users) x ORDER BY x COLLATE "C"
    ON CONFLICT (user_id) DO NOTHING;
    SELECT count(*), count(*) FILTER (WHERE l.lease_min <= p_now) INTO found_n, expired
      FROM (SELECT q.lease_min FROM quota_users q WHERE q.user_id = ANY (p_users)
             ORDER BY q.user_id COLLATE "C" FOR UPDATE) l;
    IF found_n <> n THEN
        RAISE EXCEPTION 'quota_admit_requests: % requests for % users; one request per user', n, found_n;
    END IF;
    IF expired > 0 THEN -- some users have expired tickets: take them off first (see lease_min)
        PERFORM quota_save(quota_reclaim(e, p_now))
           FROM quota_users e WHERE e.user_id = ANY (p_users) AND e.lease_min <= p_now;
    END IF;
    IF p_global_cap > 0 THEN
        room := quota_global_room(p_minute, p_global_cap);
    END IF;

    RETURN QUERY
    WITH plans AS MATERIALIZED (
        SELECT e.key AS name, jsonb_populate_record(NULL::quota_limits, e.value) AS l
          FROM jsonb_each(p_plans) e
    ), req AS MATERIALIZED ( -- each request with its plan's name and limits
        SELECT r.*, p.name, p.l
          FROM unnest(p_users, p_fallbacks, p_calls, p_tokens, p_cost)
               WITH ORDINALITY r(user_id, fallback, calls, tokens, cost, ord)
          JOIN plans p ON p.name = coalesce(
               -- the user_plans row, unless this config lacks its plan (see quota_plan)
               (SELECT up.plan FROM user_plans up WHERE up.user_id = r.user_id AND p_plans ? up.plan),
               r.fallback)
    ), cur AS MATERIALIZED ( -- beside the user's row, windows rolled (the month is not admission's)
        SELECT req.ord::int AS ord, req.user_id, req.calls, req.tokens, req.cost, req.name, req.l,
               quota_roll(q, p_minute, p_hour, p_day, q.month) AS u
          FROM req JOIN quota_users q ON q.user_id = req.user_id
    ), own AS MATERIALIZED ( -- what each request's own limits refuse
        SELECT r.ord, r.user_id, r.calls, r.tokens, r.cost, r.name, r.u,
               quota_request_denials(r.u, r.l) || array_remove(ARRAY[
                   quota_budget_denial('tokens_per_day', (r.l).tokens_per_day, (r.u).day_tokens, (r.u).res_tokens, r.tokens),
                   quota_budget_denial('cost_per_day', (r.l).cost_per_day_micros, (r.u).day_cost, (r.u).res_cost, r.cost),
                   quota_budget_denial('calls_per_day', (r.l).calls_per_day, (r.u).day_calls, (r.u).res_calls, r.calls),
                   CASE WHEN (r.l).concurrent_turns > 0 AND (r.u).leases >= (r.l).concurrent_turns
                        THEN 'concurrent_turns' END
               ], NULL) AS why
          FROM cur r
    ), dec AS MATERIALIZED ( -- the global cap takes the first that pass, in batch order
        SELECT own.*, CASE WHEN cardinality(own.why) > 0 THEN own.why
                           WHEN room IS NOT NULL AND count(*) FILTER (WHERE cardinality(own.why) = 0)
                                OVER (ORDER BY own.ord) > room THEN ARRAY['global_requests_per_minute']
                           ELSE '{}' END AS reasons
          FROM own
    ), tick AS MATERIALIZED ( -- an admitted request gets its ticket id
        SELECT dec.*, cardinality(dec.reasons) = 0 AS ok,
               CASE WHEN cardinality(dec.reasons) = 0 THEN nextval('quota_tickets_id_seq') END AS ticket_id
          FROM dec
    ), upd AS (
        -- Request counts cannot overflow (1e15 per request at most); reservation
        -- sums saturate like settlements (quota_add).
        UPDATE quota_users q
           SET (minute_start, hour_start, day, day_calls, day_tokens, day_cost,
                minute_count, hour_count, day_requests, leases,
                res_calls, res_tokens, res_cost, lease_min)
             = ((t.u).minute_start, (t.u).hour_start, (t.u).day, (t.u).day_calls, (t.u).day_tokens, (t.u).day_cost,
                (t.u).minute_count + 1, (t.u).hour_count + 1, (t.u).day_requests + 1, (t.u).leases + 1,
                quota_add((t.u).res_calls, t.calls), quota_add((t.u).res_tokens, t.tokens),
                quota_add((t.u).res_cost, t.cost), LEAST((t.u).lease_min, p_expires))
          FROM tick t
         WHERE t.ok AND q.user_id = t.user_id
    ), glob AS ( -- the admitted requests fit in the room
        UPDATE quota_global g SET count = g.count + (SELECT count(*) FROM tick WHERE tick.ok)
         WHERE room IS NOT NULL AND g.window_start = p_minute
    ), ins AS (
        INSERT INTO quota_tickets (id, user_id, expires_at, res_calls, res_tokens, res_cost)
        OVERRIDING SYSTEM VALUE
        SELECT t.ticket_id, t.user_id, p_expires, t.calls, t.tokens, t.cost FROM tick t WHERE t.ok
    )
    SELECT t.ord, t.name, t.reasons, t.ticket_id,
           (t.u).day_requests + t.ok::int, (t.u).day_calls, (t.u).day_tokens, (t.u).day_cost,
           CASE WHEN t.ok THEN quota_add((t.u).res_calls, t.calls) ELSE (t.u).res_calls END,
           CASE WHEN t.ok THEN quota_add((t.u).res_tokens, t.tokens) ELSE (t.u).res_tokens END,
           CASE WHEN t.ok THEN quota_add((t.u).res_cost, t.cost) ELSE (t.u).res_cost END
      FROM tick t;
END $$;

-- The previous release's entry point, kept for its replicas during a
-- rollout (see the top of this file): the same arguments, and rows with the
-- same columns, now of the named type.
DROP FUNCTION quota_admit_batch(text[], text[], text[], bigint[], timestamptz, timestamptz, timestamptz, date,
                                timestamptz, bigint[], bigint[], bigint[], bigint);
CREATE FUNCTION quota_admit_batch(p_users text[], p_fallbacks text[], p_names text[], p_limits bigint[],
    p_now timestamptz, p_minute timestamptz, p_hour timestamptz, p_day date, p_expires timestamptz,
    p_calls bigint[], p_tokens bigint[], p_cost bigint[], p_global_cap bigint)
RETURNS SETOF quota_admission
LANGUAGE sql AS $$
SELECT * FROM quota_admit_requests(quota_plans_of(p_names, p_limits), p_users, p_fallbacks,
                                   p_calls, p_tokens, p_cost,
                                   p_now, p_minute, p_hour, p_day, p_expires, p_global_cap)
$$;

-- Nothing calls the single admission any more (see the top of this file).
DROP FUNCTION quota_admit(text, text, text[], bigint[], timestamptz, timestamptz, timestamptz, date, date,
                          timestamptz, bigint, bigint, bigint, bigint);
