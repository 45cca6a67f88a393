-- quota_clock is the instant a quota statement works at and the fixed UTC
-- windows that contain it: p_now when the caller passes one (tests move
-- time), otherwise the database's clock. Replicas' own clocks may be skewed,
-- and a replica a second ahead would reset the minute window the others are
-- still counting in; with one clock every replica agrees on every window
-- and on every lease and reservation expiry. The windows are computed here
-- only, in UTC whatever the session's TimeZone, and returned to the caller
-- for its retry_after_s and resets_at.
--
-- The body is a string, so statement_timestamp() is looked up when a
-- statement runs (the clock test replaces it through search_path).
CREATE FUNCTION quota_clock(p_now timestamptz,
    OUT now timestamptz, OUT minute timestamptz, OUT hour timestamptz, OUT day date, OUT month date)
LANGUAGE sql STABLE AS $$
SELECT t, date_trunc('minute', t, 'UTC'), date_trunc('hour', t, 'UTC'),
       (t AT TIME ZONE 'UTC')::date, date_trunc('month', t AT TIME ZONE 'UTC')::date
FROM (SELECT coalesce(p_now, statement_timestamp()) AS t) c
$$;
