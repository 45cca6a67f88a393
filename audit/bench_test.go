package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/pgtest"
)

// backendCPU is the CPU time PostgreSQL backend pid has used (utime +
// stime of /proc/<pid>/stat): the server runs on this machine in tests.
func backendCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Skipf("the backend's CPU is not readable here: %v", err)
	}
	// Fields after the command, which may hold spaces: state is field 3,
	// utime 14 and stime 15, in clock ticks (100 a second on Linux).
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond
}

// BenchmarkBeginFinish compares a unit's two audit statements, begin and
// finish, each its own transaction as a completion's riders are, on one
// pinned connection: release 0088's (a pending log row, updated at the
// end, with the legacy trigger, and without it) against this release's
// (a pending row in ai_audit_pending, one final log row). pg-us/op is
// the PostgreSQL backend's CPU per pair, us/pair its wall time. Each
// variant has its own database and connection; AUDIT_BENCH_ROWS fills
// each log first. docs/audit.md has the command and the figures.
func BenchmarkBeginFinish(b *testing.B) {
	if b.N == 1 && !testing.Short() {
		// go test's first, calibrating run: each run builds its own
		// databases. The smoke run (-short -benchtime 1x) has only this one.
		return
	}
	ctx := context.Background()
	trace, _ := json.Marshal([]TraceEntry{{Call: 1, Entry: "openai/gpt-4.1-mini:success", Status: 200, DurationMS: 300}})
	type variant struct {
		name  string
		setup string
		pair  func(c *pgxpool.Conn, r Row) error
	}
	old := func(c *pgxpool.Conn, r Row) error {
		if _, err := c.Exec(ctx, beginSQL0088, r.ID, r.Kind, r.UserID, r.SessionID, r.CallID, r.Tool, r.Route, r.InputHash); err != nil {
			return err
		}
		var one int
		return c.QueryRow(ctx, finishSQL0088, r.ID, r.Kind, r.UserID, r.SessionID, r.CallID, r.Tool, r.Route,
			"openai", "gpt-4.1-mini", Success, "", trace, Required(r.Kind), []string{}, r.InputHash, Hash("out"), 300).Scan(&one)
	}
	variants := []variant{
		{"release0088", legacyTrigger0088, old},
		{"release0088-notrigger", "", old},
		{"appendonly", "", func(c *pgxpool.Conn, r Row) error {
			l := New(c)
			if err := l.Begin(ctx, r); err != nil {
				return err
			}
			r.Status, r.Provider, r.Model, r.FiltersRan = Success, "openai", "gpt-4.1-mini", Required(r.Kind)
			r.FailoverTrace, r.OutputHash, r.DurationMS = []TraceEntry{{Call: 1, Entry: "openai/gpt-4.1-mini:success", Status: 200, DurationMS: 300}}, Hash("out"), 300
			return l.Finish(ctx, r)
		}},
	}
	conns := make([]*pgxpool.Conn, len(variants))
	pids := make([]int, len(variants))
	for i, v := range variants {
		c, err := pgtest.Pool(b).Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Release()
		if rows, _ := strconv.Atoi(os.Getenv("AUDIT_BENCH_ROWS")); rows > 0 {
			// A log of that many final rows over 30 days, so that index
			// maintenance costs what it does on a full table.
			if _, err := c.Exec(ctx, `INSERT INTO ai_audit_log (turn_id, kind, user_id, session_id, route, status,
				failover_trace, duration_ms, input_hash, created_at, finished_at)
				SELECT 'pre_' || md5(g::text), 'completion', 'u' || (g % 5000), 's', 'chat', 'degraded', '[]', 300,
					md5(g::text) || md5(g::text), now() - interval '30 days' * g / $1, now() - interval '30 days' * g / $1
				FROM generate_series(1, $1) g`, rows); err != nil {
				b.Fatal(err)
			}
			if _, err := c.Exec(ctx, `VACUUM ANALYZE ai_audit_log`); err != nil {
				b.Fatal(err)
			}
		}
		if v.setup != "" {
			if _, err := c.Exec(ctx, v.setup); err != nil {
				b.Fatal(err)
			}
		}
		if err := c.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pids[i]); err != nil {
			b.Fatal(err)
		}
		conns[i] = c
	}
	// Each iteration runs one pair of every variant in turn, so the
	// machine's noise falls on all of them alike; a backend serves one
	// variant only, so its CPU over the run is that variant's.
	cpu0 := make([]time.Duration, len(variants))
	for i := range variants {
		cpu0[i] = backendCPU(b, pids[i])
	}
	wall := make([]time.Duration, len(variants))
	b.ResetTimer()
	for n := range b.N {
		for i, v := range variants {
			r := Row{ID: fmt.Sprintf("cmpl_%d_%d", b.N, n), Kind: KindCompletion, UserID: fmt.Sprintf("u%d", n%50),
				SessionID: "s", Route: "chat", InputHash: Hash("in")}
			start := time.Now()
			if err := v.pair(conns[i], r); err != nil {
				b.Fatal(err)
			}
			wall[i] += time.Since(start)
		}
	}
	b.StopTimer()
	for i, v := range variants {
		b.ReportMetric(float64((backendCPU(b, pids[i])-cpu0[i]).Microseconds())/float64(b.N), v.name+"-pg-us/pair")
		b.ReportMetric(float64(wall[i].Microseconds())/float64(b.N), v.name+"-us/pair")
	}
}
