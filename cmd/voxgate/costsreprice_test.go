package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// voxgate costs reprice prints each model's difference under a later
// table and writes nothing; with --apply the records carry the new costs
// and version, and the repricing has its audit row.
func TestCostsRepriceCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := pgtest.URL(t)
	pool := pgtest.NewPool(t, dbURL, 2)
	prices, err := billing.DefaultPrices()
	if err != nil {
		t.Fatal(err)
	}
	ledger, err := billing.NewLedger(billing.LedgerParams{Pool: pool, Prices: prices, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	// 10,000 in × $0.10 + 1,000 out × $0.50 per 1M = 1,500 micros each.
	for _, s := range []string{"cmpl-cli-1", "cmpl-cli-2"} {
		if _, err := ledger.Write(ctx, pool, billing.Record{UserID: "erin", SessionID: s, TurnID: s, Kind: billing.KindCompletion,
			Provider: "openai", Model: "gpt-6-luna", Usage: billing.Usage{TextIn: 10_000, TextOut: 1_000}, UsageSource: billing.SourceProviderReported}); err != nil {
			t.Fatal(err)
		}
	}
	table, err := os.ReadFile("../../billing/prices.yaml")
	if err != nil {
		t.Fatal(err)
	}
	luna := "gpt-6-luna:\n    source: OpenAI model page, gpt-6-luna\n    date: \"2026-11-24\"\n    text_in: 100000\n"
	if !strings.Contains(string(table), luna) {
		t.Fatal("prices.yaml's gpt-6-luna row moved; update the test")
	}
	later := strings.Replace(string(table), luna, strings.Replace(luna, "text_in: 100000", "text_in: 200000", 1), 1)
	later = strings.Replace(later, `version: "2026-11-24"`, `version: "2026-12-01"`, 1)
	file := filepath.Join(t.TempDir(), "prices.yaml")
	if err := os.WriteFile(file, []byte(later), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"VOXGATE_DATABASE_URL": dbURL, "USER": "finance"}
	reprice := func(extra ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		args := append([]string{"costs", "reprice", "--from", "2020-01-01", "--prices", file, "--user", "erin"}, extra...)
		if err := run(ctx, args, func(k string) string { return env[k] }, &stdout, &stderr); err != nil {
			t.Fatalf("%v: %v\n%s", extra, err, stderr.String())
		}
		return stdout.String()
	}
	total := func() (cost, audits string) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT sum(cost_micros)::text || ' ' || string_agg(DISTINCT price_version, ','),
			(SELECT count(*) FROM usage_repricings)::text FROM usage_records WHERE user_id = 'erin'`).Scan(&cost, &audits); err != nil {
			t.Fatal(err)
		}
		return cost, audits
	}
	// Each record: 10,000 × $0.20 + 1,000 × $0.50 = 2,500.
	want := "gpt-6-luna\t2\t3000\t5000\t2000\t0\t0\n"
	if out := reprice(); !strings.Contains(out, want) {
		t.Fatalf("preview:\n%s\nwant a line %q", out, want)
	}
	if cost, audits := total(); cost != "3000 2026-11-24" || audits != "0" {
		t.Fatalf("after the preview: %s, %s audit rows; want nothing written", cost, audits)
	}
	if out := reprice("--apply"); !strings.Contains(out, want) {
		t.Fatalf("apply:\n%s", out)
	}
	if cost, audits := total(); cost != "5000 2026-12-01" || audits != "1" {
		t.Fatalf("after --apply: %s, %s audit rows; want 5000 at 2026-12-01 and one", cost, audits)
	}
}
