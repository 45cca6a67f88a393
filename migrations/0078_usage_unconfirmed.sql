-- A live session's usage whose final figure never came (docs/voice.md):
-- the sideband died before session.closed, so the record holds the highest
-- cumulative usage the gateway saw, marked 'unconfirmed' for finance.
-- Expand only: an older replica never writes the new value.
ALTER TABLE usage_records DROP CONSTRAINT usage_records_usage_source_check;
-- NOT VALID: the check only widens, so every row already meets it, and a
-- validating scan would hold the table's exclusive lock over the whole
-- ledger; new and updated rows are checked all the same.
ALTER TABLE usage_records ADD CONSTRAINT usage_records_usage_source_check
    CHECK (usage_source IN ('client_reported', 'server_observed', 'provider_reported', 'none', 'unconfirmed')) NOT VALID;
