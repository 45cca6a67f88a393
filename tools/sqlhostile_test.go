package tools

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func counterValue(c prometheus.Counter) float64 { return testutil.ToFloat64(c) }

// hostileSQL is the battery every open SQL tool must refuse before
// execution, and that the sandbox alone must survive.
func hostileSQL() map[string]string {
	nest := func(n int, open, mid, close string) string {
		return strings.Repeat(open, n) + mid + strings.Repeat(close, n)
	}
	return map[string]string{
		"insert":                    "INSERT INTO sqltest.my_entries (kind, minutes, at) VALUES ('x', 1, now())",
		"update":                    "UPDATE sqltest.entries SET minutes = 0",
		"delete":                    "DELETE FROM sqltest.entries",
		"merge":                     "MERGE INTO sqltest.entries e USING sqltest.secrets s ON true WHEN MATCHED THEN DELETE",
		"drop":                      "DROP TABLE sqltest.entries",
		"create":                    "CREATE TABLE sqltest.x (a int)",
		"alter":                     "ALTER TABLE sqltest.entries DISABLE ROW LEVEL SECURITY",
		"truncate":                  "TRUNCATE sqltest.entries",
		"grant":                     "GRANT ALL ON sqltest.secrets TO voxgate_reader",
		"two statements":            "SELECT 1; DELETE FROM sqltest.entries",
		"two selects":               "SELECT set_config('voxgate.user_id', 'u2', true); SELECT * FROM my_entries",
		"set_config":                "SELECT set_config('voxgate.user_id', 'u2', true), * FROM my_entries",
		"set":                       "SET voxgate.user_id = 'u2'",
		"reset role":                "RESET ROLE",
		"set role":                  "SET ROLE postgres",
		"session authorization":     "SET SESSION AUTHORIZATION postgres",
		"pg_settings update":        "WITH u AS (UPDATE pg_settings SET setting = 'u2' WHERE name = 'voxgate.user_id' RETURNING 1) SELECT * FROM my_entries",
		"pg_sleep":                  "SELECT pg_sleep(10)",
		"pg_sleep in from":          "SELECT * FROM ROWS FROM (pg_sleep(10))",
		"dblink":                    "SELECT * FROM dblink('dbname=postgres', 'SELECT 1') AS t(a int)",
		"copy to stdout":            "COPY sqltest.entries TO STDOUT",
		"copy from":                 "COPY sqltest.entries FROM '/etc/passwd'",
		"copy query to file":        "COPY (SELECT * FROM sqltest.entries) TO '/tmp/voxgate-copy'",
		"lo_import":                 "SELECT lo_import('/etc/passwd')",
		"lo_export":                 "SELECT lo_export(1, '/tmp/voxgate-lo')",
		"pg_read_file":              "SELECT pg_read_file('/etc/passwd')",
		"pg_ls_dir":                 "SELECT * FROM pg_ls_dir('.')",
		"for update":                "SELECT * FROM my_entries FOR UPDATE",
		"for share in subquery":     "SELECT * FROM (SELECT * FROM my_entries FOR SHARE) s",
		"data-modifying cte":        "WITH d AS (DELETE FROM sqltest.entries RETURNING *) SELECT count(*) FROM d",
		"select into":               "SELECT * INTO sqltest.copy FROM my_entries",
		"pg_authid":                 "SELECT rolname, rolpassword FROM pg_authid",
		"qualified pg_authid":       "SELECT * FROM pg_catalog.pg_authid",
		"pg_shadow":                 "SELECT * FROM pg_shadow",
		"pg_stats":                  "SELECT most_common_vals::text FROM pg_stats WHERE tablename = 'entries'",
		"pg_class":                  "SELECT relname FROM pg_class",
		"information_schema":        "SELECT * FROM information_schema.tables",
		"base table":                "SELECT * FROM sqltest.entries",
		"undeclared table":          "SELECT * FROM sqltest.secrets",
		"current_setting":           "SELECT current_setting('voxgate.user_id')",
		"version":                   "SELECT version()",
		"query_to_xml":              "SELECT query_to_xml('SELECT * FROM sqltest.entries', true, true, '')",
		"advisory lock":             "SELECT pg_advisory_lock(1)",
		"terminate":                 "SELECT pg_terminate_backend(pg_backend_pid())",
		"txid":                      "SELECT txid_current()",
		"schema-qualified fn":       "SELECT sqltest.count(1)",
		"comment hides a statement": "SELECT * FROM my_entries /* ; */; DELETE FROM sqltest.entries",
		"line comment":              "SELECT * FROM my_entries -- x\n; DROP TABLE sqltest.entries",
		"dollar quoting":            "SELECT $$ ; $$; DELETE FROM sqltest.entries",
		"quoted function":           `SELECT "pg_sleep"(10)`,
		"upper-case function":       "SELECT PG_SLEEP(10)",
		"quoted catalog":            `SELECT * FROM pg_catalog."pg_authid"`,
		"quoted base table":         `SELECT * FROM "sqltest"."entries"`,
		"unicode table":             `SELECT * FROM U&"pg_a\0075thid"`,
		"unicode function":          `SELECT U&"pg_sl\0065ep"(10)`,
		"unicode schema":            `SELECT * FROM U&"sqlt\0065st".U&"entr\0069es"`,
		"cte shadowing later":       "WITH a AS (SELECT * FROM pg_authid), pg_authid AS (SELECT 1) SELECT * FROM a",
		"cte shadowing inner":       "SELECT * FROM pg_authid, (WITH pg_authid AS (SELECT 1) SELECT 1) x",
		"cte quoted shadow":         `WITH "PG_AUTHID" AS (SELECT 1) SELECT * FROM pg_authid`,
		"tablesample":               "SELECT * FROM my_entries TABLESAMPLE SYSTEM (50)",
		"xml":                       "SELECT xmlparse(document '<a/>')",
		"explain":                   "EXPLAIN ANALYZE SELECT * FROM my_entries",
		"do":                        "DO $$ BEGIN DELETE FROM sqltest.entries; END $$",
		"lock":                      "LOCK TABLE sqltest.entries",
		"commit":                    "COMMIT",
		"read write":                "SET TRANSACTION READ WRITE",
		"prepare":                   "PREPARE p AS DELETE FROM sqltest.entries",
		"listen":                    "LISTEN x",
		"vacuum":                    "VACUUM sqltest.entries",
		"empty":                     " ; ",
		"deep parentheses":          "SELECT " + nest(3000, "(1 + ", "1", ")"),
		"deep subqueries":           nest(200, "SELECT * FROM (", "SELECT 1", ") s"),
		"one megabyte":              "SELECT '" + strings.Repeat("a", 1<<20) + "'",

		// The session and the catalogs, read through value functions and
		// casts rather than through a relation.
		"session_user":          "SELECT session_user",
		"current_user in a row": "SELECT current_user, count(*) FROM my_entries",
		"user":                  "SELECT user",
		"current_role":          "SELECT current_role",
		"current_schema":        "SELECT current_schema",
		"current_schema()":      "SELECT current_schema()",
		"current_catalog":       "SELECT current_catalog",
		"current_database":      "SELECT current_database()",
		"inet_server_addr":      "SELECT inet_server_addr()",
		"system_user":           "SELECT system_user",
		"regclass":              "SELECT 'sqltest.secrets'::regclass",
		"regclass in where":     "SELECT count(*) FROM my_entries WHERE 'sqltest.entries'::regclass IS NOT NULL",
		"regclass through text": "SELECT ('sqltest.' || 'secrets')::text::regclass",
		"quoted regclass":       `SELECT 'sqltest.secrets'::"regclass"`,
		"regclass array":        "SELECT '{sqltest.secrets}'::regclass[]",
		"regrole":               "SELECT 'postgres'::regrole",
		"cast as regrole":       "SELECT CAST('voxgate_reader' AS pg_catalog.regrole)",
		"regproc":               "SELECT 'pg_sleep'::regproc",
		"regprocedure":          "SELECT 'pg_sleep(double precision)'::regprocedure",
		"regoper":               "SELECT '+'::regoper",
		"regoperator":           "SELECT '+(int4,int4)'::regoperator",
		"regtype":               "SELECT 'int4'::regtype",
		"regnamespace":          "SELECT 'sqltest'::regnamespace",
		"regconfig":             "SELECT 'english'::regconfig",
		"regdictionary":         "SELECT 'simple'::regdictionary",
		"regcollation":          `SELECT 'C'::regcollation`,
		"oid":                   "SELECT 1259::oid",
		"a table's row type":    "SELECT NULL::sqltest.entries",
		"to_regclass":           "SELECT to_regclass('sqltest.secrets')",
		"to_regrole":            "SELECT to_regrole('postgres')",
		"catalog collation":     "SELECT kind COLLATE sqltest.mine FROM my_entries",
		"schema operator":       "SELECT 1 OPERATOR(sqltest.===) 1",
	}
}

