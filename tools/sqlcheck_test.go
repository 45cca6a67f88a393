package tools

import (
	"context"
	"sort"
	"testing"
	"time"
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
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(took[min(len(took)-1, len(took)*99/100)].Microseconds()), "p99-µs")
}
