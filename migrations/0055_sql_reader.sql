-- voxgate_reader: the role every SQL tool's statement runs as (DESIGN §8),
-- switched to with SET LOCAL ROLE inside a READ ONLY transaction. It can
-- log in nowhere, bypasses no row-level security and owns nothing; a
-- migration that declares views for SQL tools grants it USAGE and SELECT on
-- exactly those (and the tables under security_invoker views, which their
-- row-level-security policies then filter).
--
-- Roles are cluster-wide: another database on the same server (a second
-- deployment, or every test database cloned from a template) may have made
-- it already, possibly at this very moment, so creating it tolerates both.
--
-- A gateway whose database user may not create roles still starts: the
-- warning says what an administrator runs once, and SQL tools refuse to
-- start until then (tools.CheckSQLSandbox).
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'voxgate_reader') THEN
        CREATE ROLE voxgate_reader NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOBYPASSRLS;
    END IF;
EXCEPTION
    WHEN duplicate_object OR unique_violation THEN
        NULL; -- created concurrently by another database's migration
    WHEN insufficient_privilege THEN
        RAISE WARNING 'voxgate: % may not create roles; for SQL tools, a superuser runs once: CREATE ROLE voxgate_reader NOLOGIN; GRANT voxgate_reader TO %; REVOKE EXECUTE ON FUNCTION set_config(text, text, boolean) FROM PUBLIC; GRANT EXECUTE ON FUNCTION set_config(text, text, boolean) TO %;',
            current_user, current_user, current_user;
END
$$;

-- The gateway switches to the role with SET LOCAL ROLE, which needs
-- membership. A superuser is a member of every role already.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'voxgate_reader')
       AND NOT pg_has_role(current_user, 'voxgate_reader', 'MEMBER') THEN
        EXECUTE format('GRANT voxgate_reader TO %I', current_user);
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE WARNING 'voxgate: % may not join voxgate_reader; for SQL tools, a superuser runs: GRANT voxgate_reader TO %;',
        current_user, current_user;
END
$$;

-- The row-level-security policies key on the setting voxgate.user_id, which
-- the gateway sets with set_config in its own statement before switching
-- role. A statement written by a model must not be able to change it, so
-- set_config is no longer everyone's: only the role that runs the gateway
-- (the one applying this migration; the quota functions call set_config
-- too) keeps it. This is per database, and only this database's.
-- Only the function's owner (a superuser) can do this; for anyone else
-- PostgreSQL warns that nothing was revoked, and SQL tools refuse to start.
REVOKE EXECUTE ON FUNCTION pg_catalog.set_config(text, text, boolean) FROM PUBLIC;
DO $$
BEGIN
    EXECUTE format('GRANT EXECUTE ON FUNCTION pg_catalog.set_config(text, text, boolean) TO %I', current_user);
END
$$;
