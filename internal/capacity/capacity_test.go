package capacity_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/capacity"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/internal/testkit"
)

// The mock streams its ten chunks 10 ms apart: a streamed request's first
// content comes at once and the whole takes at least 90 ms; a whole
// answer comes at once. Run counts every request and times each.
func TestMockAndRun(t *testing.T) {
	t.Parallel()
	m, err := capacity.StartMock()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	target := capacity.Target{URL: m.URL + "/chat/completions"}
	st := capacity.Run(ctx, http.DefaultClient, target, capacity.Load{Clients: 2, Duration: 300 * time.Millisecond, Stream: true, Model: "m"})
	if st.Failed != 0 || st.Requests < 2 {
		t.Fatalf("streamed: %d requests, %d failed (%s)", st.Requests, st.Failed, st.FirstError)
	}
	// Each client's requests take ≥ 90 ms, so two clients in 300 ms (and
	// the one each starts before the end) make at most 2×5.
	if st.Requests > 10 {
		t.Fatalf("streamed: %d requests in 300 ms from 2 clients: the mock did not wait between chunks", st.Requests)
	}
	if p := st.Quantile(0.5); p <= 0 || p >= capacity.MockGap*time.Duration(capacity.MockChunks-1) {
		t.Fatalf("streamed first content at %s: want before the last chunk", p)
	}
	wh := capacity.Run(ctx, http.DefaultClient, target, capacity.Load{Clients: 1, Duration: 100 * time.Millisecond, Model: "m"})
	if wh.Failed != 0 || wh.Requests <= st.Requests {
		t.Fatalf("whole: %d requests, %d failed (%s); want more than the streamed run's %d", wh.Requests, wh.Failed, wh.FirstError, st.Requests)
	}
	bad := capacity.Run(ctx, http.DefaultClient, capacity.Target{URL: m.URL + "/nowhere"}, capacity.Load{Clients: 1, Duration: 50 * time.Millisecond})
	if bad.Requests != 0 || bad.Failed == 0 || !strings.Contains(bad.FirstError, "404") {
		t.Fatalf("a missing route: %+v", bad)
	}
}

// ProcessCPU grows with work done; a process that is not there is an
// error.
func TestProcessCPU(t *testing.T) {
	t.Parallel()
	before, err := capacity.ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(300 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	after, err := capacity.ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after-before < 50*time.Millisecond {
		t.Fatalf("300 ms of spinning showed as %s of CPU", after-before)
	}
	if _, err := capacity.ProcessCPU(1 << 30); err == nil {
		t.Fatal("no error for a process that does not exist")
	}
}

// Backends sees the rows written and the backends of the connections it
// is told to watch.
func TestBackends(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "watched"
	watched, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer watched.Close()
	own := pgtest.NewPool(t, url, 2)
	b, err := capacity.NewBackends(ctx, own, "watched")
	if err != nil {
		t.Fatal(err)
	}
	// The table is made on a connection of its own, closed so its
	// catalog rows are counted before the run's.
	initial, err := b.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	setup, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setup.Exec(ctx, `CREATE TABLE t (n int)`); err != nil {
		t.Fatal(err)
	}
	_ = setup.Close(ctx)
	if err := watched.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	var before capacity.PGSnapshot
	sctx, scancel := context.WithTimeout(ctx, StatsWait)
	defer scancel()
	testkit.Eventually(t, sctx, "the table's catalog rows counted", func() bool {
		if before, err = b.Snapshot(ctx); err != nil {
			t.Fatal(err)
		}
		return before.Rows > initial.Rows
	})
	if len(before.Gateway) != 1 || !before.Local {
		t.Fatalf("the watched pool's backend: %+v", before)
	}
	for i := range 20 {
		if _, err := watched.Exec(ctx, `INSERT INTO t SELECT g FROM generate_series(1, 50) g`); err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
	}
	// A backend's counts reach pg_stat_database at the latest as it exits.
	watched.Close()
	wctx, wcancel := context.WithTimeout(ctx, StatsWait)
	defer wcancel()
	testkit.Eventually(t, wctx, "20×50 rows written counted", func() bool {
		after, err := b.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		d := after.Since(before)
		if d.Rows > 1000 {
			t.Fatalf("%d rows written, want 20×50", d.Rows)
		}
		return d.Rows == 1000
	})
}

// StatsWait bounds how long the server may take to count an exited
// backend's rows.
const StatsWait = 15 * time.Second
