package quota

import (
	"context"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/config"
)

// TestReconciliation: settlement replaces each reservation with the real
// usage, whether larger or smaller; totals are the exact sum of
// settlements; refusal happens exactly at the boundary.
func TestReconciliation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustService(t, testPool(t), onePlan(config.Plan{TokensPerDay: 1000, CostPerDayMicros: 1000}), newClock(t0))
	p := user(t)
	steps := []struct {
		name                string
		est, use            int64
		wantUsed, wantTotal int64 // after settling
	}{
		{name: "actual above the estimate", est: 300, use: 500, wantTotal: 500},
		{name: "actual below the estimate", est: 400, use: 100, wantTotal: 600},
		{name: "nothing used", est: 200, use: 0, wantTotal: 600},
	}
	for _, st := range steps {
		tk := mustAdmit(t, s, p, Estimate{Tokens: st.est, CostMicros: st.est})
		if got := tk.Daily.ReservedTokens; got != st.est {
			t.Errorf("%s: got %d reserved, want %d", st.name, got, st.est)
		}
		d, err := tk.Settle(ctx, Usage{Tokens: st.use, CostMicros: st.use})
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if d.Tokens != st.wantTotal || d.CostMicros != st.wantTotal || d.ReservedTokens != 0 {
			t.Errorf("%s: got %d tokens, %d cost, %d reserved; want %d, %d, 0",
				st.name, d.Tokens, d.CostMicros, d.ReservedTokens, st.wantTotal, st.wantTotal)
		}
	}

	// 600 used. An estimate of exactly the 400 left is admitted; while it
	// is in flight even 1 more is refused, briefly (it is in flight).
	big := mustAdmit(t, s, p, Estimate{Tokens: 400})
	_, err := s.Admit(ctx, p, Estimate{Tokens: 1})
	wantDenied(t, err, apierr.QuotaExceeded, ReasonTokens, inflightRetry)
	if _, err := big.Settle(ctx, Usage{Tokens: 399}); err != nil {
		t.Fatal(err)
	}
	// 999 used: 1 fits exactly, 2 do not, and now until midnight.
	_, err = s.Admit(ctx, p, Estimate{Tokens: 2})
	wantDenied(t, err, apierr.QuotaExceeded, ReasonTokens, toMidnight)
	last := mustAdmit(t, s, p, Estimate{Tokens: 1})
	d, err := last.Settle(ctx, Usage{Tokens: 1})
	if err != nil {
		t.Fatal(err)
	}
	if d.Tokens != 1000 {
		t.Errorf("got %d tokens, want exactly 1000", d.Tokens)
	}
	// At the limit an estimate of 0 still fits (used + 0 ≤ limit).
	mustAdmit(t, s, p, Estimate{})
	r, err := s.Report(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if u := r.Usage[ReasonTokens]; u.Used != 1000 || u.Remaining == nil || *u.Remaining != 0 {
		t.Errorf("got report %+v, want 1000 used, 0 remaining", u)
	}
}
