package billing_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// The simulator's organization usage and costs against a ledger that
// recorded every completion it billed: November is green day by day; a
// record deleted from the ledger turns its day red, by exactly its tokens
// and cost, and no other day.
func TestReconcileAgainstTheSimulator(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	var now atomic.Int64
	nov := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	now.Store(nov.UnixNano())
	_, ts := simtest.NewServer(t, sim.Config{Now: func() time.Time { return time.Unix(0, now.Load()).UTC() }})
	client := openai.NewClient(option.WithBaseURL(ts.URL+"/v1"), option.WithAPIKey(simtest.TestKey), option.WithMaxRetries(0))

	type written struct {
		id          int64
		tokens, usd int64
		at          time.Time
	}
	var all []written
	models := []string{"gpt-4.1-mini", "gpt-6-luna"}
	for d := range 30 {
		for i, model := range models {
			at := nov.AddDate(0, 0, d).Add(time.Duration(3+7*i) * time.Hour)
			now.Store(at.UnixNano())
			resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
				Model:    model,
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(strings.Repeat("a recipe with leeks ", 1+d%5))},
			})
			if err != nil {
				t.Fatal(err)
			}
			u := resp.Usage
			rec, err := fx.ledger.Write(ctx, fx.pool, billing.Record{
				UserID: "alice", SessionID: resp.ID, TurnID: "t", Kind: billing.KindCompletion, Provider: "openai", Model: resp.Model,
				Usage:       completionUsage(t, resp),
				UsageSource: billing.SourceProviderReported,
			})
			if err != nil || rec.CostMicros == nil {
				t.Fatalf("write: %v, %+v", err, rec)
			}
			if _, err := fx.pool.Exec(ctx, `UPDATE usage_records SET created_at = $1 WHERE id = $2`, at, rec.ID); err != nil {
				t.Fatal(err)
			}
			all = append(all, written{rec.ID, u.PromptTokens + u.CompletionTokens, *rec.CostMicros, at})
		}
	}
	provider := billing.NewOpenAIUsage(ts.URL+"/v1", "sk-admin-test")
	h := fx.ledger.HandleReconcile(provider)
	reconcile := func() billing.Reconciliation {
		t.Helper()
		rec := get(t, h, "/v1/admin/costs/reconcile?from=2026-11-01&to=2026-12-01&threshold_micros=0")
		var out billing.Reconciliation
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		return out
	}
	clean := reconcile()
	if clean.RedDays != 0 || len(clean.Days) != 30 {
		t.Fatalf("clean month: %d red of %d days: %+v", clean.RedDays, len(clean.Days), clean.Days)
	}
	for _, d := range clean.Days {
		for _, m := range d.Models {
			if m.ProviderTokens == 0 || m.Coverage != "1.0000" || m.ProviderCostMicros != m.LedgerCostMicros {
				t.Fatalf("%s %+v", d.Date, m)
			}
		}
	}
	gone := all[19] // 10 November, the second model
	if _, err := fx.pool.Exec(ctx, `DELETE FROM usage_records WHERE id = $1`, gone.id); err != nil {
		t.Fatal(err)
	}
	red := reconcile()
	if red.RedDays != 1 {
		t.Fatalf("%d red days, want 1", red.RedDays)
	}
	for _, d := range red.Days {
		if d.Red != (d.Date == gone.at.Format(time.DateOnly)) {
			t.Fatalf("day %s red %v", d.Date, d.Red)
		}
		if !d.Red {
			continue
		}
		for _, m := range d.Models {
			if m.Red && (m.TokenDiff != -gone.tokens || m.CostDiffMicros != -gone.usd || m.LedgerTokens != 0 || m.Coverage != "0.0000") {
				t.Fatalf("red row %+v, want the deleted record's %d tokens and %d micro-USD", m, gone.tokens, gone.usd)
			}
		}
	}
	// Bad parameters are 400; a day's edge that is not midnight UTC too.
	for _, q := range []string{"tz=Asia/Kolkata", "threshold_micros=-1", "from=2026-11-01T05:00:00Z&to=2026-11-02", "user_id=alice"} {
		if rec := get(t, h, "/v1/admin/costs/reconcile?"+q); rec.Code != http.StatusBadRequest {
			t.Errorf("%s: %d %s", q, rec.Code, rec.Body)
		}
	}
}

// completionUsage is a chat completion's usage as the gateway records it,
// the cache writes (which openai-go keeps in the raw JSON) included.
func completionUsage(t *testing.T, resp *openai.ChatCompletion) billing.Usage {
	t.Helper()
	var details struct {
		CacheWrite int64 `json:"cache_write_tokens"`
	}
	if raw := resp.Usage.PromptTokensDetails.RawJSON(); raw != "" {
		if err := json.Unmarshal([]byte(raw), &details); err != nil {
			t.Fatal(err)
		}
	}
	u := resp.Usage
	return billing.Usage{TextIn: u.PromptTokens, TextCachedIn: u.PromptTokensDetails.CachedTokens,
		TextCacheWriteIn: details.CacheWrite, TextOut: u.CompletionTokens}
}
