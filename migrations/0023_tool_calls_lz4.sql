-- tool_calls.response keeps each call's whole response: about 4 KiB of JSON
-- for a recipe search, which PostgreSQL compresses because it is over 2 KiB.
-- lz4 does that in about half the server time of the default pglz, on the
-- path of every tool call; the stored size is about the same. Only new
-- values use it, old ones stay readable, and nothing else changes, so older
-- replicas are unaffected. A server built without lz4 keeps the default.
DO $$
BEGIN
    EXECUTE 'ALTER TABLE tool_calls ALTER COLUMN response SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported OR syntax_error THEN
    RAISE NOTICE 'lz4 is not available: tool_calls.response keeps the default compression';
END
$$;
