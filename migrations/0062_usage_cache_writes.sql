-- Prompt tokens written to the provider's prompt cache, which the newer
-- chat models bill as a class of their own (billing/prices.yaml,
-- text_cache_write_in). Like text_cached_in they are part of text_in, and
-- the two are disjoint: text_in - text_cached_in - text_cache_write_in is
-- the input billed at the plain input price.
--
-- Expand only: an older replica does not write the column and its default
-- of 0 is what it meant. The count check is its own constraint, added
-- without scanning the table (every existing row holds 0).
ALTER TABLE usage_records ADD COLUMN text_cache_write_in bigint NOT NULL DEFAULT 0;

ALTER TABLE usage_records ADD CONSTRAINT usage_records_cache_write_count
    CHECK (text_cache_write_in >= 0 AND text_cached_in + text_cache_write_in <= text_in) NOT VALID;
