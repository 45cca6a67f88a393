-- Voice sessions that cross into a new month, and ends that come again.
--
-- A session's seconds are taken to run from its start: those that fall in
-- the current UTC month are charged to it, whatever month the session
-- started in. (0012 charged a session only when it started in the current
-- month, so one that crossed the 1st was charged nowhere.) Seconds before
-- the 1st belong to a month that is over; quota_users keeps no counter for
-- it, since it limits nothing any more.
--
-- Every end, by the session's owner or by the reclaim of an expired
-- reservation, leaves a row in quota_voice_ended, kept a day (the sweep
-- deletes older ones), so a later end is told what the first one charged:
-- an end retried after a lost reply changes nothing, and an end after the
-- reclaim learns the session was charged in full.
CREATE TABLE quota_voice_ended (
    session_id text PRIMARY KEY,
    user_id    text        NOT NULL,
    reclaimed  boolean     NOT NULL, -- expired unended and charged in full
    reserved_s bigint      NOT NULL,
    charged_s  bigint      NOT NULL,
    ended_at   timestamptz NOT NULL
);
CREATE INDEX quota_voice_ended_at ON quota_voice_ended (ended_at);

-- quota_voice_in_month is how many of p_seconds, run from p_started, fall
-- in month p_month (its first day) or later; a part second counts whole.
CREATE FUNCTION quota_voice_in_month(p_started timestamptz, p_seconds bigint, p_month date) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
    WHEN p_started >= p_month::timestamp AT TIME ZONE 'UTC' THEN p_seconds
    ELSE LEAST(GREATEST(ceil(extract(epoch FROM p_started + make_interval(secs => p_seconds)
                                             - p_month::timestamp AT TIME ZONE 'UTC')), 0), p_seconds)::bigint
END;

-- quota_reclaim_voice charges and drops u's expired voice reservations and
-- moves u to p_month. The caller holds u's lock and writes u. (Replaced in
-- place: every caller, of this release or the previous one, gets the month
-- rule above.)
CREATE OR REPLACE FUNCTION quota_reclaim_voice(u quota_users, p_now timestamptz, p_month date) RETURNS quota_users
LANGUAGE plpgsql AS $$
DECLARE
    s bigint;
BEGIN
    IF u.month <> p_month THEN u.month := p_month; u.voice_used := 0; END IF;
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

-- quota_voice_end ends a voice session: it charges min(used, reserved), the
-- part in the current month to it, and frees the rest. outcome is 'ended'
-- (this call charged it), 'ended_before' (an earlier end did: reserved and
-- charged are that end's), 'reclaimed' (it expired unended and was charged
-- in full) or 'unknown' (no such reservation, or ended over a day ago).
CREATE FUNCTION quota_voice_end(
    p_user text, p_session text, p_used_s bigint, p_now timestamptz, p_month date,
    OUT outcome text, OUT reserved bigint, OUT charged bigint, OUT voice_used bigint)
LANGUAGE plpgsql AS $$
DECLARE
    u quota_users;
    started timestamptz;
    e quota_voice_ended;
BEGIN
    u := quota_lock_user(p_user);
    u := quota_reclaim_voice(u, p_now, p_month);
    DELETE FROM quota_voice v WHERE v.session_id = p_session AND v.user_id = p_user
    RETURNING v.reserved_s, v.started_at INTO reserved, started;
    IF reserved IS NOT NULL THEN
        outcome := 'ended';
        charged := LEAST(GREATEST(p_used_s, 0), reserved);
        u.voice_used := quota_add(u.voice_used, quota_voice_in_month(started, charged, p_month));
        INSERT INTO quota_voice_ended (session_id, user_id, reclaimed, reserved_s, charged_s, ended_at)
        VALUES (p_session, p_user, false, reserved, charged, p_now)
        ON CONFLICT (session_id) DO UPDATE SET user_id = EXCLUDED.user_id, reclaimed = false,
            reserved_s = EXCLUDED.reserved_s, charged_s = EXCLUDED.charged_s, ended_at = EXCLUDED.ended_at;
    ELSE
        SELECT * INTO e FROM quota_voice_ended x WHERE x.session_id = p_session AND x.user_id = p_user;
        IF FOUND THEN
            outcome := CASE WHEN e.reclaimed THEN 'reclaimed' ELSE 'ended_before' END;
            reserved := e.reserved_s;
            charged := e.charged_s;
        ELSE
            outcome := 'unknown';
        END IF;
    END IF;
    PERFORM quota_save(u);
    voice_used := u.voice_used;
END $$;

-- quota_voice_settle keeps the signature replicas of the previous release
-- call during a rollout (expand/contract), with the month rule above. As
-- before, only the first end reports ended.
CREATE OR REPLACE FUNCTION quota_voice_settle(
    p_user text, p_session text, p_used_s bigint, p_now timestamptz, p_month date,
    OUT ended boolean, OUT reserved bigint, OUT charged bigint, OUT voice_used bigint)
LANGUAGE sql AS $$
SELECT e.outcome = 'ended', CASE WHEN e.outcome = 'ended' THEN e.reserved END,
       CASE WHEN e.outcome = 'ended' THEN e.charged ELSE 0 END, e.voice_used
FROM quota_voice_end(p_user, p_session, p_used_s, p_now, p_month) e
$$;
