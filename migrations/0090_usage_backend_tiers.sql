-- A live session's backend class gets the two price modifiers its own model's
-- class got in migration 0088 (docs/billing.md, "Cache writes" and "Service
-- tiers"): the backend runs on chat.route, whose target may ask 12-hour
-- cache writes and be served on another tier. Without these columns the
-- backend's 12-hour writes were priced at the 30-minute rate and its tier
-- ignored.
--
-- backend_text_cache_write_12h_in is the part of backend_text_cache_write_in
-- written under a 12-hour TTL; backend_service_tier the tier the backend's
-- responses named ('' when none did, 'mixed' when they named two).
--
-- Expand only: an older replica writes neither column, and their defaults
-- (no 12-hour writes, the default tier) are what it meant. The checks are
-- added NOT VALID and validated apart, so writes are not locked out while
-- rows are read.
ALTER TABLE usage_records
    ADD COLUMN backend_text_cache_write_12h_in bigint NOT NULL DEFAULT 0,
    ADD COLUMN backend_service_tier text NOT NULL DEFAULT '';

ALTER TABLE usage_records ADD CONSTRAINT usage_records_backend_cache_write_12h_count
    CHECK (backend_text_cache_write_12h_in >= 0 AND backend_text_cache_write_12h_in <= backend_text_cache_write_in) NOT VALID;
ALTER TABLE usage_records VALIDATE CONSTRAINT usage_records_backend_cache_write_12h_count;

ALTER TABLE usage_records ADD CONSTRAINT usage_records_backend_service_tier_shape
    CHECK (backend_service_tier ~ '^[a-z0-9_]{0,32}$') NOT VALID;
ALTER TABLE usage_records VALIDATE CONSTRAINT usage_records_backend_service_tier_shape;
