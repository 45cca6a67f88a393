-- Every writer of a tool_calls row first takes a transaction-scoped
-- advisory lock on its (session_id, call_id), so a call's owner can run its
-- statement and insert the finished row in one transaction while any
-- duplicate, on any replica and on either executor path, waits for it.
-- Retired by 0025: see docs/tools.md ("Rollout from the SQL fast path").
-- The two-key form keeps these locks apart from the
-- single-key ones (the migration lock); a hash collision between two calls
-- only makes one wait for the other.
CREATE FUNCTION tool_call_key(p_session text, p_call text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT hashtext(p_session || chr(31) || p_call)
$$;

-- tool_call_lock is the general path's lock, taken by its claim.
CREATE FUNCTION tool_call_lock(p_session text, p_call text) RETURNS void
LANGUAGE sql VOLATILE AS $$
    SELECT pg_advisory_xact_lock(1953460076, tool_call_key(p_session, p_call))
$$;

-- tool_call_begin opens a batch of fast-path calls inside the caller's
-- transaction. It bounds how long the transaction may then sit idle, takes
-- the calls' locks in key order (two batches that share calls cannot
-- deadlock), and fails with SQLSTATE VXD01 when any call already has a
-- row. The check must follow the locks in a later snapshot, and in a
-- VOLATILE PL/pgSQL function each statement takes a fresh one; a plain
-- SELECT would judge by the snapshot taken before it waited. Failing,
-- rather than returning a flag, ends the caller's pipeline, so a duplicate
-- never runs the tool's statement. Each call is looked up on its own, by
-- the unique key: PL/pgSQL caches a generic plan, and a join to the
-- unnested arrays may be planned as a scan of tool_calls, which grows.
CREATE FUNCTION tool_call_begin(p_sessions text[], p_calls text[], p_idle_ms text) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    k integer;
    i integer;
BEGIN
    PERFORM set_config('idle_in_transaction_session_timeout', p_idle_ms, true);
    FOR k IN SELECT DISTINCT tool_call_key(s, c) FROM unnest(p_sessions, p_calls) AS t(s, c) ORDER BY 1 LOOP
        PERFORM pg_advisory_xact_lock(1953460076, k);
    END LOOP;
    FOR i IN 1 .. cardinality(p_calls) LOOP
        IF EXISTS (SELECT 1 FROM tool_calls WHERE session_id = p_sessions[i] AND call_id = p_calls[i]) THEN
            RAISE EXCEPTION 'tool call already recorded' USING ERRCODE = 'VXD01';
        END IF;
    END LOOP;
END
$$;
