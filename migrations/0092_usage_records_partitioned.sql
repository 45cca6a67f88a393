-- The ledger partitioned by UTC month on created_at (issue 44,
-- docs/billing.md "Partitions", docs/operations.md "Partitioning an
-- existing ledger"). One table grew forever; monthly partitions let old
-- months be dropped after finance exported them (retention) and keep each
-- month's indexes the size of a month.
--
-- Exactly-once. A partitioned table's unique key must hold the partition
-- key, so the record's key becomes (kind, session_id, turn_id, created_at).
-- It is as strong as the old one because every writer stamps created_at
-- once, before its first attempt, and every retry and spool replay sends
-- the same stamp (billing.Stamp; a voice end's is its ended_at, written
-- under the session's row lock): a replay meets the same key and does
-- nothing, as before.
--
-- The old table is kept, not copied: it is renamed usage_records_legacy and
-- attached as the partition for everything before its bound, so an existing
-- ledger moves without rewriting a row. Attaching does no scan and builds
-- no index when `voxgate ledger prepare` ran first (the indexes the parent
-- needs built CONCURRENTLY, the bound a CHECK added NOT VALID and then
-- VALIDATEd, neither blocking writers): then writers wait only for this
-- transaction's catalog changes. Without it the same steps run here, under
-- the table's lock, which is quick for a small ledger; a large one is
-- refused with the command to run. An empty ledger (every fresh database)
-- is dropped instead and the ledger starts with monthly partitions.
DO $$
DECLARE
    prepared boolean := EXISTS (SELECT 1 FROM pg_constraint
        WHERE conrelid = 'usage_records'::regclass AND conname = 'usage_records_legacy_bound' AND convalidated);
    empty boolean := NOT EXISTS (SELECT 1 FROM usage_records);
    estimate real := (SELECT reltuples FROM pg_class WHERE oid = 'usage_records'::regclass);
    bound timestamptz := date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + interval '1 month';
    next_id bigint;
    c record;
BEGIN
    IF NOT prepared AND NOT empty AND estimate > 200000 THEN
        RAISE EXCEPTION 'usage_records holds about % rows: run `voxgate ledger prepare` first, then start the gateway again', estimate::bigint
            USING HINT = 'docs/operations.md, "Partitioning an existing ledger": it builds what this migration needs without blocking writers';
    END IF;
    LOCK TABLE usage_records IN ACCESS EXCLUSIVE MODE;
    next_id := greatest((SELECT coalesce(max(id), 0) + 1 FROM usage_records),
                        (SELECT last_value + 1 FROM usage_records_id_seq));

    IF NOT prepared AND NOT empty THEN
        -- What `voxgate ledger prepare` does online (billing/partition.go,
        -- under the same names), done here under the lock: the ledger is
        -- small.
        CREATE UNIQUE INDEX IF NOT EXISTS usage_records_legacy_key ON usage_records (kind, session_id, turn_id, created_at);
        CREATE INDEX IF NOT EXISTS usage_records_legacy_id ON usage_records (id);
        FOR c IN SELECT conname FROM pg_constraint WHERE conrelid = 'usage_records'::regclass AND contype = 'c' AND NOT convalidated LOOP
            EXECUTE format('ALTER TABLE usage_records VALIDATE CONSTRAINT %I', c.conname);
        END LOOP;
        IF EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = 'usage_records'::regclass AND conname = 'usage_records_legacy_bound') THEN
            ALTER TABLE usage_records DROP CONSTRAINT usage_records_legacy_bound;
        END IF;
        EXECUTE format('ALTER TABLE usage_records ADD CONSTRAINT usage_records_legacy_bound CHECK (created_at < %L)', bound);
    END IF;
    IF NOT empty THEN
        -- The bound the preparation chose.
        bound := (SELECT substring(pg_get_constraintdef(oid) FROM $re$'([^']+)'$re$)::timestamptz FROM pg_constraint
                  WHERE conrelid = 'usage_records'::regclass AND conname = 'usage_records_legacy_bound');
    END IF;

    ALTER TABLE usage_records RENAME TO usage_records_legacy;
    ALTER TABLE usage_records_legacy ALTER COLUMN id DROP IDENTITY;
    -- Its keys give way to the parent's (a constraint's name is its
    -- index's, which the schema's other relations may not share).
    ALTER TABLE usage_records_legacy DROP CONSTRAINT usage_records_pkey;
    ALTER TABLE usage_records_legacy DROP CONSTRAINT usage_records_one_per_turn;
    -- Its triggers give way to the parent's, which every partition clones.
    DROP TRIGGER usage_records_fill_mode ON usage_records_legacy;
    DROP TRIGGER usage_rollups_keep ON usage_records_legacy;
    -- Index names are the schema's: the legacy table's give theirs to the
    -- parent's.
    ALTER INDEX usage_records_created RENAME TO usage_records_legacy_created;
    ALTER INDEX usage_records_user_created RENAME TO usage_records_legacy_user_created;
    ALTER INDEX usage_records_model_created RENAME TO usage_records_legacy_model_created;

    CREATE TABLE usage_records (LIKE usage_records_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
        PARTITION BY RANGE (created_at);
    ALTER TABLE usage_records ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY;
    PERFORM setval(pg_get_serial_sequence('usage_records', 'id'), next_id, false);
    IF EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = 'usage_records'::regclass AND conname = 'usage_records_legacy_bound') THEN
        ALTER TABLE usage_records DROP CONSTRAINT usage_records_legacy_bound;
    END IF;
    ALTER TABLE usage_records ADD CONSTRAINT usage_records_one_per_turn UNIQUE (kind, session_id, turn_id, created_at);
    CREATE INDEX usage_records_id ON usage_records (id);
    CREATE INDEX usage_records_created ON usage_records (created_at DESC, id DESC);
    CREATE INDEX usage_records_user_created ON usage_records (user_id, created_at DESC, id DESC);
    CREATE INDEX usage_records_model_created ON usage_records (model, created_at DESC, id DESC);

    IF NOT empty THEN
        ALTER TABLE usage_records_legacy ADD CONSTRAINT usage_records_legacy_one_per_turn
            UNIQUE USING INDEX usage_records_legacy_key;
        -- No scan: the validated bound and NOT NULL imply the range.
        EXECUTE format('ALTER TABLE usage_records ATTACH PARTITION usage_records_legacy FOR VALUES FROM (MINVALUE) TO (%L)', bound);
    END IF;
