-- Two OpenAI price modifiers the ledger must keep per record (docs/billing.md,
-- "Cache writes" and "Service tiers"), and the audit of repricings applied
-- (below):
--
-- text_cache_write_12h_in is the part of text_cache_write_in written under a
-- 12-hour prompt-cache TTL, which costs twice the 30-minute write. The
-- provider's usage does not split writes by TTL; the gateway knows the TTL it
-- asked for (a route target's prompt_cache_ttl) and records the split.
--
-- service_tier is the tier the provider's response named ('' when it named
-- none): priority bills every class of the record ×2, flex and batch ×0.5.
--
-- Expand only: an older replica writes neither column, and their defaults
-- (no 12-hour writes, no tier: the default tier) are what it meant. The
-- checks are added NOT VALID (every existing row holds the defaults) and
-- validated apart, so the table is not locked against writes while rows are
-- read.
ALTER TABLE usage_records
    ADD COLUMN text_cache_write_12h_in bigint NOT NULL DEFAULT 0,
    ADD COLUMN service_tier text NOT NULL DEFAULT '';

ALTER TABLE usage_records ADD CONSTRAINT usage_records_cache_write_12h_count
    CHECK (text_cache_write_12h_in >= 0 AND text_cache_write_12h_in <= text_cache_write_in) NOT VALID;
ALTER TABLE usage_records VALIDATE CONSTRAINT usage_records_cache_write_12h_count;

ALTER TABLE usage_records ADD CONSTRAINT usage_records_service_tier_shape
    CHECK (service_tier ~ '^[a-z0-9_]{0,32}$') NOT VALID;
ALTER TABLE usage_records VALIDATE CONSTRAINT usage_records_service_tier_shape;

-- One row per repricing applied (`voxgate costs reprice --apply`,
-- billing.Ledger.ApplyReprice, docs/billing.md "Repricing"): the range and
-- filter, the table the records were priced again with, how many records
-- and their totals before and after, and who ran it. Written in the same
-- transaction as the records' new costs, so a repricing is either applied
-- and recorded or neither.
CREATE TABLE usage_repricings (
    id           bigserial PRIMARY KEY,
    applied_at   timestamptz NOT NULL DEFAULT now(),
    applied_by   text NOT NULL,
    from_at      timestamptz NOT NULL,
    to_at        timestamptz NOT NULL,
    tz           text NOT NULL,
    user_id      text NOT NULL DEFAULT '',
    kind         text NOT NULL DEFAULT '',
    mode         text NOT NULL DEFAULT '',
    model        text NOT NULL DEFAULT '',
    new_version  text NOT NULL,
    records      bigint NOT NULL CHECK (records >= 0),
    old_cost     numeric NOT NULL,
    new_cost     numeric NOT NULL,
    old_unpriced bigint NOT NULL CHECK (old_unpriced >= 0),
    new_unpriced bigint NOT NULL CHECK (new_unpriced >= 0)
);
