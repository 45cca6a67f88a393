-- Keyed admission (issue 44): an admission can commit and its reply be
-- lost (a failover between the commit and the answer); the client's retry
-- was then a second request, counted twice, while the first held its
-- concurrency lease and reservation until the lease TTL. A request may now
-- carry a key (the client's Idempotency-Key): a retry whose key names a
-- live ticket of the same user is answered with that ticket, admitted,
-- and counts nothing again: no request, no lease, no reservation, no room
-- under the global cap. Settlement was keyed by its ticket already (0014).
--
-- How long a key lives: as long as its ticket row, no longer. The row goes
-- when the ticket is settled (the unit ended: answered or failed) or when
-- its lease lapses unrenewed and the next admission of the user reclaims
-- it (LeaseTTL, 60 s, after the last renewal; a lost reply's ticket is
-- never renewed). A key used again after that is a new request, admitted
-- and counted as one. Deliberately: quota keeps no answer to give back,
-- so refusing the key would leave its client no way to get one, and a
-- unit that ended did its work; the work a new run does is new work. An
-- answer to replay is the endpoint's to keep, and chat keeps it
-- (chat_idempotency: a finished turn is replayed before admission, a
-- failed one drops its key so its retry runs anew, docs/chat.md).
ALTER TABLE quota_tickets
    ADD COLUMN admit_key text,
    -- Whether the caller of the ticket's last admission answered that it
    -- got the ticket (quota.Service.Admit "takes" a keyed ticket): only a
    -- ticket nobody took is handed to a retry. Without this, two requests
    -- sent at once with one key would share one ticket: one request and one
    -- concurrency slot for two units of work, and, settlement being keyed
    -- by ticket, one of them never charged.
    ADD COLUMN admit_taken boolean NOT NULL DEFAULT false,
    -- Bumped by each admission that hands the ticket to a retry: a take
    -- names the generation its admission answered, so of two attempts
    -- that both got the ticket before either took it, only the later one
    -- can, and the earlier one stands aside.
    ADD COLUMN admit_gen int NOT NULL DEFAULT 0;

-- One live ticket per (user, key). Admissions of a user are serialised by
-- the user's row lock, and a keyed admission looks for the ticket first, so
-- this never refuses a correct batch; it is the rule's guard. The table
-- holds only tickets in flight, so the index is built at once.
CREATE UNIQUE INDEX quota_tickets_admit_key ON quota_tickets (user_id, admit_key) WHERE admit_key IS NOT NULL;

-- One keyed request's answer: quota_admission's columns and the ticket's
-- generation, which the caller's take names.
CREATE TYPE quota_keyed_admission AS (
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
    res_cost     bigint,
    ticket_gen   int
);

-- quota_admit_requests with keys: p_keys holds each request's key, NULL
-- (or '') for an unkeyed request. A keyed request whose key names a live
-- ticket of its user that no caller took is answered with that ticket:
-- reasons empty, the counters as they stand, and the ticket renewed (its
-- lease at least p_expires, its generation bumped, and admitted_in this
-- transaction, so quota_admitted_now is true for it and the request's
-- riders run, 0084). Limits are not checked again: the request was
-- admitted once. A key whose live ticket was taken is refused with
-- admit_key_in_use and counts nothing: its first request still runs.
-- Otherwise the rule is 0063's, and an admitted keyed request's ticket
-- keeps the key.
CREATE FUNCTION quota_admit_requests(
    p_plans jsonb, p_users text[], p_fallbacks text[], p_keys text[],
    p_calls bigint[], p_tokens bigint[], p_cost bigint[],
    p_now timestamptz, p_minute timestamptz, p_hour timestamptz, p_day date,
    p_expires timestamptz, p_global_cap bigint)
RETURNS SETOF quota_keyed_admission
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
    -- commit: a keyed request sees the ticket of any admission of its user
    -- that committed before it. A user twice would be decided twice on the
    -- same counters, so a batch must lock as many rows as it has requests.
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
    ), req AS MATERIALIZED ( -- each request with its plan's name and limits, and its key's live ticket
        SELECT r.user_id, nullif(r.admit_key, '') AS admit_key, r.calls, r.tokens, r.cost, r.ord, p.name, p.l,
               k.id AS held, k.admit_taken AS taken, k.admit_gen AS gen
          FROM unnest(p_users, p_fallbacks, p_keys, p_calls, p_tokens, p_cost)
               WITH ORDINALITY r(user_id, fallback, admit_key, calls, tokens, cost, ord)
          JOIN plans p ON p.name = coalesce(
               -- the user_plans row, unless this config lacks its plan (see quota_plan)
               (SELECT up.plan FROM user_plans up WHERE up.user_id = r.user_id AND p_plans ? up.plan),
               r.fallback)
          LEFT JOIN quota_tickets k ON k.user_id = r.user_id AND k.admit_key = nullif(r.admit_key, '')
    ), cur AS MATERIALIZED ( -- beside the user's row, windows rolled (the month is not admission's)
        SELECT req.ord::int AS ord, req.user_id, req.admit_key, req.held, req.taken, req.gen, req.calls, req.tokens, req.cost,
               req.name, req.l, quota_roll(q, p_minute, p_hour, p_day, q.month) AS u
          FROM req JOIN quota_users q ON q.user_id = req.user_id
    ), own AS MATERIALIZED ( -- what each request's own limits refuse; a held key, nothing, or that it is taken
        SELECT r.ord, r.user_id, r.admit_key, r.held, r.gen, r.calls, r.tokens, r.cost, r.name, r.u,
               CASE WHEN r.taken THEN ARRAY['admit_key_in_use']
                    WHEN r.held IS NOT NULL THEN '{}'::text[] ELSE
               quota_request_denials(r.u, r.l) || array_remove(ARRAY[
                   quota_budget_denial('tokens_per_day', (r.l).tokens_per_day, (r.u).day_tokens, (r.u).res_tokens, r.tokens),
                   quota_budget_denial('cost_per_day', (r.l).cost_per_day_micros, (r.u).day_cost, (r.u).res_cost, r.cost),
                   quota_budget_denial('calls_per_day', (r.l).calls_per_day, (r.u).day_calls, (r.u).res_calls, r.calls),
                   CASE WHEN (r.l).concurrent_turns > 0 AND (r.u).leases >= (r.l).concurrent_turns
                        THEN 'concurrent_turns' END
               ], NULL) END AS why
          FROM cur r
    ), dec AS MATERIALIZED ( -- the global cap takes the first new ones that pass, in batch order
        SELECT own.*, CASE WHEN cardinality(own.why) > 0 THEN own.why
                           WHEN own.held IS NOT NULL THEN '{}'
                           WHEN room IS NOT NULL AND count(*) FILTER (WHERE cardinality(own.why) = 0 AND own.held IS NULL)
                                OVER (ORDER BY own.ord) > room THEN ARRAY['global_requests_per_minute']
                           ELSE '{}' END AS reasons
          FROM own
    ), tick AS MATERIALIZED ( -- a newly admitted request gets its ticket id, a held key its ticket's
        SELECT dec.*, cardinality(dec.reasons) = 0 AND dec.held IS NULL AS ok,
               cardinality(dec.reasons) = 0 AND dec.held IS NOT NULL AS again,
               CASE WHEN cardinality(dec.reasons) > 0 THEN NULL
                    WHEN dec.held IS NOT NULL THEN dec.held
                    ELSE nextval('quota_tickets_id_seq') END AS ticket_id
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
        INSERT INTO quota_tickets (id, user_id, expires_at, res_calls, res_tokens, res_cost, admit_key)
        OVERRIDING SYSTEM VALUE
        SELECT t.ticket_id, t.user_id, p_expires, t.calls, t.tokens, t.cost, t.admit_key FROM tick t WHERE t.ok
    ), renew AS ( -- a held key's ticket now belongs to this answer; renewals only move expiries later (lease_min)
        UPDATE quota_tickets k SET expires_at = GREATEST(k.expires_at, p_expires), admitted_in = pg_current_xact_id(),
               admit_gen = k.admit_gen + 1
          FROM tick t
         WHERE t.again AND k.id = t.held
    )
    SELECT t.ord, t.name, t.reasons, t.ticket_id,
           (t.u).day_requests + t.ok::int, (t.u).day_calls, (t.u).day_tokens, (t.u).day_cost,
           CASE WHEN t.ok THEN quota_add((t.u).res_calls, t.calls) ELSE (t.u).res_calls END,
           CASE WHEN t.ok THEN quota_add((t.u).res_tokens, t.tokens) ELSE (t.u).res_tokens END,
           CASE WHEN t.ok THEN quota_add((t.u).res_cost, t.cost) ELSE (t.u).res_cost END,
           CASE WHEN t.again THEN t.gen + 1 WHEN t.ok THEN 0 END
      FROM tick t;
