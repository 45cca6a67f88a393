package billing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/billing"
)

// maxPrices prices one model at billing.MaxPrice for every class it bills,
// the most a record can cost.
const maxPrices = `version: max
models:
  max-model:
    source: the largest prices config accepts
    date: "2026-11-01"
    text_in: 100000000000
    text_out: 100000000000
    audio_in: 100000000000
    audio_out: 100000000000
    image_in: 100000000000
`

// TestSummaryBeyondInt64: records at billing.MaxCount tokens priced at
// billing.MaxPrice cost 5×10¹⁷ micro-USD each, so 20 of them pass 2⁶³. Every
// grouping answers the exact sums, as JSON numbers with every digit: one
// group beyond int64 (by day) and a total beyond it over groups that each
// fit (by user).
func TestSummaryBeyondInt64(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	prices, err := billing.LoadPrices([]byte(maxPrices))
	if err != nil {
		t.Fatal(err)
	}
	ledger, err := billing.NewLedger(billing.LedgerParams{Pool: fx.pool, Prices: prices, Registerer: prometheus.NewRegistry(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	ctx := context.Background()
	top := billing.Usage{TextIn: billing.MaxCount, TextOut: billing.MaxCount, AudioIn: billing.MaxCount,
		AudioOut: billing.MaxCount, ImageIn: billing.MaxCount}
	var cost int64
	for i := range n {
		r, err := ledger.Write(ctx, fx.pool, billing.Record{
			UserID: fmt.Sprintf("u%02d", i), SessionID: fmt.Sprintf("vs_max_%d", i), Kind: billing.KindVoice,
			Provider: "openai", Model: "max-model", Usage: top, DurationMS: billing.MaxCount,
			UsageSource: billing.SourceClientReported,
		})
		if err != nil {
			t.Fatal(err)
		}
		cost = *r.CostMicros
	}
	if cost != 5*billing.MaxCount*(billing.MaxPrice/1_000_000) {
		t.Fatalf("got %d micros per record, want 5×10¹⁷", cost)
	}
	times := func(v int64, k int) string {
		return new(big.Int).Mul(big.NewInt(v), big.NewInt(int64(k))).String()
	}
	wantTotal := map[string]string{
		"cost_micros": times(cost, n), "duration_ms": times(billing.MaxCount, n),
		"tokens_in": times(3*billing.MaxCount, n), "tokens_out": times(2*billing.MaxCount, n),
	}
	today := time.Now().UTC()
	window := "from=" + today.Add(-time.Hour).Format(time.RFC3339) + "&to=" + today.Add(time.Hour).Format(time.RFC3339)
	tests := []struct {
		name, groupBy string
		groups        int
		wantGroup     map[string]string // every group's sums
	}{
		{"one day beyond int64", "day", 1, wantTotal},
		{"twenty users, each within int64", "user", n, map[string]string{
			"cost_micros": times(cost, 1), "duration_ms": times(billing.MaxCount, 1),
			"tokens_in": times(3*billing.MaxCount, 1), "tokens_out": times(2*billing.MaxCount, 1),
		}},
		{"one model beyond int64", "model", 1, wantTotal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := get(t, ledger.HandleSummary, "/v1/admin/costs/summary?group_by="+tc.groupBy+"&"+window)
			if rec.Code != 200 {
				t.Fatalf("got status %d, want 200: %s", rec.Code, rec.Body)
			}
			var body struct {
				Groups []map[string]any `json:"groups"`
				Total  map[string]any   `json:"total"`
			}
			dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
			dec.UseNumber()
			if err := dec.Decode(&body); err != nil {
				t.Fatal(err)
			}
			if len(body.Groups) != tc.groups {
				t.Fatalf("got %d groups, want %d", len(body.Groups), tc.groups)
			}
			for field, want := range wantTotal {
				if got := fmt.Sprint(body.Total[field]); got != want {
					t.Errorf("total.%s: got %s, want %s", field, got, want)
				}
				for i, g := range body.Groups {
					if got := fmt.Sprint(g[field]); got != tc.wantGroup[field] {
						t.Errorf("group %d %s: got %s, want %s", i, field, got, tc.wantGroup[field])
					}
				}
			}
		})
	}
}
