package billing_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/anthropic"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// Sonnet 5.5 through the gateway's Anthropic adapter on either side of
// 2026-10-07, when its cache read went from $0.20 to $0.10 per 1M: the
// ledger (its dated entry) and the simulator's cost report (its own dated
// list, sim/anthropic/orgcost.go) agree day by day, tokens exactly and
// cost within a micro-dollar a record (the ledger rounds each record, the
// report is exact cents); a record deleted from the ledger turns its day
// red by its tokens and cost. With OpenAI's reader beside it
// (billing.ProviderList), as a gateway with both providers reconciles.
func TestReconcileAnthropicAgainstTheSimulator(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	var now atomic.Int64
	_, ts := simtest.NewServer(t, sim.Config{Script: sim.Script{Text: "Lemon pasta."}, Latency: simtest.ZeroLatency(),
		Now: func() time.Time { return time.Unix(0, now.Load()).UTC() }})
	adapter, err := anthropic.New(anthropic.Params{Name: "anthropic", BaseURL: ts.URL, APIKey: simtest.TestKey, MaxTokens: 100})
	if err != nil {
		t.Fatal(err)
	}
	system := strings.Repeat("Answer as a cook would. ", 300) // past the 1,024-token cache minimum
	type written struct {
		id, tokens, usd int64
		at              time.Time
	}
	var all []written
	reads := 0
	for _, day := range []time.Time{time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC), time.Date(2026, 10, 8, 9, 0, 0, 0, time.UTC)} {
		for i := range 3 { // the first writes the cache, the others read it
			at := day.Add(time.Duration(i) * time.Minute)
			now.Store(at.UnixNano())
			s, err := adapter.Stream(ctx, llm.Request{Model: "claude-sonnet-5-5", Messages: []llm.Message{
				{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: "dinner?"}}})
			if err != nil {
				t.Fatal(err)
			}
			u := doneUsage(t, s)
			if u.CachedInputTokens > 0 {
				reads++
			}
			rec, err := fx.ledger.Write(ctx, fx.pool, billing.Record{UserID: "erin", SessionID: "anth-" + at.Format(time.RFC3339),
				TurnID: "t", Kind: billing.KindChat, Provider: "anthropic", Model: "claude-sonnet-5-5",
				Usage: billing.FromLLM(*u), UsageSource: billing.SourceProviderReported, CreatedAt: at})
			if err != nil || rec.CostMicros == nil {
				t.Fatalf("write: %v, %+v", err, rec)
			}
			if _, err := fx.pool.Exec(ctx, `UPDATE usage_records SET created_at = $1 WHERE id = $2`, at, rec.ID); err != nil {
				t.Fatal(err)
			}
			all = append(all, written{rec.ID, u.InputTokens + u.OutputTokens, *rec.CostMicros, at})
		}
	}
	if reads != 4 {
		t.Fatalf("%d calls read the cache, want 4", reads)
	}
	provider := billing.ProviderList{billing.NewOpenAIUsage(ts.URL+"/v1", "sk-admin-test"), billing.NewAnthropicUsage(ts.URL, simtest.TestKey)}
	h := fx.ledger.HandleReconcile(provider)
	reconcile := func() billing.Reconciliation {
		t.Helper()
		rec := get(t, h, "/v1/admin/costs/reconcile?from=2026-10-01&to=2026-11-01&threshold_micros=3")
		var out billing.Reconciliation
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		return out
	}
	clean := reconcile()
	if clean.RedDays != 0 || len(clean.Days) != 2 {
		t.Fatalf("clean: %d red of %d days: %+v", clean.RedDays, len(clean.Days), clean.Days)
	}
	for _, d := range clean.Days {
		for _, m := range d.Models {
			if m.Model != "claude-sonnet-5-5" || m.ProviderTokens == 0 || m.TokenDiff != 0 || m.CostDiffMicros < -3 || m.CostDiffMicros > 3 {
				t.Fatalf("%s %+v", d.Date, m)
			}
		}
	}
	gone := all[4] // 8 October, a call that read the cache
	if _, err := fx.pool.Exec(ctx, `DELETE FROM usage_records WHERE id = $1`, gone.id); err != nil {
		t.Fatal(err)
	}
	red := reconcile()
	if red.RedDays != 1 {
		t.Fatalf("%d red days, want 1: %+v", red.RedDays, red.Days)
	}
	for _, d := range red.Days {
		if d.Red != (d.Date == "2026-10-08") {
			t.Fatalf("day %s red %v", d.Date, d.Red)
		}
		for _, m := range d.Models {
			if d.Red && (m.TokenDiff != -gone.tokens || m.CostDiffMicros > 3-gone.usd || m.CostDiffMicros < -3-gone.usd) {
				t.Fatalf("red row %+v, want the deleted record's %d tokens and about %d micro-USD", m, gone.tokens, gone.usd)
			}
		}
	}
}
