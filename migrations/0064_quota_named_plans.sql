-- Voice and the usage report read plans as named limits too. After 0063
-- only they still took the positional layout (quota_plan: 10 limits per
-- plan, by position); now every caller passes the same JSON of named
-- limits, read into quota_limits.
--
-- Expand step of a rollout, as in 0063: replicas of the previous release
-- still call quota_voice_reserve with positional arrays and run the report
-- through quota_plan, so both keep their signatures; the old
-- quota_voice_reserve becomes a thin adapter onto the new one, so old and
-- new replicas share one rule. A later migration drops the positional
-- functions once no replica calls them.

-- quota_plan_of resolves the user's plan (DESIGN §4: the user_plans row,
-- unless this config lacks its plan, else claim-or-default, which the
-- caller passes as p_fallback) and returns it with its limits.
CREATE FUNCTION quota_plan_of(p_user text, p_fallback text, p_plans jsonb,
                              OUT plan text, OUT lim quota_limits)
LANGUAGE sql STABLE
RETURN (SELECT ROW(n.name, jsonb_populate_record(NULL::quota_limits, p_plans -> n.name))
          FROM (SELECT coalesce((SELECT up.plan FROM user_plans up
                                  WHERE up.user_id = p_user AND p_plans ? up.plan), p_fallback) AS name) n);

-- quota_voice_reserve starts a voice session in one statement: plan, the
-- request windows (a start is a request, DESIGN §9), the global cap, the
-- active-session limit and the seconds reservation.
CREATE FUNCTION quota_voice_reserve(
    p_user text, p_fallback text, p_plans jsonb,
    p_now timestamptz, p_minute timestamptz, p_hour timestamptz, p_day date, p_month date,
    p_session text, p_min_s bigint, p_default_max_s bigint, p_grace_s bigint, p_global_cap bigint,
    OUT plan text, OUT reasons text[], OUT active_session text, OUT granted bigint,
    OUT voice_used bigint, OUT voice_reserved bigint, OUT expires_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    pl record;
    l quota_limits;
    u quota_users;
    was quota_users;
    active bigint;
    remaining numeric;
BEGIN
    SELECT r.plan, r.lim INTO pl FROM quota_plan_of(p_user, p_fallback, p_plans) r;
    plan := pl.plan;
    l := pl.lim;
    u := quota_lock_user(p_user);
    u := quota_roll(u, p_minute, p_hour, p_day, p_month);
    was := u;
    u := quota_reclaim_voice(u, p_now, p_month);
    SELECT count(*), coalesce(sum(v.reserved_s) FILTER (WHERE v.month = p_month), 0),
           (array_agg(v.session_id ORDER BY v.started_at DESC))[1]
      INTO active, voice_reserved, active_session
      FROM quota_voice v WHERE v.user_id = p_user;

    reasons := quota_request_denials(u, l);
    IF l.voice_sessions > 0 AND active >= l.voice_sessions THEN
        reasons := reasons || 'voice_sessions'::text;
    END IF;
    IF l.voice_seconds_per_month > 0 THEN
        remaining := GREATEST(l.voice_seconds_per_month::numeric - u.voice_used - voice_reserved, 0);
    END IF;
    -- LEAST ignores NULL: an unlimited month leaves only the session cap.
    granted := LEAST(remaining, CASE WHEN l.max_session_s > 0 THEN l.max_session_s ELSE p_default_max_s END)::bigint;
    IF granted < p_min_s THEN
        reasons := reasons || 'voice_seconds_per_month'::text;
    END IF;
    IF cardinality(reasons) = 0 AND NOT quota_take_global(p_minute, p_global_cap) THEN
        reasons := ARRAY['global_requests_per_minute'];
    END IF;

    IF cardinality(reasons) = 0 THEN
        u := quota_count_request(u);
        expires_at := p_now + make_interval(secs => granted + p_grace_s);
        INSERT INTO quota_voice (session_id, user_id, reserved_s, month, started_at, expires_at)
        VALUES (p_session, p_user, granted, p_month, p_now, expires_at);
        voice_reserved := voice_reserved + granted;
        PERFORM quota_save(u);
    ELSE
        granted := 0;
        IF u.voice_used <> was.voice_used THEN
            PERFORM quota_save(u); -- keep the charge of expired reservations
        END IF;
    END IF;
    voice_used := u.voice_used;
END $$;

-- The positional form, for replicas of the previous release only.
CREATE OR REPLACE FUNCTION quota_voice_reserve(
    p_user text, p_fallback text, p_names text[], p_limits bigint[],
    p_now timestamptz, p_minute timestamptz, p_hour timestamptz, p_day date, p_month date,
    p_session text, p_min_s bigint, p_default_max_s bigint, p_grace_s bigint, p_global_cap bigint,
    OUT plan text, OUT reasons text[], OUT active_session text, OUT granted bigint,
    OUT voice_used bigint, OUT voice_reserved bigint, OUT expires_at timestamptz)
LANGUAGE sql AS $$
SELECT * FROM quota_voice_reserve(p_user, p_fallback, quota_plans_of(p_names, p_limits),
    p_now, p_minute, p_hour, p_day, p_month, p_session, p_min_s, p_default_max_s, p_grace_s, p_global_cap)
$$;