END $$;

-- The functions that take a record change their argument to the parent's
-- row type (a partition's row converts to it implicitly); their bodies are
-- migration 0079's and 0082's.
DROP FUNCTION usage_rollup_add(usage_records_legacy, int);
DROP FUNCTION usage_record_tokens_in(usage_records_legacy);
DROP FUNCTION usage_record_tokens_out(usage_records_legacy);

CREATE FUNCTION usage_record_tokens_in(r usage_records) RETURNS numeric LANGUAGE sql IMMUTABLE AS $$
    SELECT (r.text_in + r.audio_in + r.image_in + r.transcription_text_in + r.transcription_audio_in
            + r.backend_text_in)::numeric
$$;

CREATE FUNCTION usage_record_tokens_out(r usage_records) RETURNS numeric LANGUAGE sql IMMUTABLE AS $$
    SELECT (r.text_out + r.audio_out + r.transcription_text_out + r.backend_text_out)::numeric
$$;

CREATE FUNCTION usage_rollup_add(r usage_records, sign int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_rollup_deltas (bucket, user_id, kind, mode, model, records, unpriced,
                                     cost_micros, duration_ms, tokens_in, tokens_out)
    VALUES (date_bin('15 minutes', r.created_at, timestamptz '2000-01-01 00:00:00+00'),
            r.user_id, r.kind, r.mode, r.model, sign, sign * (r.cost_micros IS NULL)::int,
            sign * coalesce(r.cost_micros, 0), sign * r.duration_ms,
            sign * usage_record_tokens_in(r)::bigint, sign * usage_record_tokens_out(r)::bigint);
END $$;

-- Row triggers on the parent are cloned onto every partition, present and
-- future (PostgreSQL 13+).
CREATE TRIGGER usage_records_fill_mode BEFORE INSERT ON usage_records
    FOR EACH ROW EXECUTE FUNCTION usage_records_fill_mode();
CREATE TRIGGER usage_rollups_keep AFTER INSERT OR UPDATE OR DELETE ON usage_records
    FOR EACH ROW EXECUTE FUNCTION usage_rollups_keep();

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM usage_records_legacy) THEN
        DROP TABLE usage_records_legacy;
    END IF;
END $$;

COMMENT ON INDEX usage_records_id IS
    'a record by id: GET /v1/admin/sessions/{id} detail (billing.Ledger.Detail), repricing''s order';
COMMENT ON INDEX usage_records_created IS
    'finance reads by range: GET /v1/admin/sessions, costs.csv, reprice, and the summaries'' unfolded edges (billing/rollup.go)';
COMMENT ON INDEX usage_records_user_created IS
    'finance reads of one user in a range: GET /v1/admin/sessions?user_id=, costs.csv?user_id=, summaries by user';
COMMENT ON INDEX usage_records_model_created IS
    'finance reads of one model in a range: GET /v1/admin/sessions?model=, costs.csv?model=';

-- Where a record of no partition's month goes, so that no insert can fail
-- for want of a partition. It is kept empty by creating months ahead
-- (usage_records_add_month, run by the gateway); a row that lands here
-- anyway (a record stamped far in the past or future) stays readable like
-- any other, and its month's partition is then not created (billing/partition.go).
CREATE TABLE usage_records_default PARTITION OF usage_records DEFAULT;

-- Creates the partition of the UTC month that holds m, and says what it
-- did: 'created', 'exists' (that month is a partition already, or inside
-- the legacy partition), or 'default' (the DEFAULT partition holds rows of
-- that month: attaching would have to move them, so the month is left to
-- DEFAULT and the caller logs it). Callers on every replica take turns on
-- an advisory lock held to the end of their transaction, so two never
-- race to create one month. Attaching takes the parent's SHARE UPDATE
-- EXCLUSIVE lock, which writers do not wait on, and scans only the new
-- table and the (empty) DEFAULT partition.
CREATE FUNCTION usage_records_add_month(m timestamptz) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    lo timestamptz := date_trunc('month', m AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
    hi timestamptz := lo + interval '1 month';
    name text := 'usage_records_' || to_char(lo AT TIME ZONE 'UTC', 'YYYY_MM');
BEGIN
    PERFORM pg_advisory_xact_lock(8535348004352614001); -- "voxgate partitions"
    IF EXISTS (SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
               WHERE i.inhparent = 'usage_records'::regclass AND c.relname = name) THEN
        RETURN 'exists';
    END IF;
    IF EXISTS (SELECT 1 FROM usage_records_default WHERE created_at >= lo AND created_at < hi) THEN
        RETURN 'default';
    END IF;
    EXECUTE format('CREATE TABLE %I (LIKE usage_records INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name);
    BEGIN
        EXECUTE format('ALTER TABLE usage_records ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', name, lo, hi);
    EXCEPTION WHEN invalid_object_definition THEN
        -- It overlaps a partition of another name: the legacy one.
        EXECUTE format('DROP TABLE %I', name);
        RETURN 'exists';
    END;
    RETURN 'created';
END $$;

SELECT usage_records_add_month(now() + make_interval(months => n)) FROM generate_series(0, 2) AS n;
