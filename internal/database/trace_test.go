package database_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// The pool counts what it sends: a query is a statement and a round trip,
// a batch of three is three statements in one trip, a transaction's begin
// and commit are statements of their own, and a statement's first run on
// a connection adds the trip that prepares it.
func TestPoolCountsStatementsAndRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := database.Open(ctx, pgtest.URL(t), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(database.NewPoolCollector(pool))
	read := func() (stmts, trips float64) {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			switch mf.GetName() {
			case "voxgate_db_statements_total":
				stmts = mf.GetMetric()[0].GetCounter().GetValue()
			case "voxgate_db_round_trips_total":
				trips = mf.GetMetric()[0].GetCounter().GetValue()
			}
		}
		return stmts, trips
	}
	if _, err := pool.Exec(ctx, `SELECT 1`); err != nil { // warm: the one connection is open
		t.Fatal(err)
	}
	var n int
	for i, want := range []float64{2, 1} { // prepared on its first run
		s0, r0 := read()
		if err := pool.QueryRow(ctx, `SELECT $1::int`, i).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if s, r := read(); s-s0 != 1 || r-r0 != want {
			t.Fatalf("run %d of a query: %v statements, %v round trips; want 1, %v", i+1, s-s0, r-r0, want)
		}
	}
	s0, r0 := read()
	b := &pgx.Batch{}
	b.Queue(`SELECT 1`)
	b.Queue(`SELECT 2`)
	b.Queue(`SELECT 3`)
	if err := pool.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	if s, r := read(); s-s0 != 3 || r-r0 < 1 {
		t.Fatalf("a batch of three: %v statements, %v round trips; want 3 and at least 1", s-s0, r-r0)
	}
	s0, _ = read()
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `SELECT 4`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := read(); s-s0 != 3 {
		t.Fatalf("begin, a query, commit: %v statements, want 3", s-s0)
	}
	if got := testutil.CollectAndCount(database.NewPoolCollector(pool)); got != 9 {
		t.Fatalf("the collector exports %d metrics, want the pool's 7 and the 2 counts", got)
	}
}
