package controlplane_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// A live session whose backend route's target asks 12-hour cache writes
// and whose project is served on the priority tier: the record's backend
// class keeps its 12-hour writes and its tier (migration 0090), and is
// priced at the 12-hour rate and priority's ×2, computed here by hand from
// gpt-6.2-sol's published rates (input $2.00, cached input $0.10, 12-hour
// cache write $5.00, output $10.00 per 1M tokens), never by the code under
// test. Before the backend kept them, its writes were priced at the
// 30-minute rate and its tier ignored.
func TestLiveBackendTwelveHourWritesOnPriority(t *testing.T) {
	t.Parallel()
	cfg := liveSim(sim.Live{Said: []string{"Find me a pasta recipe"}, TurnPackets: 25, UsageInterval: time.Second})
	cfg.Script, cfg.Latency = liveScript(), simtest.ZeroLatency()
	cfg.Chat = sim.Chat{ProjectServiceTier: "priority"}
	const route = "live-backend"
	f := newFixture(t, options{backend: route, simCfg: cfg,
		// The backend as cmd/voxgate builds it: chat.route through the
		// router, whose one target asks 12-hour writes.
		wrapBackend: func(p llm.Provider) llm.Provider {
			r, err := llm.NewRouter(llm.RouterParams{Providers: map[string]llm.Provider{"openai": p},
				Routes: []llm.Route{{Name: route, Targets: []llm.Target{
					{Provider: "openai", Model: "gpt-6.2-sol", PromptCacheTTL: llm.CacheTTL12h}}}}})
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
		configFn: func(c *config.Voice) {
			c.Instructions = strings.Repeat("Keep every answer short, warm and practical. ", 120)
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, start, liveID := askLive(t, ctx, f)
	testkit.Eventually(t, ctx, "the answer spoken", func() bool {
		st, _ := f.sim.LiveSession(liveID)
		for _, l := range st.Transcript {
			if l.Speaker == "model" && strings.Contains(l.Text, "lemon pasta") {
				return true
			}
		}
		return false
	})
	ended, st := endLive(t, ctx, f, p, start.SessionID, liveID)
	rec, tk := ended.Cost, ended.Cost.Tokens
	if !strings.HasPrefix(rec.BackendModel, "gpt-6.2-sol") || rec.BackendServiceTier != "priority" ||
		tk.BackendTextCacheWriteIn == 0 || tk.BackendTextCacheWrite12hIn != tk.BackendTextCacheWriteIn || tk.BackendTextOut == 0 {
		t.Fatalf("record %+v: want the backend on gpt-6.2-sol, priority, every cache write a 12-hour one", rec)
	}
	want := priceLiveBackendPriority(liveMillis(st), tk)
	if rec.CostMicros == nil || *rec.CostMicros != want {
		t.Fatalf("cost %v, want %d micros: the voice at its rate, the backend's 12-hour writes at theirs, the backend ×2", rec.CostMicros, want)
	}
	var stored int64
	var tier string
	if err := f.pool.QueryRow(ctx, `SELECT backend_text_cache_write_12h_in, backend_service_tier FROM usage_records
		WHERE session_id = $1`, start.SessionID).Scan(&stored, &tier); err != nil || stored != tk.BackendTextCacheWrite12hIn || tier != "priority" {
		t.Fatalf("stored %d 12-hour writes on tier %q (%v); want %d on priority", stored, tier, err, tk.BackendTextCacheWrite12hIn)
	}
}

// priceLiveBackendPriority is such a record's cost by hand, in micro-USD
// × 60,000 ÷ 60,000: the voice at 50,000 micro-USD a minute (×1, the Live
// model has no tier), the backend's classes at gpt-6.2-sol's per-1M prices
// ×2; one half-up rounding over the sum.
func priceLiveBackendPriority(ms int64, tk billing.TokenView) int64 {
	plain := tk.BackendTextIn - tk.BackendTextCachedIn - tk.BackendTextCacheWriteIn
	written30m := tk.BackendTextCacheWriteIn - tk.BackendTextCacheWrite12hIn
	backend := 2 * (plain*2_000_000 + tk.BackendTextCachedIn*100_000 + written30m*2_500_000 +
		tk.BackendTextCacheWrite12hIn*5_000_000 + tk.BackendTextOut*10_000_000)
	return (ms*50_000*1_000_000 + backend*60_000 + 30_000*1_000_000) / (60_000 * 1_000_000)
}
