-- Statements that ride an admission (issue #36): a unit's pending audit row
-- travels in its admission's round trip and commits in its transaction
-- (docs/quota.md, "Riders"), instead of a round trip and a commit of its
-- own. It must be written only for a request the batch admitted, and the
-- batch decides many users at once, so a rider asks quota_admitted_now
-- whether this transaction gave the user a ticket.
--
-- A ticket remembers the transaction that admitted it. Added without a
-- default first and given one after, so no existing row is rewritten:
-- tickets in flight during the upgrade keep NULL, which no transaction id
-- equals, and they carry no riders.
ALTER TABLE quota_tickets ADD COLUMN admitted_in xid8;
ALTER TABLE quota_tickets ALTER COLUMN admitted_in SET DEFAULT pg_current_xact_id();

-- quota_admitted_now reports whether the current transaction admitted a
-- request of p_user. A batch holds at most one request per user, so it is
-- that request's answer. The index quota_tickets_user_expiry (0010) finds
-- the user's few tickets.
CREATE FUNCTION quota_admitted_now(p_user text) RETURNS boolean
LANGUAGE sql STABLE
RETURN EXISTS (SELECT 1 FROM quota_tickets t
                WHERE t.user_id = p_user AND t.admitted_in = pg_current_xact_id());
