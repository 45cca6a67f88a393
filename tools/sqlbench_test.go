package tools

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/pgtest"
)

// BenchmarkFixedSQLTool runs the fixed tool minutes_by_kind through the
// executor (validation, the claimed row, the sandbox's READ ONLY
// transaction with the user's id and SET LOCAL ROLE, the query, the
// shaping, the finished row) at 16 concurrent callers, beside the same
// query on the same pool in the same run: the base table filtered by the
// user's id directly, one statement, no transaction, nothing recorded. It
// reports each side's calls per second and their ratio, and two more for
// where the difference goes: the sandbox alone (no executor), and a tool
// that does nothing (echo) through the executor, which is the cost of
// validating and recording a call exactly once.
//
//	go test ./tools -run '^$' -bench FixedSQLTool -benchtime 4000x
func BenchmarkFixedSQLTool(b *testing.B) {
	pool := pgtest.NewPool(b, pgtest.URL(b), 10)
	if _, err := pool.Exec(context.Background(), sqlFixture); err != nil {
		b.Fatal(err)
	}
	e := sqlExecutor(b, pool)
	benchSandbox = sandbox{db: pool, timeout: time.Second, searchPath: "sqltest"}
	ctx := context.Background()
	const callers = 16
	var seq atomic.Int64
	run := func(one func(i int64) error) float64 {
		var wg sync.WaitGroup
		var failed atomic.Value
		start := time.Now()
		per := max(1, b.N/callers)
		for c := 0; c < callers; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < per; j++ {
					if err := one(seq.Add(1)); err != nil {
						failed.Store(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if err, _ := failed.Load().(error); err != nil {
			b.Fatal(err)
		}
		return float64(per*callers) / time.Since(start).Seconds()
	}
	direct := func(int64) error {
		rows, err := pool.Query(ctx, `SELECT kind, sum(minutes) AS minutes, count(*) AS n FROM sqltest.entries
			WHERE user_id = $1 AND kind = $2 GROUP BY kind`, "u1", "run")
		if err != nil {
			return err
		}
		for rows.Next() {
			if _, err := rows.Values(); err != nil {
				rows.Close()
				return err
			}
		}
		return rows.Err()
	}
	sandboxed := func(int64) error {
		_, err := benchSandbox.query(ctx, "u1", `SELECT kind, sum(minutes) AS minutes, count(*) AS n FROM sqltest.my_entries
			WHERE kind = $1 GROUP BY kind`, []any{"run"})
		return err
	}
	tool := func(i int64) error {
		res, err := e.Execute(ctx, proCall("u1", fmt.Sprint("b", i), "minutes_by_kind", `{"kind":"run"}`))
		if err == nil && res.Error != nil {
			err = res.Error
		}
		return err
	}
	echo := mustExecutor(b, pool, mustRegistry(b, RegistryParams{Builtins: []*Tool{echoTool("echo")}}))
	bare := func(i int64) error {
		_, err := echo.Execute(ctx, chatCall("s", fmt.Sprint("e", i), "echo", `{"text":"run"}`))
		return err
	}
	_ = run(direct) // warm both paths' connections and statement caches
	b.ResetTimer()
	viaPool := run(direct)
	viaTool := run(tool)
	viaSandbox := run(sandboxed)
	viaEcho := run(bare)
	b.StopTimer()
	b.ReportMetric(viaPool, "pool-calls/s")
	b.ReportMetric(viaTool, "tool-calls/s")
	b.ReportMetric(viaTool/viaPool, "ratio")
	b.ReportMetric(viaSandbox, "sandbox-calls/s")
	b.ReportMetric(viaEcho, "echo-tool-calls/s")
}

var benchSandbox sandbox
