package audit

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/page"
)

// listIDs is the ids List shows of the last hour's rows under f.
func listIDs(t *testing.T, l *Log, f Filter) map[string]Status {
	t.Helper()
	f.From, f.To = time.Now().Add(-time.Hour), time.Now().Add(time.Minute)
	got, err := l.List(context.Background(), f, page.Request{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Status{}
	for _, r := range got.Items {
		if _, twice := out[r.ID]; twice {
			t.Errorf("%s listed twice", r.ID)
		}
		out[r.ID] = r.Status
	}
	return out
}

// During a rolling update a replica of release 0088 still inserts its
// pending rows into the log: this release lists and gets them as pending
// and its Finish moves them, keeping their start.
func TestRolloutOldPendingRow(t *testing.T) {
	t.Parallel()
	l, pool := newLog(t)
	ctx := context.Background()
	r := chatRow("turn_old_begin")
	if _, err := pool.Exec(ctx, beginSQL0088, r.ID, r.Kind, r.UserID, r.SessionID, r.CallID, r.Tool, r.Route, r.InputHash); err != nil {
		t.Fatal(err)
	}
	if got := listIDs(t, l, Filter{Status: Pending}); got[r.ID] != Pending {
		t.Errorf("status=pending: %v, want %s pending", got, r.ID)
	}
	began, err := l.Get(ctx, r.ID)
	if err != nil || began.Status != Pending {
		t.Fatalf("Get: %+v %v, want pending", began, err)
	}
	r.Status, r.FiltersRan, r.InputHash = Success, Required(KindChat), ""
	if err := l.Finish(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := l.Finish(ctx, r); err != nil {
		t.Errorf("replaying the end: %v", err)
	}
	got, err := l.Get(ctx, r.ID)
	if err != nil || got.Status != Success || got.FinishedAt == nil || !got.CreatedAt.Equal(began.CreatedAt) ||
		got.InputHash != Hash("hello") {
		t.Errorf("after Finish: %+v %v, want success, created at %v, with the begin's input hash", got, err, began.CreatedAt)
	}
	if got := listIDs(t, l, Filter{Status: Pending}); len(got) != 0 {
		t.Errorf("status=pending after the end: %v, want none", got)
	}
}

// A replica of release 0088 that finishes a unit this release began (a
// voice tool call retried there) inserts a final log row and leaves the
// pending row stale: List shows the unit once, final, and Sweep deletes
// the stale row and nothing else.
func TestStalePendingSwept(t *testing.T) {
	t.Parallel()
	l, pool := newLog(t)
	ctx := context.Background()
	r, live := chatRow("turn_stale"), chatRow("turn_live")
	for _, b := range []Row{r, live} {
		if err := l.Begin(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	trace, _ := json.Marshal([]TraceEntry{})
	if _, err := pool.Exec(ctx, finishSQL0088, r.ID, r.Kind, r.UserID, r.SessionID, r.CallID, r.Tool, r.Route,
		"", "", Degraded, "", trace, []string{}, []string{}, r.InputHash, "", 5); err != nil {
		t.Fatal(err)
	}
	for _, f := range []Filter{{}, {Status: Pending}, {UserID: "u1"}} {
		got := listIDs(t, l, f)
		if st, ok := got[r.ID]; (f.Status == Pending && ok) || (f.Status == "" && st != Degraded) || got[live.ID] != Pending {
			t.Errorf("%+v: %v, want %s degraded (absent when pending) and %s pending", f, got, r.ID, live.ID)
		}
	}
	if got, err := l.Get(ctx, r.ID); err != nil || got.Status != Degraded {
		t.Errorf("Get: %+v %v, want degraded", got, err)
	}
	if n, err := l.Sweep(ctx); err != nil || n != 1 {
		t.Errorf("Sweep: %d %v, want 1 deleted", n, err)
	}
	var left []string
	if err := pool.QueryRow(ctx, `SELECT array_agg(turn_id) FROM ai_audit_pending`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0] != live.ID {
		t.Errorf("pending rows after Sweep: %v, want only %s", left, live.ID)
	}
}
