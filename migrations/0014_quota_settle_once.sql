-- Settling a chat turn is idempotent per ticket. Ticket.Settle may be
-- retried after a failure, and a failure may be a lost reply to a
-- settlement that committed; the retry must then change nothing. The ticket
-- row cannot tell: it is gone after a settlement and also after the
-- reclaim of an expired lease, whose turn must still be charged when it
-- settles late. So each settlement leaves a row here, kept a day (the
-- sweep deletes older ones), and a ticket found here is not charged again.
CREATE TABLE quota_settlements (
    user_id    text        NOT NULL,
    ticket_id  bigint      NOT NULL,
    settled_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, ticket_id)
);
CREATE INDEX quota_settlements_at ON quota_settlements (settled_at);

-- quota_settle_ticket ends a ticket once: it releases the lease and the
-- reservation (if the ticket was not already reclaimed) and adds the actual
-- usage to the current UTC day. Usage is added even for a reclaimed ticket,
-- so a turn that outlived its lease is still counted. A ticket already
-- settled changes nothing (replayed): the counters are returned as they
-- stand.
CREATE FUNCTION quota_settle_ticket(
    p_user text, p_ticket bigint, p_now timestamptz,
    p_minute timestamptz, p_hour timestamptz, p_day date, p_month date,
    p_calls bigint, p_tokens bigint, p_cost bigint,
    OUT replayed boolean, OUT released boolean,
    OUT day_requests bigint, OUT day_calls bigint, OUT day_tokens bigint, OUT day_cost bigint,
    OUT res_calls bigint, OUT res_tokens bigint, OUT res_cost bigint)
LANGUAGE plpgsql AS $$
DECLARE
    u quota_users;
    t quota_tickets;
BEGIN
    u := quota_lock_user(p_user);
    u := quota_roll(u, p_minute, p_hour, p_day, p_month);
    INSERT INTO quota_settlements (user_id, ticket_id, settled_at) VALUES (p_user, p_ticket, p_now)
    ON CONFLICT (user_id, ticket_id) DO NOTHING;
    replayed := NOT FOUND;
    released := false;
    IF NOT replayed THEN
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
    END IF;
    day_requests := u.day_requests; day_calls := u.day_calls;
    day_tokens := u.day_tokens; day_cost := u.day_cost;
    res_calls := u.res_calls; res_tokens := u.res_tokens; res_cost := u.res_cost;
END $$;

-- quota_settle keeps the signature replicas of the previous release call
-- during a rollout (expand/contract), now settling once too. A replayed
-- settlement reports released = false, as a reclaimed ticket did.
CREATE OR REPLACE FUNCTION quota_settle(
    p_user text, p_ticket bigint, p_now timestamptz,
    p_minute timestamptz, p_hour timestamptz, p_day date, p_month date,
    p_calls bigint, p_tokens bigint, p_cost bigint,
    OUT released boolean,
    OUT day_requests bigint, OUT day_calls bigint, OUT day_tokens bigint, OUT day_cost bigint,
    OUT res_calls bigint, OUT res_tokens bigint, OUT res_cost bigint)
LANGUAGE sql AS $$
SELECT s.released, s.day_requests, s.day_calls, s.day_tokens, s.day_cost, s.res_calls, s.res_tokens, s.res_cost
FROM quota_settle_ticket(p_user, p_ticket, p_now, p_minute, p_hour, p_day, p_month, p_calls, p_tokens, p_cost) s
$$;
