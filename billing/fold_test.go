package billing_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/internal/testkit"
)

// wideFixture is a ledger over a pool of n connections.
func wideFixture(t testing.TB, n int32) fixture {
	t.Helper()
	pool := pgtest.NewPool(t, pgtest.URL(t), n)
	prices, err := billing.DefaultPrices()
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	l, err := billing.NewLedger(billing.LedgerParams{Pool: pool, Prices: prices, Registerer: reg,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return fixture{pool, l, reg}
}

// completion is a completion record of user for gpt-6-luna: every user's
// records of the model share its 15-minute bucket.
func completion(user string, n int) billing.Record {
	return billing.Record{UserID: user, SessionID: fmt.Sprintf("cmpl-%s-%d", user, n), TurnID: fmt.Sprintf("cmpl-%s-%d", user, n),
		Kind: billing.KindCompletion, Provider: "openai", Model: "gpt-6-luna",
		Usage: billing.Usage{TextIn: 12, TextOut: 10}, UsageSource: billing.SourceProviderReported}
}

// A record's transaction left open holds no lock another user's record of
// the same model and bucket waits on: the second writes under a lock
// timeout of a second and commits while the first is still open.
func TestRecordsOfOneModelDoNotWaitOnEachOther(t *testing.T) {
	t.Parallel()
	fx := wideFixture(t, 4)
	ctx := context.Background()
	open, err := fx.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Rollback(ctx)
	if _, err := fx.ledger.Write(ctx, open, completion("alice", 1)); err != nil {
		t.Fatal(err)
	}
	err = pgx.BeginFunc(ctx, fx.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '1s'`); err != nil {
			return err
		}
		_, err := fx.ledger.Write(ctx, tx, completion("bob", 1))
		return err
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "55P03" {
		t.Fatalf("bob's record waited on alice's open transaction: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := open.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// Sixteen users write records of one model at once while two replicas
// fold the rollups: no writer is ever seen waiting on another's row lock
// (pg_stat_activity, sampled throughout), and at every moment the rollups and the pending
// deltas, read in one snapshot, hold exactly the records.
func TestConcurrentRecordsAndFoldsStayExact(t *testing.T) {
	t.Parallel()
	const writers, each = 16, 25
	fx := wideFixture(t, writers+4)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var wg sync.WaitGroup
	var written atomic.Int64
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := fx.ledger.Write(ctx, fx.pool, completion(fmt.Sprintf("u%02d", w), i)); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				written.Add(1)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	// A second replica folds too, as fast as it can.
	other := make(chan error, 1)
	go func() {
		for {
			select {
			case <-done:
				other <- nil
				return
			default:
			}
			if _, err := fx.ledger.Fold(ctx); err != nil {
				other <- err
				return
			}
		}
	}()

	const invariantSQL = `SELECT
		(SELECT count(*) FROM usage_records),
		(SELECT coalesce(sum(records), 0) FROM usage_rollups) + (SELECT coalesce(sum(records), 0) FROM usage_rollup_deltas),
		(SELECT coalesce(sum(cost_micros), 0) FROM usage_records)::text,
		((SELECT coalesce(sum(cost_micros), 0) FROM usage_rollups) + (SELECT coalesce(sum(cost_micros), 0) FROM usage_rollup_deltas))::text`
	waits, checks := 0, 0
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		if _, err := fx.ledger.Fold(ctx); err != nil {
			t.Fatal(err)
		}
		var n int
		// A row lock waited on shows as a wait for the holder's
		// transaction (or for the tuple); a brief wait to extend a file
		// that many inserts share ('extend') is not one.
		if err := fx.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event IN ('transactionid', 'tuple')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		waits += n
		var records, rolled int64
		var cost, rolledCost string
		if err := fx.pool.QueryRow(ctx, invariantSQL).Scan(&records, &rolled, &cost, &rolledCost); err != nil {
			t.Fatal(err)
		}
		if records != rolled || cost != rolledCost {
			t.Fatalf("records %d (%s µ$), rollups and deltas %d (%s µ$)", records, cost, rolled, rolledCost)
		}
		checks++
	}
	if err := <-other; err != nil {
		t.Fatalf("the other replica's fold: %v", err)
	}
	if written.Load() != writers*each {
		t.Fatalf("%d records written, want %d", written.Load(), writers*each)
	}
	if waits != 0 {
		t.Fatalf("%d samples of a connection waiting on a row lock over %d checks", waits, checks)
	}
	if _, err := fx.ledger.Fold(ctx); err != nil {
		t.Fatal(err)
	}
	var pending int64
	if err := fx.pool.QueryRow(ctx, `SELECT count(*) FROM usage_rollup_deltas`).Scan(&pending); err != nil || pending != 0 {
		t.Fatalf("%d deltas left after the last fold (%v)", pending, err)
	}
	t.Logf("%d consistency checks and lock samples during %d writes", checks, writers*each)
}

// A running fold takes what its replica wrote within about a second.
func TestRunFoldFoldsWhatItsReplicaWrote(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { fx.ledger.RunFold(ctx); close(stopped) }()
	defer func() { cancel(); <-stopped }()
	if _, err := fx.ledger.Write(ctx, fx.pool, completion("carol", 1)); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	testkit.Eventually(t, wctx, "no deltas pending and 1 record rolled up after the write", func() bool {
		var pending, rolled int64
		if err := fx.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM usage_rollup_deltas),
			(SELECT coalesce(sum(records), 0) FROM usage_rollups)`).Scan(&pending, &rolled); err != nil {
			t.Fatal(err)
		}
		return pending == 0 && rolled == 1
	})
}