END $$;

-- The previous release's entry point, kept for its replicas during a
-- rollout (0063's pattern): the same arguments and rows, now a thin adapter
-- onto the keyed function with every request unkeyed, so old and new
-- replicas share one rule, rows and locks. quota_admit_batch (0063) calls
-- it and so goes through the same rule. A later migration drops it once no
-- replica calls it.
CREATE OR REPLACE FUNCTION quota_admit_requests(
    p_plans jsonb, p_users text[], p_fallbacks text[],
    p_calls bigint[], p_tokens bigint[], p_cost bigint[],
    p_now timestamptz, p_minute timestamptz, p_hour timestamptz, p_day date,
    p_expires timestamptz, p_global_cap bigint)
RETURNS SETOF quota_admission
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    RETURN QUERY SELECT a.ord, a.plan, a.reasons, a.ticket_id, a.day_requests, a.day_calls, a.day_tokens,
                        a.day_cost, a.res_calls, a.res_tokens, a.res_cost
      FROM quota_admit_requests(p_plans, p_users, p_fallbacks, NULL::text[], p_calls, p_tokens, p_cost,
                                p_now, p_minute, p_hour, p_day, p_expires, p_global_cap) a;
END $$;

-- quota_take_ticket records that the caller of a keyed admission got its
-- ticket, if no later admission handed the ticket on (p_gen is the
-- generation its answer named). False: a later attempt with the key has
-- it, and this one must not use it. It locks the user's row first, as an
-- admission does (0010's lock order): an admission that read the ticket
-- untaken must not hand it on after the take.
CREATE FUNCTION quota_take_ticket(p_user text, p_ticket bigint, p_gen int) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM quota_users WHERE user_id = p_user FOR UPDATE;
    UPDATE quota_tickets SET admit_taken = true
     WHERE id = p_ticket AND user_id = p_user AND admit_gen = p_gen;
    RETURN FOUND;
END $$;

-- A voice start is keyed the same way. Its reservation (quota_voice) is
-- its admission: one request counted, one voice session, the seconds
-- reserved. A keyed start whose key names a live reservation of the user
-- that no caller took is answered with that reservation (its session id:
-- the start goes on as that session), counting nothing again; one whose
-- reservation was taken is refused with admit_key_in_use. The key lives
-- as long as the reservation row: until the session ends, or its
-- reservation runs out and is reclaimed.
ALTER TABLE quota_voice
    ADD COLUMN admit_key text,
    ADD COLUMN admit_taken boolean NOT NULL DEFAULT false,
    ADD COLUMN admit_gen int NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX quota_voice_admit_key ON quota_voice (user_id, admit_key) WHERE admit_key IS NOT NULL;

-- quota_voice_reserve with a key (p_key, NULL or '' for none): 0064's rule,
-- and the reservation's session (reserved_session: p_session, or the held
-- one's) and generation (ticket_gen, which the take names).
CREATE FUNCTION quota_voice_reserve(
    p_user text, p_fallback text, p_plans jsonb,
    p_now timestamptz, p_minute timestamptz, p_hour timestamptz, p_day date, p_month date,
    p_session text, p_key text, p_min_s bigint, p_default_max_s bigint, p_grace_s bigint, p_global_cap bigint,
    OUT plan text, OUT reasons text[], OUT active_session text, OUT granted bigint,
    OUT voice_used bigint, OUT voice_reserved bigint, OUT expires_at timestamptz,
    OUT reserved_session text, OUT ticket_gen int)
LANGUAGE plpgsql AS $$
DECLARE
    pl record;
    l quota_limits;
    u quota_users;
    was quota_users;
    active bigint;
    remaining numeric;
    held quota_voice;
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

    IF nullif(p_key, '') IS NOT NULL THEN
        SELECT * INTO held FROM quota_voice v WHERE v.user_id = p_user AND v.admit_key = p_key;
        IF FOUND THEN -- the key's start was admitted once: answer with it, or refuse, counting nothing
            granted := 0;
            IF held.admit_taken THEN
                reasons := ARRAY['admit_key_in_use'];
            ELSE
                UPDATE quota_voice v SET admit_gen = v.admit_gen + 1 WHERE v.session_id = held.session_id;
                reasons := '{}';
                granted := held.reserved_s;
                expires_at := held.expires_at;
                reserved_session := held.session_id;
                ticket_gen := held.admit_gen + 1;
            END IF;
            IF u.voice_used <> was.voice_used THEN
                PERFORM quota_save(u); -- keep the charge of expired reservations
            END IF;
            voice_used := u.voice_used;
            RETURN;
        END IF;
    END IF;

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
        INSERT INTO quota_voice (session_id, user_id, reserved_s, month, started_at, expires_at, admit_key)
        VALUES (p_session, p_user, granted, p_month, p_now, expires_at, nullif(p_key, ''));
        voice_reserved := voice_reserved + granted;
        reserved_session := p_session;
        ticket_gen := 0;
        PERFORM quota_save(u);
    ELSE
        granted := 0;
        IF u.voice_used <> was.voice_used THEN
            PERFORM quota_save(u); -- keep the charge of expired reservations
        END IF;
    END IF;
    voice_used := u.voice_used;
END $$;

-- The previous release's voice start (0064), an adapter onto the keyed one
-- with no key, as quota_admit_requests' above.
CREATE OR REPLACE FUNCTION quota_voice_reserve(
    p_user text, p_fallback text, p_plans jsonb,
    p_now timestamptz, p_minute timestamptz, p_hour timestamptz, p_day date, p_month date,
    p_session text, p_min_s bigint, p_default_max_s bigint, p_grace_s bigint, p_global_cap bigint,
    OUT plan text, OUT reasons text[], OUT active_session text, OUT granted bigint,
    OUT voice_used bigint, OUT voice_reserved bigint, OUT expires_at timestamptz)
LANGUAGE sql AS $$
SELECT r.plan, r.reasons, r.active_session, r.granted, r.voice_used, r.voice_reserved, r.expires_at
  FROM quota_voice_reserve(p_user, p_fallback, p_plans, p_now, p_minute, p_hour, p_day, p_month,
                           p_session, NULL::text, p_min_s, p_default_max_s, p_grace_s, p_global_cap) r
$$;

-- quota_take_voice is quota_take_ticket for a keyed voice start.
CREATE FUNCTION quota_take_voice(p_user text, p_session text, p_gen int) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM quota_users WHERE user_id = p_user FOR UPDATE;
    UPDATE quota_voice SET admit_taken = true
     WHERE session_id = p_session AND user_id = p_user AND admit_gen = p_gen;
    RETURN FOUND;
END $$;
