-- Retires migration 0024's functions (expand/contract, DESIGN §13). From
-- this release on, tools' executor has one path for every call: a claim
-- that inserts the running row, decided by the unique key alone, and a
-- finish; it calls none of them. A replica of the previous release may
-- still run beside it during a rollout, and its SQL fast path calls
-- tool_call_begin and its claim tool_call_lock, so they stay until the
-- contract step, a migration of a later release, drops them. The two
-- releases stay exactly-once side by side: see docs/tools.md ("Rollout
-- from the SQL fast path") and tools/rollout_test.go.
COMMENT ON FUNCTION tool_call_begin(text[], text[], text) IS
    'Retired (0025): used only by replicas of the release before; a later contract migration drops it.';
COMMENT ON FUNCTION tool_call_lock(text, text) IS
    'Retired (0025): used only by replicas of the release before; a later contract migration drops it.';
COMMENT ON FUNCTION tool_call_key(text, text) IS
    'Retired (0025): used only by replicas of the release before; a later contract migration drops it.';
