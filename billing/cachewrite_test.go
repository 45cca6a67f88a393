package billing_test

import (
	"context"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/billing"
)

// A chat turn's input written to the prompt cache is stored in its own
// column, priced at its own rate, read back on every path (the record, a
// repeated write, the CSV) and never billed as plain input too.
func TestCacheWritesStoredAndPriced(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	rec := billing.Record{
		UserID: "alice", SessionID: "cs_1", TurnID: "t_1", Kind: billing.KindChat, Provider: "openai", Model: "gpt-6-luna-2026-09-01",
		Usage:       billing.Usage{TextIn: 10_000, TextCachedIn: 2_000, TextCacheWriteIn: 3_000, TextOut: 500},
		UsageSource: billing.SourceProviderReported, CreatedAt: billing.Stamp(), // written again with its stamp
	}
	// 5,000 plain × $0.10 + 2,000 cached × $0.01 + 3,000 written × $0.125
	// + 500 out × $0.50 per 1M: 500 + 20 + 375 + 250 micros.
	const want = 1_145
	for _, pass := range []string{"written", "written again"} {
		got, err := fx.ledger.Write(ctx, fx.pool, rec)
		if err != nil {
			t.Fatalf("%s: %v", pass, err)
		}
		if got.CostMicros == nil || *got.CostMicros != want || got.Tokens.TextCacheWriteIn != 3_000 || got.Usage.TextCacheWriteIn != 3_000 {
			t.Fatalf("%s: cost %v, cache writes %d / %d; want %d micros and 3000", pass, got.CostMicros, got.Tokens.TextCacheWriteIn, got.Usage.TextCacheWriteIn, want)
		}
	}
	rows, err := csv.NewReader(strings.NewReader(get(t, fx.ledger.HandleCSV, "/v1/admin/costs.csv").Body.String())).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("CSV: %d rows, %v", len(rows), err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	i, ok := col["text_cache_write_in"]
	if !ok || rows[1][i] != "3000" || rows[1][col["cost_micros"]] != "1145" {
		t.Fatalf("CSV row %v (header %v): want text_cache_write_in 3000, cost 1145", rows[1], rows[0])
	}
	// The database refuses what the type refuses: writes and cached input
	// above the input.
	if _, err := fx.pool.Exec(ctx, `UPDATE usage_records SET text_cache_write_in = 9000 WHERE session_id = 'cs_1'`); err == nil {
		t.Fatal("the database accepted cached + written input above the input")
	}
}