// TestOpenSQLRefusesHostileStatements sends the battery through the
// executor: every one is a sql_refused tool error (or, for the megabyte,
// an argument refusal), none reaches the database.
func TestOpenSQLRefusesHostileStatements(t *testing.T) {
	t.Parallel()
	pool := sqlPool(t)
	// The battery is about refusals, not the tool's 5 s timeout: under
	// -race on a loaded machine a statement can wait that long for one of
	// the parser's slots, which this package's parallel tests share. So the
	// tool waits a minute, and the parser starts warm (its first use
	// builds its WebAssembly runtime).
	open := openDef("ask")
	open.Timeout = time.Minute
	e := sqlExecutorWith(t, pool, open)
	before := readEntries(t, pool)
	warmParser()
	refusedBefore := counterValue(e.metrics.sqlStatements.WithLabelValues("ask", sqlOutcomeRefused))
	sentBefore := counterValue(e.metrics.sqlStatements.WithLabelValues("ask", sqlOutcomeRefusedDB))
	n := 0
	for name, sql := range hostileSQL() {
		if len(sql) > MaxOpenSQLBytes {
			// Past the argument cap the executor refuses it first; the
			// checker refuses it on its own too.
			chk, _ := newSQLChecker([]string{"sqltest.my_entries"}, DefaultSQLFunctions)
			if err := chk.check(sql); err == nil {
				t.Errorf("%s: the checker accepted it", name)
			}
			continue
		}
		res, err := e.Execute(context.Background(), proCall("u1", "h-"+name, "ask", sqlArgs(sql)))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if res.Error == nil || res.Error.Code != "sql_refused" {
			t.Errorf("%s: got %+v, want sql_refused", name, res)
			continue
		}
		if strings.Contains(res.Output, sql) {
			t.Errorf("%s: the refusal repeats the statement: %s", name, res.Output)
		}
		n++
	}
	if got := counterValue(e.metrics.sqlStatements.WithLabelValues("ask", sqlOutcomeRefused)) - refusedBefore; got < float64(n) {
		t.Errorf("refused_parser counted %v, want at least %d", got, n)
	}
	if got := counterValue(e.metrics.sqlStatements.WithLabelValues("ask", sqlOutcomeRefusedDB)) - sentBefore; got != 0 {
		t.Errorf("%v hostile statements reached the database", got)
	}
	if after := readEntries(t, pool); after != before {
		t.Fatalf("the battery changed data: %+v → %+v", before, after)
	}
}

