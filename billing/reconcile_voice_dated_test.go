package billing

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/internal/pgtest"
)

// Reconciliation shares a voice record's cost among its lines by pricing
// each line after the first, and a day's lines are priced at the table
// valid on that day, as the record itself was: a live session's backend
// on claude-sonnet-5-5 reads 1,000,000 cached tokens at $0.20 per 1M
// before 2026-10-07 and at $0.10 from it (prices.yaml's dated entry), so
// its backend line is 200,000 micros on 6 October and 100,000 on the 8th,
// worked out here by hand.
func TestVoiceLinesPriceEachDayAtItsTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t, pgtest.URL(t), 2)
	prices, err := DefaultPrices()
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLedger(LedgerParams{Pool: pool, Prices: prices, Registerer: prometheus.NewRegistry(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	days := map[string]int64{"2026-10-06": 200_000, "2026-10-08": 100_000}
	for day := range days {
		at, _ := time.Parse("2006-01-02", day)
		at = at.Add(12 * time.Hour)
		rec, err := l.Write(ctx, pool, Record{UserID: "alice", SessionID: "vs_" + day, Kind: KindVoice, Provider: "openai",
			Model: "gpt-live-1", Usage: Usage{AudioMillis: 60_000}, BackendModel: "claude-sonnet-5-5",
			Backend: Usage{TextIn: 1_000_000, TextCachedIn: 1_000_000}, DurationMS: 60_000,
			UsageSource: SourceServerObserved, CreatedAt: at})
		if err != nil || rec.CostMicros == nil {
			t.Fatalf("write %s: %v, %+v", day, err, rec)
		}
		if _, err := pool.Exec(ctx, `UPDATE usage_records SET created_at = $1 WHERE id = $2`, at, rec.ID); err != nil {
			t.Fatal(err)
		}
	}
	lines, err := voiceLines(ctx, l.pool, l.prices, time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, ln := range lines {
		if ln.model != "claude-sonnet-5-5" {
			continue
		}
		seen++
		if want, ok := days[ln.date]; !ok || ln.costMicros != want {
			t.Errorf("%s: the backend line's share is %d micros; want %d", ln.date, ln.costMicros, want)
		}
	}
	if seen != 2 {
		t.Fatalf("backend lines %d in %+v; want one a day", seen, lines)
	}
}
