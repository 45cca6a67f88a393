-- Monthly voice seconds (DESIGN §6, §9). A voice start reserves
-- min(remaining, max session) seconds as a quota_voice row; its end charges
-- what was used (capped at the reservation) and drops the row, which frees
-- the rest. A reservation never ended is charged in full once it expires:
-- the voice sweeper closes such sessions at their reservation anyway.

-- quota_reclaim_voice charges and drops u's expired voice reservations and
-- moves u to p_month. The caller holds u's lock and writes u.
CREATE FUNCTION quota_reclaim_voice(u quota_users, p_now timestamptz, p_month date) RETURNS quota_users
LANGUAGE plpgsql AS $$
DECLARE
    s bigint;
BEGIN
    IF u.month <> p_month THEN u.month := p_month; u.voice_used := 0; END IF;
    WITH gone AS (
        DELETE FROM quota_voice WHERE user_id = u.user_id AND expires_at <= p_now
        RETURNING reserved_s, month)
    SELECT coalesce(sum(reserved_s) FILTER (WHERE month = p_month), 0) INTO s FROM gone;
    u.voice_used := quota_add(u.voice_used, s);
    RETURN u;
END $$;

-- quota_voice_reserve starts a voice session in one statement: plan, the
-- request windows (a start is a request, DESIGN §9), the global cap, the
-- active-session limit and the seconds reservation.
CREATE FUNCTION quota_voice_reserve(
    p_user text, p_fallback text, p_names text[], p_limits bigint[],
    p_now timestamptz, p_minute timestamptz, p_hour timestamptz, p_day date, p_month date,
    p_session text, p_min_s bigint, p_default_max_s bigint, p_grace_s bigint, p_global_cap bigint,
    OUT plan text, OUT reasons text[], OUT active_session text, OUT granted bigint,
    OUT voice_used bigint, OUT voice_reserved bigint, OUT expires_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    lim bigint[];
    u quota_users;
    was quota_users;
    active bigint;
    remaining numeric;
BEGIN
    SELECT r.plan, r.lim INTO plan, lim FROM quota_plan(p_user, p_fallback, p_names, p_limits) r;
    u := quota_lock_user(p_user);
    u := quota_roll(u, p_minute, p_hour, p_day, p_month);
    was := u;
    u := quota_reclaim_voice(u, p_now, p_month);
    SELECT count(*), coalesce(sum(v.reserved_s) FILTER (WHERE v.month = p_month), 0),
           (array_agg(v.session_id ORDER BY v.started_at DESC))[1]
      INTO active, voice_reserved, active_session
      FROM quota_voice v WHERE v.user_id = p_user;

    reasons := quota_window_denials(u, lim);
    IF lim[10] > 0 AND active >= lim[10] THEN
        reasons := reasons || 'voice_sessions'::text;
    END IF;
    IF lim[8] > 0 THEN
        remaining := GREATEST(lim[8]::numeric - u.voice_used - voice_reserved, 0);
    END IF;
    -- LEAST ignores NULL: an unlimited month leaves only the session cap.
    granted := LEAST(remaining, CASE WHEN lim[9] > 0 THEN lim[9] ELSE p_default_max_s END)::bigint;
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

-- quota_voice_settle ends a voice session: it charges min(used, reserved)
-- to the reservation's month and frees the rest. ended is false when the
-- reservation is gone (already ended, or reclaimed after expiry).
CREATE FUNCTION quota_voice_settle(
    p_user text, p_session text, p_used_s bigint, p_now timestamptz, p_month date,
    OUT ended boolean, OUT reserved bigint, OUT charged bigint, OUT voice_used bigint)
LANGUAGE plpgsql AS $$
DECLARE
    u quota_users;
    m date;
BEGIN
    u := quota_lock_user(p_user);
    u := quota_reclaim_voice(u, p_now, p_month);
    DELETE FROM quota_voice v WHERE v.session_id = p_session AND v.user_id = p_user
    RETURNING v.reserved_s, v.month INTO reserved, m;
    ended := reserved IS NOT NULL;
    charged := 0;
    IF ended THEN
        charged := LEAST(GREATEST(p_used_s, 0), reserved);
        -- A session that crossed into a new month is charged to the month
        -- it started in; that month's total is already closed.
        IF m = u.month THEN
            u.voice_used := quota_add(u.voice_used, charged);
        END IF;
    END IF;
    PERFORM quota_save(u);
    voice_used := u.voice_used;
END $$;
