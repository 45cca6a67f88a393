-- quota_charge_day adds usage that was not admitted as a chat turn (a
-- voice session's tokens and cost, charged when it ends) to the user's UTC
-- day, so the plan's daily token and cost caps cover voice and chat
-- together. The caller runs it in the transaction that writes the usage
-- record, which makes the charge happen exactly once.
CREATE FUNCTION quota_charge_day(p_user text, p_tokens bigint, p_cost bigint, p_now timestamptz)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    c record;
    u quota_users;
BEGIN
    SELECT * INTO c FROM quota_clock(p_now);
    u := quota_lock_user(p_user);
    u := quota_roll(u, c.minute, c.hour, c.day, c.month);
    u.day_tokens := quota_add(u.day_tokens, GREATEST(p_tokens, 0));
    u.day_cost := quota_add(u.day_cost, GREATEST(p_cost, 0));
    PERFORM quota_save(u);
END $$;
