-- Every writer of a tool_calls row first takes a transaction-scoped
-- advisory lock on its (session_id, call_id), so a call's owner can run its
-- statement and insert the finished row in one transaction while any
-- duplicate, on any replica and on either executor path, waits for it.
-- See tools/sqlpath.go. The two-key form keeps these locks apart from the
-- single-key ones (the migration lock); a hash collision between two calls
-- only makes one wait for the other.
CREATE FUNCTION tool_call_lock(p_session text, p_call text) RETURNS void
LANGUAGE sql VOLATILE AS $$
    SELECT pg_advisory_xact_lock(1953460076, hashtext(p_session || chr(31) || p_call))
$$;

-- tool_call_begin opens a fast-path call inside the caller's transaction:
-- it bounds how long the transaction may then sit idle, takes the call's
-- lock and fails with SQLSTATE VXD01 when the call already has a row. The
-- check must follow the lock in a later snapshot, and in a VOLATILE
-- PL/pgSQL function each statement takes a fresh one; a plain SELECT would
-- judge by the snapshot taken before it waited. Failing, rather than
-- returning a flag, ends the caller's pipeline, so a duplicate never runs
-- the tool's statement.
CREATE FUNCTION tool_call_begin(p_session text, p_call text, p_idle_ms text) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM set_config('idle_in_transaction_session_timeout', p_idle_ms, true);
    PERFORM tool_call_lock(p_session, p_call);
    IF EXISTS (SELECT 1 FROM tool_calls WHERE session_id = p_session AND call_id = p_call) THEN
        RAISE EXCEPTION 'tool call already recorded' USING ERRCODE = 'VXD01';
    END IF;
END
$$;
