package audit

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// rowsOf counts the log's rows of a unit, across every partition.
func rowsOf(t *testing.T, pool *pgxpool.Pool, id string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM ai_audit_log WHERE turn_id = $1`, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Every end of one unit writes the unit's one created_at, which the log's
// key holds once it is partitioned (the next release): a unit ended twice,
// replayed, abandoned after its end or ended over a stale pending row, and
// one ended twice without a begin, have one row each.
func TestFinishedTwiceHasOneRow(t *testing.T) {
	t.Parallel()
	l, pool := newLog(t)
	ctx := context.Background()

	r := chatRow("turn_twice")
	if err := l.Begin(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Status, r.FiltersRan = Success, Required(KindChat)
	if err := l.Finish(ctx, r); err != nil {
		t.Fatal(err)
	}
	// The replay's pending row is gone: its created_at comes from the log.
	if err := l.Finish(ctx, r); err != nil {
		t.Errorf("a replay: %v, want nil", err)
	}
	r.Status = Degraded
	if err := l.Finish(ctx, r); !errors.Is(err, ErrFinal) {
		t.Errorf("a second, different end: %v, want ErrFinal", err)
	}
	var b pgx.Batch
	l.QueueAbandoned(&b, r.ID)
	if err := pool.SendBatch(ctx, &b).Close(); err != nil {
		t.Fatal(err)
	}

	// A begin retried while the end committed elsewhere missed the final
	// row and left a stale pending row, later than the unit's start: an end
	// that finds it still meets the final row.
	if _, err := pool.Exec(ctx, `INSERT INTO ai_audit_pending (turn_id, kind, user_id, session_id, route)
		VALUES ($1, 'chat', 'u1', 's1', 'default')`, r.ID); err != nil {
		t.Fatal(err)
	}
	r.Status = Success
	if err := l.Finish(ctx, r); err != nil {
		t.Errorf("an end over a stale pending row: %v, want nil (a replay)", err)
	}

	if n := rowsOf(t, pool, r.ID); n != 1 {
		t.Errorf("%s: %d rows after two ends, a third, an abandonment and a stale begin's end, want 1", r.ID, n)
	}

	// No begin: the first end takes now(), the replay the log's.
	nb := chatRow("turn_twice_nobegin")
	nb.Status = Refused
	for range 2 {
		if err := l.Finish(ctx, nb); err != nil {
			t.Fatal(err)
		}
	}
	if n := rowsOf(t, pool, nb.ID); n != 1 {
		t.Errorf("%s: %d rows, want 1", nb.ID, n)
	}
}

// Two ends of one unit at once: the second waits on the pending row the
// first deletes, and then reads it from its own snapshot, so it writes
// the same key, meets the first's row, and answers as a replay.
func TestConcurrentEndsHaveOneRow(t *testing.T) {
	t.Parallel()
	l, pool := newLog(t)
	ctx := context.Background()
	r := chatRow("turn_race")
	if err := l.Begin(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Status, r.FiltersRan = Success, Required(KindChat)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if err := New(tx).Finish(ctx, r); err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() { second <- l.Finish(ctx, r) }()
	// Commit the first only once the second waits on its lock.
	for waiting := false; !waiting; {
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%ai_audit_pending%')`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-second:
			t.Fatalf("the second end returned before the first committed: %v", err)
		case <-time.After(5 * time.Millisecond): // the condition is polled
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Errorf("the second end: %v, want nil (a replay)", err)
	}
	if n := rowsOf(t, pool, r.ID); n != 1 {
		t.Errorf("%d rows after two concurrent ends, want 1", n)
	}
}
