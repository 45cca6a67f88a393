-- quota_admit is one chat admission in one statement: plan resolution, the
-- request windows, the global cap, the concurrency lease and the daily
-- reservation. It refuses with the names of every limit that would be
-- exceeded (reasons) and then writes nothing but the reclaim of expired
-- tickets; it admits by counting the request and inserting the ticket.
CREATE FUNCTION quota_admit(
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
    IF u.minute_start <> p_minute THEN u.minute_start := p_minute; u.minute_count := 0; END IF;
    IF u.hour_start <> p_hour THEN u.hour_start := p_hour; u.hour_count := 0; END IF;
    IF u.day <> p_day THEN
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

-- quota_settle ends a ticket: it releases the lease and the reservation (if
-- the ticket was not already reclaimed) and adds the actual usage to the
-- current UTC day. Usage is added even for a reclaimed ticket, so a turn
-- that outlived its lease is still counted.
CREATE FUNCTION quota_settle(
    p_user text, p_ticket bigint, p_now timestamptz,
    p_minute timestamptz, p_hour timestamptz, p_day date, p_month date,
    p_calls bigint, p_tokens bigint, p_cost bigint,
    OUT released boolean,
    OUT day_requests bigint, OUT day_calls bigint, OUT day_tokens bigint, OUT day_cost bigint,
    OUT res_calls bigint, OUT res_tokens bigint, OUT res_cost bigint)
LANGUAGE plpgsql AS $$
DECLARE
    u quota_users;
    t quota_tickets;
BEGIN
    u := quota_lock_user(p_user);
    u := quota_roll(u, p_minute, p_hour, p_day, p_month);
    DELETE FROM quota_tickets WHERE id = p_ticket AND user_id = p_user RETURNING * INTO t;
    released := FOUND;
    IF released THEN
        u.leases := GREATEST(u.leases - 1, 0);
        u.res_calls := GREATEST(u.res_calls - t.res_calls, 0);
        u.res_tokens := GREATEST(u.res_tokens - t.res_tokens, 0);
        u.res_cost := GREATEST(u.res_cost - t.res_cost, 0);
    END IF;
    u.day_calls := quota_add(u.day_calls, p_calls);
    u.day_tokens := quota_add(u.day_tokens, p_tokens);
    u.day_cost := quota_add(u.day_cost, p_cost);
    PERFORM quota_save(u);
    day_requests := u.day_requests; day_calls := u.day_calls;
    day_tokens := u.day_tokens; day_cost := u.day_cost;
    res_calls := u.res_calls; res_tokens := u.res_tokens; res_cost := u.res_cost;
END $$;

-- quota_reclaim_user is the cleanup's unit of work: forget one user's
-- expired tickets and voice reservations. It skips a user whose row is
-- locked (an admission there reclaims anyway), so it never waits.
CREATE FUNCTION quota_reclaim_user(p_user text, p_now timestamptz, p_month date) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    u quota_users;
BEGIN
    SELECT * INTO u FROM quota_users WHERE user_id = p_user FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        -- Locked by someone else, or tickets without a user row (cannot
        -- happen through these functions); drop such orphans only.
        DELETE FROM quota_tickets t WHERE t.user_id = p_user AND t.expires_at <= p_now
          AND NOT EXISTS (SELECT 1 FROM quota_users q WHERE q.user_id = p_user);
        RETURN;
    END IF;
    u := quota_reclaim(u, p_now);
    u := quota_reclaim_voice(u, p_now, p_month);
    PERFORM quota_save(u);
END $$;
