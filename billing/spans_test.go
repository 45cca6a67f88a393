package billing_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/voxgate/voxgate/billing"
)

// A summary by user reads per-user days and hours inside the range, the
// 15-minute rollup and the records at its edges: whatever the edges, each
// user's figures equal that user's records, both as the trigger keeps the
// rollups and after usage_rollups_rebuild builds them again.
func TestSummaryByUserAnyRange(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	seed(t, fx.pool, 1500, "alice", "bob", "carol", "dave")
	ctx := context.Background()
	all, err := pageAll(ctx, fx.ledger, billing.Filter{From: oct1, To: nov1.AddDate(0, 1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	kolkata, _ := time.LoadLocation("Asia/Kolkata")
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		name string
		f    billing.Filter
	}{
		{"utc month", billing.Filter{From: oct1, To: nov1}},
		{"kolkata month", billing.Filter{From: time.Date(2026, 10, 1, 0, 0, 0, 0, kolkata), To: time.Date(2026, 11, 1, 0, 0, 0, 0, kolkata), TZ: kolkata}},
		{"edges inside buckets", billing.Filter{From: at("2026-10-03T10:07:00Z"), To: at("2026-10-19T23:59:59.5Z")}},
		{"within an hour", billing.Filter{From: at("2026-10-05T10:00:00Z"), To: at("2026-10-05T10:59:00Z")}},
		{"across one midnight", billing.Filter{From: at("2026-10-05T22:15:00Z"), To: at("2026-10-06T01:45:00Z")}},
		{"one user", billing.Filter{From: at("2026-10-02T07:30:00Z"), To: at("2026-10-20T00:00:00Z"), UserID: "bob"}},
		{"with a kind", billing.Filter{From: at("2026-10-02T07:30:00Z"), To: at("2026-10-20T00:00:00Z"), Kind: billing.KindChat}},
	}
	check := func(t *testing.T, f billing.Filter) {
		t.Helper()
		type want struct{ records, unpriced, cost, duration int64 }
		wants := map[string]*want{}
		for _, r := range all {
			if r.CreatedAt.Before(f.From) || !r.CreatedAt.Before(f.To) ||
				(f.UserID != "" && r.UserID != f.UserID) || (f.Kind != "" && r.Kind != f.Kind) {
				continue
			}
			w := wants[r.UserID]
			if w == nil {
				w = &want{}
				wants[r.UserID] = w
			}
			w.records++
			w.duration += r.DurationMS
			if r.CostMicros == nil {
				w.unpriced++
			} else {
				w.cost += *r.CostMicros
			}
		}
		s, err := fx.ledger.Summarize(ctx, f, "user")
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Groups) != len(wants) {
			t.Fatalf("%d users, want %d: %+v", len(s.Groups), len(wants), s.Groups)
		}
		for _, g := range s.Groups {
			w := wants[g.Key]
			if w == nil {
				t.Fatalf("user %q has no records in the range", g.Key)
			}
			got := fmt.Sprintf("%d records, %d unpriced, %s micro-USD, %s ms", g.Records, g.Unpriced, g.CostMicros, g.DurationMS)
			if wantText := fmt.Sprintf("%d records, %d unpriced, %d micro-USD, %d ms", w.records, w.unpriced, w.cost, w.duration); got != wantText {
				t.Errorf("user %s: %s, want %s", g.Key, got, wantText)
			}
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { check(t, c.f) })
	}
	if _, err := fx.pool.Exec(ctx, `SELECT usage_rollups_rebuild()`); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run("rebuilt/"+c.name, func(t *testing.T) { check(t, c.f) })
	}
}