// TestSandboxHoldsWithoutTheChecker runs the battery straight into the
// sandbox, the checker bypassed: the role, READ ONLY and row-level security
// must still keep every write out and every other user's row in.
func TestSandboxHoldsWithoutTheChecker(t *testing.T) {
	t.Parallel()
	pool := sqlPool(t)
	chk, err := newSQLChecker([]string{"sqltest.my_entries"}, DefaultSQLFunctions)
	if err != nil {
		t.Fatal(err)
	}
	sb := sandbox{db: pool, timeout: 300 * time.Millisecond, searchPath: chk.searchPath(), open: true}
	before := readEntries(t, pool)
	for name, sql := range hostileSQL() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		rows, err := sb.query(ctx, "u1", sql, nil)
		cancel()
		if err == nil && containsSecret(rows) {
			t.Errorf("%s: read u2's rows: %v", name, rows.Rows)
		}
		if after := readEntries(t, pool); after != before {
			t.Fatalf("%s: wrote: %+v → %+v", name, before, after)
		}
	}
	// The connection is clean afterwards: the next statement is the
	// reader's, for u1 only.
	rows, err := sb.query(context.Background(), "u1", "SELECT current_user, count(*) FROM sqltest.my_entries", nil)
	if err != nil || rows.Rows[0][0] != ReaderRole || fmt.Sprint(rows.Rows[0][1]) != "150" {
		t.Fatalf("after the battery: %+v, %v", rows, err)
	}
}
