package audit

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestQueueBeginIf: a pending row that rides another statement's batch
// is inserted only when the predicate holds in that transaction, and
// text PostgreSQL would refuse is refused before it can fail the batch.
func TestQueueBeginIf(t *testing.T) {
	t.Parallel()
	l, pool := newLog(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE OR REPLACE FUNCTION audit_test_always(text) RETURNS boolean LANGUAGE sql RETURN true`); err != nil {
		t.Fatal(err)
	}
	yes, no := chatRow("turn_ride_yes"), chatRow("turn_ride_no")
	var b pgx.Batch
	if err := l.QueueBeginIf(&b, yes, "audit_test_always"); err != nil {
		t.Fatal(err)
	}
	// No ticket of this user was admitted in this transaction.
	if err := l.QueueBeginIf(&b, no, "quota_admitted_now"); err != nil {
		t.Fatal(err)
	}
	if err := pool.SendBatch(ctx, &b).Close(); err != nil {
		t.Fatal(err)
	}
	if r, err := l.Get(ctx, yes.ID); err != nil || r.Status != Pending {
		t.Errorf("predicate true: %+v, %v; want a pending row", r, err)
	}
	if _, err := l.Get(ctx, no.ID); err == nil {
		t.Error("predicate false: a row was inserted")
	}
	bad := chatRow("turn_ride_bad")
	bad.Route = "chat\x00"
	if err := l.QueueBeginIf(&b, bad, "audit_test_always"); err == nil {
		t.Error("a route with a NUL byte was queued")
	}
}

// TestQueueAbandoned: a pending row whose unit never ran ends refused,
// cancelled; a row already final is left as it was.
func TestQueueAbandoned(t *testing.T) {
	t.Parallel()
	l, pool := newLog(t)
	ctx := context.Background()
	pending, final := chatRow("turn_abandoned"), chatRow("turn_final")
	for _, r := range []Row{pending, final} {
		if err := l.Begin(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	done := final
	done.Status, done.FiltersRan = Success, Required(KindChat)
	if err := l.Finish(ctx, done); err != nil {
		t.Fatal(err)
	}
	var b pgx.Batch
	l.QueueAbandoned(&b, pending.ID)
	l.QueueAbandoned(&b, final.ID)
	if err := pool.SendBatch(ctx, &b).Close(); err != nil {
		t.Fatal(err)
	}
	if r, err := l.Get(ctx, pending.ID); err != nil || r.Status != Refused || r.ErrorCode != "cancelled" || r.FinishedAt == nil {
		t.Errorf("abandoned: %+v, %v; want refused, cancelled, finished", r, err)
	}
	if r, err := l.Get(ctx, final.ID); err != nil || r.Status != Success {
		t.Errorf("final: %+v, %v; want it left success", r, err)
	}
}
