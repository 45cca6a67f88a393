-- Every index a request's writes maintain, checked against the queries
-- that read it (issue 36). Two go: neither serves a query the other
-- indexes do not.
--
-- ai_audit_log_pending indexed status a second time: the operators' query
-- for abandoned work, status = 'pending' AND created_at < now - deadline
-- (GET /v1/admin/audit?status=pending&to=…), is a range scan of
-- ai_audit_log_status_created, which every status filter uses. Each
-- completion and chat turn inserted an entry into it.
DROP INDEX IF EXISTS ai_audit_log_pending;

-- usage_records_unpriced served no query: nothing reads records by
-- cost_micros IS NULL (summaries count unpriced records within the rows
-- they read, and repricing filters as the finance listing does).
DROP INDEX IF EXISTS usage_records_unpriced;

COMMENT ON INDEX ai_audit_log_created IS
    'GET /v1/admin/audit with no user or status: rows in [from, to), newest first (audit.Log.List)';
COMMENT ON INDEX ai_audit_log_user_created IS
    'GET /v1/admin/audit?user_id=: one user''s rows in [from, to), newest first (audit.Log.List)';
COMMENT ON INDEX ai_audit_log_status_created IS
    'GET /v1/admin/audit?status=: rows of a status in [from, to), abandoned pending rows among them (docs/audit.md)';
COMMENT ON INDEX usage_records_created IS
    'finance reads by range: GET /v1/admin/sessions, costs.csv, reprice, and the summaries'' unfolded edges (billing/rollup.go)';
COMMENT ON INDEX usage_records_user_created IS
    'finance reads of one user in a range: GET /v1/admin/sessions?user_id=, costs.csv?user_id=, summaries by user';
COMMENT ON INDEX usage_records_model_created IS
    'finance reads of one model in a range: GET /v1/admin/sessions?model=, costs.csv?model=';
