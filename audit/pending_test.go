package audit

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/page"
)

// xactStats are the row counts of table in the current transaction.
func xactStats(t *testing.T, tx pgx.Tx, table string) (ins, upd, del int64) {
	t.Helper()
	if err := tx.QueryRow(context.Background(), `SELECT n_tup_ins, n_tup_upd, n_tup_del
		FROM pg_stat_xact_user_tables WHERE relname = $1`, table).Scan(&ins, &upd, &del); err != nil {
		t.Fatal(err)
	}
	return ins, upd, del
}

// The log is append-only: N units that begin and finish, through the
// statements a completion sends (QueueBeginIf riding a batch, then
// QueueFinish), insert N log rows and update none; their pending rows
// come and go in ai_audit_pending.
func TestAppendOnly(t *testing.T) {
	t.Parallel()
	_, pool := newLog(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE FUNCTION audit_test_yes(text) RETURNS boolean LANGUAGE sql RETURN true`); err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	l := New(tx)
	const n = 20
	for i := range n {
		r := chatRow(fmt.Sprintf("turn_append_%d", i))
		var b pgx.Batch
		if err := l.QueueBeginIf(&b, r, "audit_test_yes"); err != nil {
			t.Fatal(err)
		}
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			t.Fatal(err)
		}
		r.Status, r.FiltersRan = Success, Required(KindChat)
		b = pgx.Batch{}
		fin, err := l.QueueFinish(&b, r)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			t.Fatal(err)
		}
		if err := fin.Err(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if ins, upd, _ := xactStats(t, tx, "ai_audit_log"); ins != n || upd != 0 {
		t.Errorf("ai_audit_log: %d inserted, %d updated; want %d inserted, none updated", ins, upd, n)
	}
	if ins, upd, del := xactStats(t, tx, "ai_audit_pending"); ins != n || upd != 0 || del != n {
		t.Errorf("ai_audit_pending: %d inserted, %d updated, %d deleted; want %d, 0, %d", ins, upd, del, n, n)
	}
	if got, err := l.Get(ctx, "turn_append_3"); err != nil || got.Status != Success || got.InputHash != Hash("hello") {
		t.Errorf("a finished unit: %+v %v, want success with its begin's input hash", got, err)
	}
}

// A unit is pending from Begin to Finish, in Get and in List, merged into
// the log's order (newest first) under the same filters; a unit that
// finished already gets no pending row from a retried Begin, and a second
// Begin keeps the first.
func TestPendingListed(t *testing.T) {
	t.Parallel()
	l, pool := newLog(t)
	ctx := context.Background()
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	for i := range 12 {
		r := chatRow(fmt.Sprintf("turn_%02d", i))
		if i%3 == 0 {
			r.UserID, r.Kind, r.Route = "u2", KindCompletion, "chat"
		}
		if err := l.Begin(ctx, r); err != nil {
			t.Fatal(err)
		}
		// Starts a minute apart, interleaving pending and final units.
		if _, err := pool.Exec(ctx, `UPDATE ai_audit_pending SET created_at = $2 WHERE turn_id = $1`,
			r.ID, base.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			r.Status = Degraded
			if err := l.Finish(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if r, err := l.Get(ctx, "turn_03"); err != nil || r.Status != Pending || r.FinishedAt != nil || r.UserID != "u2" ||
		r.Kind != KindCompletion || r.InputHash != Hash("hello") || !r.CreatedAt.Equal(base.Add(3*time.Minute)) {
		t.Errorf("Get of a pending unit: %+v %v", r, err)
	}
	if r, err := l.Get(ctx, "turn_04"); err != nil || r.Status != Degraded || !r.CreatedAt.Equal(base.Add(4*time.Minute)) {
		t.Errorf("Get of a finished unit: %+v %v, want degraded, created at its start", r, err)
	}
	ids := func(f Filter, limit int) []string {
		t.Helper()
		f.From, f.To = base.Add(-time.Minute), time.Now().Add(time.Minute)
		var out []string
		p := page.Request{Limit: limit}
		for {
			got, err := l.List(ctx, f, p)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range got.Items {
				if (r.Status == Pending) != (r.FinishedAt == nil) {
					t.Errorf("%s: %s with finished_at %v", r.ID, r.Status, r.FinishedAt)
				}
				out = append(out, r.ID)
			}
			if got.NextCursor == nil {
				return out
			}
			if p, err = page.FromQuery(url.Values{"limit": {fmt.Sprint(limit)}, "cursor": {*got.NextCursor}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := func(keep func(i int) bool) []string {
		var out []string
		for i := 11; i >= 0; i-- {
			if keep(i) {
				out = append(out, fmt.Sprintf("turn_%02d", i))
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    Filter
		keep func(int) bool
	}{
		{"all", Filter{}, func(int) bool { return true }},
		{"pending", Filter{Status: Pending}, func(i int) bool { return i%2 == 1 }},
		{"degraded", Filter{Status: Degraded}, func(i int) bool { return i%2 == 0 }},
		{"u2", Filter{UserID: "u2"}, func(i int) bool { return i%3 == 0 }},
		{"u1 chat pending", Filter{UserID: "u1", Kind: KindChat, Status: Pending}, func(i int) bool { return i%2 == 1 && i%3 != 0 }},
	} {
		for _, limit := range []int{100, 5, 1} {
			if got, w := ids(tc.f, limit), want(tc.keep); !slices.Equal(got, w) {
				t.Errorf("%s, pages of %d: %v, want %v", tc.name, limit, got, w)
			}
		}
	}

	// A retried Begin of a finished unit (a voice tool call) makes no
	// pending row; a second Begin of a pending one keeps the first.
	done := chatRow("turn_00")
	if err := l.Begin(ctx, done); err != nil {
		t.Fatal(err)
	}
	again := chatRow("turn_01")
	again.InputHash = Hash("other")
	if err := l.Begin(ctx, again); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM ai_audit_pending WHERE turn_id = 'turn_00'
		OR (turn_id = 'turn_01' AND input_hash <> $1)`, Hash("hello")).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d pending rows for a finished unit or a replaced begin (%v), want none", n, err)
	}
}
