package billing

import (
	"context"
	"encoding/csv"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/internal/pgtest"
)

// A live session's backend keeps its own 12-hour writes and tier
// (migration 0090) and is priced by them, as a record's own model is:
// gpt-6-luna's 12-hour write is 2× its printed $0.125 write, and priority
// doubles the backend's classes, not the voice time. Worked out by hand:
// 61,234 ms × 50,000 ÷ 60,000 = 51,028.33…; luna: 2,000 plain × 0.1 +
// 2,000 cached × 0.01 + 400 30-minute writes × 0.125 + 600 12-hour writes
// × 0.25 + 700 out × 0.5 = 770, ×2 = 1,540; 52,568.33… rounds to 52,568.
// The record reads back with both, the CSV shows both, and reconciliation
// shares the day's cost to the backend at its tier (1,540).
func TestBackendTwelveHourWritesAndTier(t *testing.T) {
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
	r := Record{UserID: "alice", SessionID: "vs_tier", Kind: KindVoice, Provider: "openai", Model: "gpt-live-1.1",
		Usage: Usage{AudioMillis: 61_234}, DurationMS: 61_234, UsageSource: SourceServerObserved, BackendModel: "gpt-6-luna",
		Backend: Usage{TextIn: 5000, TextCachedIn: 2000, TextCacheWriteIn: 1000, TextCacheWrite12hIn: 600, TextOut: 700,
			ServiceTier: "priority"}}
	w, err := l.Write(ctx, pool, r)
	if err != nil {
		t.Fatal(err)
	}
	if w.CostMicros == nil || *w.CostMicros != 52_568 {
		t.Fatalf("cost %v, want 52568", w.CostMicros)
	}
	got, ok, err := l.SessionRecord(ctx, pool, "vs_tier")
	if err != nil || !ok || got.Backend != r.Backend || got.BackendServiceTier != "priority" ||
		got.Tokens.BackendTextCacheWrite12hIn != 600 || got.ServiceTier != "" {
		t.Fatalf("read back %+v (%v, %v): want the backend's 600 12-hour writes on priority", got, ok, err)
	}

	var b strings.Builder
	if err := l.Export(ctx, &b, Filter{From: w.CreatedAt.Add(-time.Hour), To: w.CreatedAt.Add(time.Hour), TZ: time.UTC}, FormatCSV, nil); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("csv %v: %s", err, b.String())
	}
	col := map[string]string{}
	for i, h := range rows[0] {
		col[h] = rows[1][i]
	}
	if col["backend_text_cache_write_12h_in"] != "600" || col["backend_service_tier"] != "priority" || col["service_tier"] != "" {
		t.Fatalf("csv row %v", col)
	}

	day := w.CreatedAt.UTC().Truncate(24 * time.Hour)
	lines, err := voiceLines(ctx, l.pool, l.prices, day, day.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var backend int64 = -1
	for _, ln := range lines {
		if ln.model == "gpt-6-luna" {
			backend = ln.costMicros
		}
	}
	if backend != 1540 {
		t.Fatalf("reconciliation's backend line %d micros, want 1540 (lines %+v)", backend, lines)
	}

	// A transcription has neither: refused, never stored without them.
	tr := r
	tr.SessionID, tr.TranscriptionModel = "vs_tier2", "gpt-4o-mini-transcribe"
	tr.Transcription = Usage{TextIn: 10, ServiceTier: "priority"}
	if _, err := l.Write(ctx, pool, tr); err == nil {
		t.Fatal("wrote a transcription with a tier")
	}
}
