package tools

import (
	"context"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/latency"
)

// typicalSQL are questions a Logly user asks, as a model writes them.
var typicalSQL = []string{
	"SELECT count(*) FROM my_entries WHERE kind = 'run' AND at >= date_trunc('week', now()) - interval '1 week' AND at < date_trunc('week', now())",
	"SELECT kind, count(*) AS n, sum(minutes) AS minutes FROM my_entries GROUP BY kind ORDER BY n DESC",
	"SELECT date_trunc('day', at)::date AS day, sum(minutes) FROM my_entries WHERE at > now() - interval '30 days' GROUP BY 1 ORDER BY 1",
	"WITH weekly AS (SELECT date_trunc('week', at) AS week, count(*) AS runs FROM my_entries WHERE kind = 'run' GROUP BY 1) SELECT avg(runs), max(runs) FROM weekly",
	"SELECT kind, round(avg(minutes), 1) AS avg_minutes, rank() OVER (ORDER BY avg(minutes) DESC) FROM my_entries GROUP BY kind",
	"SELECT extract(dow FROM at) AS weekday, count(*) FROM sqltest.my_entries GROUP BY 1 HAVING count(*) > 2 ORDER BY 2 DESC LIMIT 3",
	"SELECT e.kind, e.minutes FROM my_entries e WHERE e.minutes > (SELECT avg(minutes) FROM my_entries) ORDER BY e.minutes DESC LIMIT 5",
	"WITH RECURSIVE days(d) AS (SELECT 1 UNION ALL SELECT d + 1 FROM days WHERE d < 7) SELECT d, (SELECT count(*) FROM my_entries WHERE extract(dow FROM at) = d) FROM days",
	"SELECT coalesce(sum(minutes) FILTER (WHERE kind = 'walk'), 0) AS walk, nullif(count(*), 0) FROM my_entries WHERE at::date BETWEEN '2026-11-01' AND '2026-11-07'",
}

