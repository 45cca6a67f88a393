package billing_test

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/migrations"
)

// before0092 is the core set as it was before the ledger was partitioned:
// its history in the same table, so Core later applies only what follows.
func before0092(t *testing.T) *database.Set {
	t.Helper()
	m := fstest.MapFS{}
	entries, err := fs.ReadDir(migrations.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		v, err := strconv.Atoi(e.Name()[:min(4, len(e.Name()))])
		if err != nil || v >= 92 {
			continue
		}
		b, err := fs.ReadFile(migrations.FS, e.Name())
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = &fstest.MapFile{Data: b}
	}
	return database.NewSet(database.SetParams{Name: "core", FS: m, LockKey: 0x766f78676174})
}

// writer writes records through the ledger until stop is closed, and
// keeps the longest a write took while each phase ran.
type writer struct {
	mu      sync.Mutex
	phase   string
	longest map[string]time.Duration
	written []string
	err     error
}

func (w *writer) run(ctx context.Context, l *billing.Ledger, q billing.Querier, stop <-chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		r := voiceRecord(fmt.Sprintf("vs_live_%d", i))
		r.CreatedAt = billing.Stamp()
		t0 := time.Now()
		_, err := l.Write(ctx, q, r)
		took := time.Since(t0)
		w.mu.Lock()
		if err != nil && w.err == nil {
			w.err = err
		}
		w.longest[w.phase] = max(w.longest[w.phase], took)
		w.written = append(w.written, r.SessionID)
		w.mu.Unlock()
	}
}

func (w *writer) enter(phase string) {
	w.mu.Lock()
	w.phase = phase
	w.mu.Unlock()
}

// An existing unpartitioned ledger becomes the legacy partition while a
// writer keeps writing: `voxgate ledger prepare` (PrepareLegacy) builds
// what the migration needs online, then migration 0092 attaches it. The
// writer's longest wait in each phase is reported; the migration's must be
// at most seconds. VOXGATE_LEDGER_MIGRATE_ROWS sets the ledger's size
// (docs/operations.md has the 1,000,000-record run); -short uses 20,000.
func TestPartitioningAnExistingLedger(t *testing.T) {
	rowsWanted := int64(100_000)
	if testing.Short() {
		rowsWanted = 20_000
	}
	if v, err := strconv.ParseInt(os.Getenv("VOXGATE_LEDGER_MIGRATE_ROWS"), 10, 64); err == nil && v > 0 {
		rowsWanted = v
	}
	ctx := context.Background()
	pool := pgtest.NewPool(t, pgtest.EmptyURL(t), 6)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := database.Migrate(ctx, pool, before0092(t), log); err != nil {
		t.Fatal(err)
	}
	prices, err := billing.DefaultPrices()
	if err != nil {
		t.Fatal(err)
	}
	l, err := billing.NewLedger(billing.LedgerParams{Pool: pool, Prices: prices, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	// The old ledger: records over the past year, loaded as the benchmark
	// loads October (seedMonth), ending before now.
	began := time.Now()
	for _, stmt := range []string{
		`ALTER TABLE usage_records DISABLE TRIGGER USER`,
		`INSERT INTO usage_records (user_id, session_id, kind, provider, model, text_in, text_out, duration_ms, cost_micros,
			price_version, usage_source, created_at)
		SELECT 'u' || (i % 5000), 'vs_' || i, (ARRAY['voice', 'chat', 'completion'])[1 + i % 3], 'openai', 'gpt-6-luna',
		       1000, 300, 61000, 75240, 'v1', 'client_reported', now() - interval '1 hour' - i * interval '30 seconds'
		FROM generate_series(1, ` + strconv.FormatInt(rowsWanted, 10) + `) AS i`,
		`ALTER TABLE usage_records ENABLE TRIGGER USER`,
		`VACUUM ANALYZE usage_records`,
	} {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			t.Fatalf("seed: %v", err)
		}
	}
	t.Logf("seeded %d records in %s", rowsWanted, time.Since(began).Round(time.Millisecond))

	w := &writer{longest: map[string]time.Duration{}}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); w.run(ctx, l, pool, stop) }()
	phase := func(name string, fn func() error) time.Duration {
		w.enter(name)
		t0 := time.Now()
		if err := fn(); err != nil {
			close(stop)
			t.Fatalf("%s: %v", name, err)
		}
		took := time.Since(t0)
		time.Sleep(50 * time.Millisecond) // let a write blocked on the phase finish inside it
		return took
	}
	w.enter("before")
	time.Sleep(200 * time.Millisecond)
	var bound time.Time
	prep := phase("prepare", func() error {
		var ok bool
		var err error
		bound, ok, err = billing.PrepareLegacy(ctx, pool, time.Now())
		if err == nil && !ok {
			err = fmt.Errorf("an unpartitioned ledger was taken as partitioned")
		}
		return err
	})
	mig := phase("migrate", func() error {
		res, err := database.Migrate(ctx, pool, database.Core, log)
		if err == nil && (len(res.Applied) == 0 || res.Applied[0] != 92) {
			err = fmt.Errorf("applied %v, want 0092 first", res.Applied)
		}
		return err
	})
	w.enter("after")
	time.Sleep(200 * time.Millisecond)
	close(stop)
	<-done
	if w.err != nil {
		t.Fatalf("a write failed: %v", w.err)
	}
	t.Logf("%d records: prepare took %s, the migration %s; the writer's longest write: before %s, prepare %s, migrate %s, after %s (%d writes)",
		rowsWanted, prep.Round(time.Millisecond), mig.Round(time.Millisecond), w.longest["before"], w.longest["prepare"],
		w.longest["migrate"], w.longest["after"], len(w.written))
	if w.longest["migrate"] > 5*time.Second {
		t.Fatalf("writers waited %s on the migration, want at most seconds", w.longest["migrate"])
	}

	// Every record is there once, the old ones in the legacy partition.
	var total, legacy int64
	var kind string
	if err := pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE tableoid = 'usage_records_legacy'::regclass),
		(SELECT relkind::text FROM pg_class WHERE oid = 'usage_records'::regclass) FROM usage_records`).Scan(&total, &legacy, &kind); err != nil {
		t.Fatal(err)
	}
	if kind != "p" || total != rowsWanted+int64(len(w.written)) || legacy < rowsWanted {
		t.Fatalf("after: kind %s, %d records (%d legacy); want partitioned, %d + %d written, the old ones legacy",
			kind, total, legacy, rowsWanted, len(w.written))
	}
	// The legacy partition ends at the prepared bound; the month after it
	// has a partition of its own, and a retry still meets its record.
	r := voiceRecord(w.written[0])
	var at time.Time
	if err := pool.QueryRow(ctx, `SELECT created_at FROM usage_records WHERE session_id = $1`, r.SessionID).Scan(&at); err != nil {
		t.Fatal(err)
	}
	r.CreatedAt = at
	again, err := l.Write(ctx, pool, r)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM usage_records WHERE session_id = $1`, r.SessionID).Scan(&n); err != nil || n != 1 || again.SessionID != r.SessionID {
		t.Fatalf("a retry of a record written before the migration: %d records (%v), want 1", n, err)
	}
	later := voiceRecord("vs_after_bound")
	later.CreatedAt = bound.Add(time.Minute)
	if _, err := l.Write(ctx, pool, later); err != nil {
		t.Fatal(err)
	}
	var holder string
	if err := pool.QueryRow(ctx, `SELECT tableoid::regclass::text FROM usage_records WHERE session_id = 'vs_after_bound'`).Scan(&holder); err != nil {
		t.Fatal(err)
	}
	if want := "usage_records_" + bound.Format("2006_01"); holder != want {
		t.Fatalf("a record after the bound is in %s, want %s", holder, want)
	}
}

