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
