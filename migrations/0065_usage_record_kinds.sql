-- Two more kinds of usage record, for the provider router (DESIGN §10,
-- §11): 'completion', a POST /v1/chat/completions request, and 'attempt',
-- a routed attempt that failed but that its provider billed, recorded as
-- what it was and never as a completion.
ALTER TABLE usage_records DROP CONSTRAINT usage_records_kind_check;
ALTER TABLE usage_records ADD CONSTRAINT usage_records_kind_check
    CHECK (kind IN ('voice', 'chat', 'completion', 'attempt'));