// Without `voxgate ledger prepare`, migration 0092 does the same steps
// itself for a small ledger, and refuses a large one, naming the command.
func TestMigrationPartitionsASmallLedgerItself(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		name    string
		claimed int // reltuples as the planner would have it, 0 to leave it
		refused bool
	}{{"small", 0, false}, {"large", 300_000, true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pool := pgtest.NewPool(t, pgtest.EmptyURL(t), 2)
			if _, err := database.Migrate(ctx, pool, before0092(t), log); err != nil {
				t.Fatal(err)
			}
			if _, err := pool.Exec(ctx, `INSERT INTO usage_records (user_id, session_id, kind, provider, model, price_version, usage_source, created_at, cost_micros)
				SELECT 'u', 'vs_' || i, 'voice', 'openai', 'gpt-realtime', 'v1', 'none', now() - i * interval '1 minute', 7
				FROM generate_series(1, 2000) AS i`); err != nil {
				t.Fatal(err)
			}
			if tc.claimed > 0 {
				// The estimate the migration's guard reads (pg_class.reltuples),
				// set as ANALYZE would for a ledger of that size.
				if _, err := pool.Exec(ctx, `UPDATE pg_class SET reltuples = $1 WHERE oid = 'usage_records'::regclass`, tc.claimed); err != nil {
					t.Fatal(err)
				}
			}
			_, err := database.Migrate(ctx, pool, database.Core, log)
			if tc.refused {
				if err == nil || !strings.Contains(err.Error(), "voxgate ledger prepare") {
					t.Fatalf("a large unprepared ledger: %v, want a refusal naming voxgate ledger prepare", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// One more record through the parent: into the legacy partition,
			// counted once by the parent's trigger (the old table's own are gone).
			if _, err := pool.Exec(ctx, `INSERT INTO usage_records (user_id, session_id, kind, provider, model, price_version, usage_source, created_at, cost_micros)
				VALUES ('u', 'vs_new', 'voice', 'openai', 'gpt-realtime', 'v1', 'none', now() - interval '10 minutes', 7)`); err != nil {
				t.Fatal(err)
			}
			var legacy, deltas int64
			if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE tableoid = 'usage_records_legacy'::regclass),
				(SELECT coalesce(sum(cost_micros), 0) FROM usage_rollup_deltas) FROM usage_records`).Scan(&legacy, &deltas); err != nil {
				t.Fatal(err)
			}
			if legacy != 2001 || deltas != 2001*7 {
				t.Fatalf("%d records in the legacy partition, deltas worth %d; want 2001 and %d", legacy, deltas, 2001*7)
			}
		})
	}
}
