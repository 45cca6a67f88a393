package billing_test

import (
	"context"
	"testing"

	"github.com/voxgate/voxgate/billing"
)

// Late usage is priced as a record written with it would be: the same cost,
// or unpriced and counted, and only once.
func TestAttachUsagePricesAsWriteDoes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, model  string
		wantCost     *int64
		wantUnpriced float64
	}{
		{"priced", "gpt-realtime-2025-08-28", ptr(75_240), 0},
		{"unpriced model", "gpt-realtime-next", nil, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fx := newFixture(t)
			ctx := context.Background()
			empty := billing.Record{UserID: "alice", SessionID: "vs_late", Kind: billing.KindVoice, Provider: "openai",
				Model: c.model, UsageSource: billing.SourceNone}
			if _, err := fx.ledger.Write(ctx, fx.pool, empty); err != nil {
				t.Fatal(err)
			}
			late := voiceRecord("vs_late")
			late.Model = c.model
			got, err := fx.ledger.AttachUsage(ctx, fx.pool, late)
			if err != nil {
				t.Fatal(err)
			}
			if !sameCost(got.CostMicros, c.wantCost) || got.Unpriced != (c.wantCost == nil) {
				t.Fatalf("got cost %v, unpriced %v, want %v, %v", show(got.CostMicros), got.Unpriced, show(c.wantCost), c.wantCost == nil)
			}
			if _, err := fx.ledger.AttachUsage(ctx, fx.pool, late); err != nil {
				t.Fatal(err)
			}
			// An empty record costs nothing whatever its model; the attach
			// counts an unpriced record once, the repeat not at all.
			if got := unpricedCount(t, fx); got != c.wantUnpriced {
				t.Fatalf("got %v unpriced records counted, want %v", got, c.wantUnpriced)
			}
		})
	}
}

func ptr(n int64) *int64 { return &n }

func sameCost(a, b *int64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func show(c *int64) any {
	if c == nil {
		return "nil"
	}
	return *c
}

func unpricedCount(t *testing.T, fx fixture) float64 {
	t.Helper()
	mfs, err := fx.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() == "voxgate_billing_unpriced_records_total" {
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}
