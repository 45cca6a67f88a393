-- The UTC months finance has exported whole (`voxgate costs export` over
-- a range with no filter, billing.Ledger.RecordExport): the ledger's
-- retention (ledger.retention_months, docs/billing.md "Partitions") drops
-- a month's partition only once its month is here, so records leave the
-- database only after they left it in an export. A month exported again
-- keeps its first row's month and takes the latest export's figures.
CREATE TABLE usage_exports (
    month       date PRIMARY KEY CHECK (month = date_trunc('month', month)),
    exported_at timestamptz NOT NULL DEFAULT now(),
    -- The export this month was part of: its range, rows and format.
    from_at     timestamptz NOT NULL,
    to_at       timestamptz NOT NULL,
    rows        bigint NOT NULL CHECK (rows >= 0),
    format      text NOT NULL,
    -- This month's records when it was recorded, counted on the primary
    -- and checked against the export's rows: retention drops the month's
    -- partition only while it holds exactly this many, so a record that
    -- arrived after the export (a spool replayed late, with its original
    -- stamp) keeps the month until it is exported again.
    records     bigint NOT NULL CHECK (records >= 0)
);
