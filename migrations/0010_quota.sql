-- Quotas (DESIGN §9). Every counter of a user lives in one row of
-- quota_users, and every function below locks that row first, so all of a
-- user's checks and increments are serialised by PostgreSQL across any
-- number of replicas. The clock is always a parameter (p_now, window starts)
-- so that tests can move time; nothing here reads now().
--
-- Lock order, to keep deadlocks impossible: quota_users row → that user's
-- quota_tickets / quota_voice rows → the quota_global row.

CREATE TABLE quota_users (
    user_id      text PRIMARY KEY,
    -- Fixed UTC windows: a start that is not the current window's start
    -- means the count belongs to a past window and reads as 0.
    minute_start timestamptz NOT NULL DEFAULT '-infinity',
    minute_count bigint      NOT NULL DEFAULT 0,
    hour_start   timestamptz NOT NULL DEFAULT '-infinity',
    hour_count   bigint      NOT NULL DEFAULT 0,
    -- The UTC day of the day_* counters: requests, and settled usage.
    day          date        NOT NULL DEFAULT '-infinity',
    day_requests bigint      NOT NULL DEFAULT 0,
    day_calls    bigint      NOT NULL DEFAULT 0,
    day_tokens   bigint      NOT NULL DEFAULT 0,
    day_cost     bigint      NOT NULL DEFAULT 0,
    -- Sums over this user's quota_tickets rows (live or expired but not yet
    -- reclaimed): concurrency leases and in-flight reservations.
    leases       bigint      NOT NULL DEFAULT 0,
    res_calls    bigint      NOT NULL DEFAULT 0,
    res_tokens   bigint      NOT NULL DEFAULT 0,
    res_cost     bigint      NOT NULL DEFAULT 0,
    -- No ticket of this user expires before lease_min (a lower bound:
    -- renewals only move expiries later), so admissions look for expired
    -- tickets only once it has passed.
    lease_min    timestamptz NOT NULL DEFAULT 'infinity',
    -- The UTC month (its first day) of voice_used, settled voice seconds.
    month        date        NOT NULL DEFAULT '-infinity',
    voice_used   bigint      NOT NULL DEFAULT 0
) WITH (fillfactor = 70); -- room for HOT updates: every admission rewrites the row

-- One row per admitted chat turn: its concurrency lease and its reservation.
CREATE TABLE quota_tickets (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    text        NOT NULL,
    expires_at timestamptz NOT NULL,
    res_calls  bigint      NOT NULL,
    res_tokens bigint      NOT NULL,
    res_cost   bigint      NOT NULL
);
CREATE INDEX quota_tickets_user_expiry ON quota_tickets (user_id, expires_at);

-- One row per active voice session: its reserved seconds.
CREATE TABLE quota_voice (
    session_id text PRIMARY KEY,
    user_id    text        NOT NULL,
    reserved_s bigint      NOT NULL,
    month      date        NOT NULL, -- the month the seconds are charged to
    started_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL  -- after this, reclaimed and charged in full
);
CREATE INDEX quota_voice_user ON quota_voice (user_id, expires_at);

-- The optional global requests-per-minute window, one row per minute.
CREATE TABLE quota_global (
    window_start timestamptz PRIMARY KEY,
    count        bigint NOT NULL
);

-- a + b without bigint overflow: counters saturate instead of failing a
-- settlement (a lost usage record would be worse than a capped counter).
CREATE FUNCTION quota_add(a bigint, b bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN LEAST(GREATEST(a::numeric + b::numeric, 0), 9223372036854775807)::bigint;

-- quota_lock_user returns the user's row, locked, creating it if needed.
CREATE FUNCTION quota_lock_user(p_user text) RETURNS quota_users
LANGUAGE plpgsql AS $$
DECLARE
    u quota_users;
BEGIN
    SELECT * INTO u FROM quota_users WHERE user_id = p_user FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO quota_users (user_id) VALUES (p_user) ON CONFLICT (user_id) DO NOTHING;
        SELECT * INTO u FROM quota_users WHERE user_id = p_user FOR UPDATE;
    END IF;
    RETURN u;
END $$;

-- quota_plan resolves the user's plan (DESIGN §4: user_plans row → claim →
-- default; the caller passes claim-or-default as p_fallback) and returns it
-- with its limits. p_limits holds 10 limits per plan, in p_names order:
-- rpm, rph, rpd, tokens/day, cost/day, calls/day, concurrent turns,
-- voice s/month, max session s, voice sessions.
CREATE FUNCTION quota_plan(p_user text, p_fallback text, p_names text[], p_limits bigint[],
                           OUT plan text, OUT lim bigint[])
