package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// voxgate costs reconcile reads the simulator's organization usage with
// an admin key and the ledger from the database: green when they agree,
// exit status 1 naming the red day when a record is missing.
func TestCostsReconcileCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day := time.Date(2026, 11, 12, 9, 0, 0, 0, time.UTC)
	_, ts := simtest.NewServer(t, sim.Config{Now: func() time.Time { return day }})
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
	client := openai.NewClient(option.WithBaseURL(ts.URL+"/v1"), option.WithAPIKey(simtest.TestKey), option.WithMaxRetries(0))
	var last int64
	for i := range 2 {
		resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model: "gpt-4.1-mini", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(strings.Repeat("leek ", i+1))},
		})
		if err != nil {
			t.Fatal(err)
		}
		u := resp.Usage
		rec, err := ledger.Write(ctx, pool, billing.Record{UserID: "alice", SessionID: resp.ID, TurnID: "t", Kind: billing.KindCompletion,
			Provider: "openai", Model: resp.Model, UsageSource: billing.SourceProviderReported,
			Usage: billing.Usage{TextIn: u.PromptTokens, TextCachedIn: u.PromptTokensDetails.CachedTokens, TextOut: u.CompletionTokens}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `UPDATE usage_records SET created_at = $1 WHERE id = $2`, day, rec.ID); err != nil {
			t.Fatal(err)
		}
		last = rec.ID
	}
	env := map[string]string{"VOXGATE_DATABASE_URL": dbURL, "OPENAI_BASE_URL": ts.URL + "/v1", "OPENAI_ADMIN_KEY": "sk-admin"}
	reconcile := func() (string, error) {
		var stdout, stderr bytes.Buffer
		err := run(ctx, []string{"costs", "reconcile", "--from", "2026-11-01", "--to", "2026-12-01", "--threshold", "0"},
			func(k string) string { return env[k] }, &stdout, &stderr)
		return stdout.String(), err
	}
	out, err := reconcile()
	if err != nil || !strings.Contains(out, "2026-11-12\tgpt-4.1-mini-2025-04-14\tgreen\t") || strings.Contains(out, "RED") || strings.Count(out, "\n") != 2 {
		t.Fatalf("clean: %v\n%s", err, out)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM usage_records WHERE id = $1`, last); err != nil {
		t.Fatal(err)
	}
	out, err = reconcile()
	if err == nil || !strings.Contains(err.Error(), "1 red day") || !strings.Contains(out, "2026-11-12\tgpt-4.1-mini-2025-04-14\tRED\t") {
		t.Fatalf("after a deletion: %v\n%s", err, out)
	}
}
