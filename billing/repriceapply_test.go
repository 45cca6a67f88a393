package billing_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/billing"
)

// Applying a later table rewrites the range's costs and version in one
// transaction with its audit row, and the summaries follow; a table that
// would unprice a priced record is refused and writes nothing.
func TestApplyReprice(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	// 10,000 in × $0.10 + 1,000 out × $0.50 per 1M = 1,500 micros each.
	for _, s := range []string{"cmpl-ra-1", "cmpl-ra-2"} {
		rec, err := fx.ledger.Write(ctx, fx.pool, billing.Record{UserID: "dana", SessionID: s, TurnID: s, Kind: billing.KindCompletion,
			Provider: "openai", Model: "gpt-6-luna", Usage: billing.Usage{TextIn: 10_000, TextOut: 1_000}, UsageSource: billing.SourceProviderReported})
		if err != nil || rec.CostMicros == nil || *rec.CostMicros != 1_500 {
			t.Fatalf("write: %+v, %v", rec.CostMicros, err)
		}
	}
	table, err := os.ReadFile("prices.yaml")
	if err != nil {
		t.Fatal(err)
	}
	luna := "gpt-6-luna:\n    source: OpenAI model page, gpt-6-luna\n    date: \"2026-11-24\"\n    text_in: 100000\n"
	if !strings.Contains(string(table), luna) {
		t.Fatal("prices.yaml's gpt-6-luna row moved; update the test")
	}
	later := strings.Replace(string(table), luna, strings.Replace(luna, "text_in: 100000", "text_in: 200000", 1), 1)
	later = strings.Replace(later, `version: "2026-11-24"`, `version: "2026-12-01"`, 1)
	p, err := billing.LoadPrices([]byte(later))
	if err != nil {
		t.Fatal(err)
	}
	f, err := billing.ParseFilter(billing.FilterText{From: "2020-01-01", UserID: "dana"}, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	out, err := fx.ledger.ApplyReprice(ctx, f, p, "finance@example")
	if err != nil {
		t.Fatal(err)
	}
	// 10,000 × $0.20 + 1,000 × $0.50 = 2,500 each.
	if out.Total.Records != 2 || out.Total.OldCost.Int64() != 3_000 || out.Total.NewCost.Int64() != 5_000 {
		t.Fatalf("total %+v", out.Total)
	}
	var costs, versions []string
	rows, err := fx.pool.Query(ctx, `SELECT cost_micros::text, price_version FROM usage_records WHERE user_id = 'dana' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c, v string
		if err := rows.Scan(&c, &v); err != nil {
			t.Fatal(err)
		}
		costs, versions = append(costs, c), append(versions, v)
	}
	if strings.Join(costs, ",") != "2500,2500" || strings.Join(versions, ",") != "2026-12-01,2026-12-01" {
		t.Fatalf("records after apply: costs %v, versions %v", costs, versions)
	}
	var by, newCost string
	var n int64
	if err := fx.pool.QueryRow(ctx, `SELECT applied_by, records, new_cost::text FROM usage_repricings`).Scan(&by, &n, &newCost); err != nil {
		t.Fatal(err)
	}
	if by != "finance@example" || n != 2 || newCost != "5000" {
		t.Errorf("audit row: %s, %d records, new cost %s", by, n, newCost)
	}
	sum, err := fx.ledger.Summarize(ctx, f, "model")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := sum.Total.CostMicros.Int64(); got != 5_000 {
		t.Errorf("summary after apply: %d micros, want 5000", got)
	}

	// A table that forgot the model would take the costs away.
	bare, err := billing.LoadPrices([]byte("version: bare\nmodels:\n  whisper-1: {source: s, date: \"2026-01-01\", audio_per_minute: 6000}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fx.ledger.ApplyReprice(ctx, f, bare, "finance@example"); !errors.Is(err, billing.ErrRepriceUnprices) {
		t.Fatalf("a table without the model: %v, want ErrRepriceUnprices", err)
	}
	var audits int
	var total string
	if err := fx.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM usage_repricings), sum(cost_micros)::text FROM usage_records WHERE user_id = 'dana'`).Scan(&audits, &total); err != nil {
		t.Fatal(err)
	}
	if audits != 1 || total != "5000" {
		t.Errorf("after a refused apply: %d audit rows, costs %s; want 1 and 5000", audits, total)
	}
}