func TestCheckerAcceptsTypicalQuestions(t *testing.T) {
	t.Parallel()
	chk, err := newSQLChecker([]string{"sqltest.my_entries"}, DefaultSQLFunctions)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range typicalSQL {
		if err := chk.check(q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}

// FuzzOpenSQLChecker: no input panics the checker, and whatever it accepts,
// run in the sandbox as u1, writes nothing and reads none of u2's rows.
//
//	go test ./tools -run '^$' -fuzz FuzzOpenSQLChecker -fuzztime 60s
func FuzzOpenSQLChecker(f *testing.F) {
	pool := sqlPool(f)
	chk, err := newSQLChecker([]string{"sqltest.my_entries"}, DefaultSQLFunctions)
	if err != nil {
		f.Fatal(err)
	}
	sb := sandbox{db: pool, timeout: 200 * time.Millisecond, searchPath: chk.searchPath(), open: true}
	before := readEntries(f, pool)
	for _, q := range typicalSQL {
		f.Add(q)
	}
	for _, q := range hostileSQL() {
		if len(q) < MaxOpenSQLBytes {
			f.Add(q)
		}
	}
	f.Fuzz(func(t *testing.T, q string) {
		if chk.check(q) != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rows, err := sb.query(ctx, "u1", q, nil)
		if err == nil && containsSecret(rows) {
			t.Fatalf("accepted %q and it read u2's rows: %v", q, rows.Rows)
		}
		if after := readEntries(t, pool); after != before {
			t.Fatalf("accepted %q and it wrote: %+v → %+v", q, before, after)
		}
	})
}

// BenchmarkOpenSQLCheck measures parse + allowlist walk of the typical
// questions and reports p50 and p99 per check.
//
//	go test ./tools -run '^$' -bench OpenSQLCheck -benchtime 20000x
func BenchmarkOpenSQLCheck(b *testing.B) {
	chk, err := newSQLChecker([]string{"sqltest.my_entries"}, DefaultSQLFunctions)
	if err != nil {
		b.Fatal(err)
	}
	_ = chk.check(typicalSQL[0]) // the first parse compiles the parser
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := chk.check(typicalSQL[i%len(typicalSQL)]); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	b.ReportMetric(latency.Millis(b, took, .5)*1000, "p50-µs")
	b.ReportMetric(latency.Millis(b, took, .99)*1000, "p99-µs")
}

// TestCheckerCatalogNames: casts may name plain types and value functions
// may read the clock; the reg* casts, oid, a relation's row type, the
// session's value functions, a catalog collation and a qualified operator
// are refused, since each resolves a name in the catalogs.
func TestCheckerCatalogNames(t *testing.T) {
	t.Parallel()
	chk, err := newSQLChecker([]string{"sqltest.my_entries"}, DefaultSQLFunctions)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, sql string
		ok        bool
	}{
		{"plain casts", "SELECT minutes::int, minutes::bigint, minutes::float, minutes::numeric(6,1), kind::text, kind::varchar(5), at::date, at::timestamptz, '1'::bool FROM my_entries", true},
		{"typed literals", "SELECT interval '1 week', date '2026-11-01', timestamptz '2026-11-01 10:00+00', time '10:00'", true},
		{"array casts", "SELECT '{a,b}'::text[], '{1}'::int[]", true},
		{"json casts", `SELECT '{"a":1}'::jsonb, '[]'::json`, true},
		{"clock value functions", "SELECT current_date, current_timestamp, localtimestamp(2), current_time", true},
		{"plain collation", `SELECT kind COLLATE "C" FROM my_entries ORDER BY kind COLLATE pg_catalog."default"`, true},
		{"catalog operator", "SELECT 1 OPERATOR(pg_catalog.+) 2", true},
		{"regclass", "SELECT 'my_entries'::regclass", false},
		{"pg_catalog regtype", "SELECT 'int4'::pg_catalog.regtype", false},
		{"regnamespace", "SELECT 'sqltest'::regnamespace", false},
		{"oid", "SELECT 1::oid", false},
		{"xid", "SELECT '1'::xid", false},
		{"name", "SELECT 'x'::name", false},
		{"a view's row type", "SELECT NULL::sqltest.my_entries", false},
		{"a bare view's row type", "SELECT NULL::my_entries", false},
		{"session_user", "SELECT session_user", false},
		{"current_user", "SELECT current_user", false},
		{"user", "SELECT user", false},
		{"current_role", "SELECT current_role", false},
		{"current_schema", "SELECT current_schema", false},
		{"current_catalog", "SELECT current_catalog", false},
		{"system_user", "SELECT system_user", false},
		{"current_database()", "SELECT current_database()", false},
		{"version()", "SELECT version()", false},
		{"catalog collation", `SELECT kind COLLATE "en_US" FROM my_entries`, false},
		{"schema collation", "SELECT kind COLLATE sqltest.mine FROM my_entries", false},
		{"schema operator", "SELECT 1 OPERATOR(sqltest.===) 1", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := chk.check(tc.sql)
			if (err == nil) != tc.ok {
				t.Errorf("%s: got %v, want accepted %v", tc.sql, err, tc.ok)
			}
		})
	}
}

// TestCheckerConfigRefusesSessionFunctions: a tool's function list cannot
// allow what reads the session or the catalogs.
func TestCheckerConfigRefusesSessionFunctions(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"session_user", "current_user", "current_database", "inet_server_addr", "version",
		"to_regclass", "has_table_privilege", "pg_typeof", "current_setting", "lo_get", "dblink_exec"} {
		if _, err := newSQLChecker([]string{"sqltest.my_entries"}, []string{"count", f}); err == nil {
			t.Errorf("functions [count %s]: got accepted, want refused", f)
		}
	}
	if _, err := newSQLChecker([]string{"sqltest.my_entries"}, []string{"count", "to_char", "lower"}); err != nil {
		t.Errorf("functions [count to_char lower]: got %v, want accepted", err)
	}
}