LANGUAGE plpgsql STABLE AS $$
DECLARE
    i int;
BEGIN
    SELECT up.plan INTO plan FROM user_plans up WHERE up.user_id = p_user;
    i := array_position(p_names, plan);
    IF i IS NULL THEN -- no row, or a plan this replica's config does not know
        plan := p_fallback;
        i := array_position(p_names, plan);
    END IF;
    lim := p_limits[(i - 1) * 10 + 1 : i * 10];
END $$;

-- quota_reclaim drops the user's expired tickets and returns u with their
-- leases and reservations taken off. The caller holds u's lock and writes u.
CREATE FUNCTION quota_reclaim(u quota_users, p_now timestamptz) RETURNS quota_users
LANGUAGE plpgsql AS $$
DECLARE
    n bigint; c bigint; t bigint; k bigint;
BEGIN
    WITH gone AS (
        DELETE FROM quota_tickets WHERE user_id = u.user_id AND expires_at <= p_now
        RETURNING res_calls, res_tokens, res_cost)
    SELECT count(*), coalesce(sum(res_calls), 0), coalesce(sum(res_tokens), 0), coalesce(sum(res_cost), 0)
      INTO n, c, t, k FROM gone;
    u.lease_min := coalesce((SELECT min(expires_at) FROM quota_tickets WHERE user_id = u.user_id), 'infinity');
    IF n > 0 THEN
        u.leases := GREATEST(u.leases - n, 0);
        u.res_calls := GREATEST(u.res_calls - c, 0);
        u.res_tokens := GREATEST(u.res_tokens - t, 0);
        u.res_cost := GREATEST(u.res_cost - k, 0);
    END IF;
    RETURN u;
END $$;

-- quota_roll zeroes the counters of windows that have ended.
CREATE FUNCTION quota_roll(u quota_users, p_minute timestamptz, p_hour timestamptz, p_day date, p_month date)
RETURNS quota_users
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF u.minute_start <> p_minute THEN u.minute_start := p_minute; u.minute_count := 0; END IF;
    IF u.hour_start <> p_hour THEN u.hour_start := p_hour; u.hour_count := 0; END IF;
    IF u.day <> p_day THEN
        u.day := p_day; u.day_requests := 0; u.day_calls := 0; u.day_tokens := 0; u.day_cost := 0;
    END IF;
    IF u.month <> p_month THEN u.month := p_month; u.voice_used := 0; END IF;
    RETURN u;
END $$;

-- quota_window_denials lists the request windows that would refuse one more
-- request. lim is a plan's limits (see quota_plan); 0 is unlimited.
CREATE FUNCTION quota_window_denials(u quota_users, lim bigint[]) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
SELECT array_remove(ARRAY[
    CASE WHEN lim[1] > 0 AND u.minute_count >= lim[1] THEN 'requests_per_minute' END,
    CASE WHEN lim[2] > 0 AND u.hour_count >= lim[2] THEN 'requests_per_hour' END,
    CASE WHEN lim[3] > 0 AND u.day_requests >= lim[3] THEN 'requests_per_day' END
], NULL)
$$;

-- quota_count_request adds one request to every window of u.
CREATE FUNCTION quota_count_request(u quota_users) RETURNS quota_users
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    u.minute_count := quota_add(u.minute_count, 1);
    u.hour_count := quota_add(u.hour_count, 1);
    u.day_requests := quota_add(u.day_requests, 1);
    RETURN u;
END $$;

-- quota_take_global counts one request against the global per-minute cap,
-- atomically; false means the cap is reached. p_cap 0 is off.
CREATE FUNCTION quota_take_global(p_minute timestamptz, p_cap bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF p_cap <= 0 THEN
        RETURN true;
    END IF;
    INSERT INTO quota_global AS g (window_start, count) VALUES (p_minute, 1)
    ON CONFLICT (window_start) DO UPDATE SET count = g.count + 1 WHERE g.count < p_cap;
    RETURN FOUND;
END $$;

-- quota_save writes u back (the caller holds its lock).
CREATE FUNCTION quota_save(u quota_users) RETURNS void
LANGUAGE sql AS $$
UPDATE quota_users SET
    minute_start = u.minute_start, minute_count = u.minute_count,
    hour_start = u.hour_start, hour_count = u.hour_count,
    day = u.day, day_requests = u.day_requests, day_calls = u.day_calls,
    day_tokens = u.day_tokens, day_cost = u.day_cost,
    leases = u.leases, res_calls = u.res_calls, res_tokens = u.res_tokens, res_cost = u.res_cost,
    lease_min = u.lease_min, month = u.month, voice_used = u.voice_used
WHERE user_id = u.user_id
$$;
