package billing_test

import (
	"context"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/openai"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// From a route target that asks 12-hour cache writes to the ledger: the
// router sends the TTL, the simulator's project serves the call on another
// tier, the adapter reports both, and the record costs what the model page
// says by hand — and what the simulator's own costs API bills, priced with
// its own list.
func TestTwelveHourWritesOnATierPricedEndToEnd(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	for _, c := range []struct {
		tier string
		// halves is the hand figure in halves of a micro-dollar, given
		// the output tokens: 100 plain × $2.00 + 1,152 written for 12 h ×
		// $5.00 + out × $10.00, at the tier's multiple.
		halves func(out int64) int64
	}{
		{"priority", func(out int64) int64 { return 4 * (100*2 + 1152*5 + out*10) }},
		{"flex", func(out int64) int64 { return 100*2 + 1152*5 + out*10 }},
	} {
		t.Run(c.tier, func(t *testing.T) {
			t.Parallel()
			_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency(), Chat: sim.Chat{ProjectServiceTier: c.tier}})
			cfg, err := config.Parse([]byte(`
providers:
  - {name: openai, kind: openai}
routes:
  - name: default
    targets:
      - {provider: openai, model: gpt-6.2-sol, prompt_cache_ttl: 12h}
`))
			if err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"OPENAI_BASE_URL": ts.URL + "/v1", "OPENAI_API_KEY": simtest.TestKey}
			router, err := llm.NewRouterFromConfig(cfg, func(k string) string { return env[k] },
				map[string]llm.Factory{config.KindOpenAI: openai.Factory(openai.Params{})}, llm.RouterParams{})
			if err != nil {
				t.Fatal(err)
			}
			system := strings.Repeat("abcd", 1250) // 1,252 tokens with "hello"; 1,152 cacheable
			s, err := router.Stream(t.Context(), llm.Request{Model: "default",
				Messages: []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: "hello"}}})
			if err != nil {
				t.Fatal(err)
			}
			u := doneUsage(t, s)
			if u.InputTokens != 1252 || u.CacheWriteInputTokens != 1152 || u.CacheWrite12hInputTokens != 1152 || u.ServiceTier != c.tier {
				t.Fatalf("usage %+v", *u)
			}
			want := (c.halves(u.OutputTokens) + 1) / 2 // half up

			rec, err := fx.ledger.Write(context.Background(), fx.pool, billing.Record{UserID: "carol", SessionID: "cmpl-e2e-" + c.tier,
				TurnID: "cmpl-e2e-" + c.tier, Kind: billing.KindCompletion, Provider: "openai", Model: u.Model,
				Usage: billing.FromLLM(*u), UsageSource: billing.SourceProviderReported})
			if err != nil {
				t.Fatal(err)
			}
			if rec.CostMicros == nil || *rec.CostMicros != want || rec.ServiceTier != c.tier || rec.Tokens.TextCacheWrite12hIn != 1152 {
				t.Errorf("record: cost %v on %q with %d 12 h writes; want %d micros on %q with 1152", rec.CostMicros, rec.ServiceTier,
					rec.Tokens.TextCacheWrite12hIn, want, c.tier)
			}

			admin := simtest.Client(ts.URL, option.WithAdminAPIKey(simtest.TestKey))
			day := time.Now().UTC().Truncate(24 * time.Hour) // a day either side: the call may cross midnight
			costs, err := admin.Admin.Organization.Usage.Costs(context.Background(), oai.AdminOrganizationUsageCostsParams{
				StartTime: day.Add(-24 * time.Hour).Unix(), EndTime: oai.Int(day.Add(48 * time.Hour).Unix())})
			if err != nil {
				t.Fatal(err)
			}
			var billed float64
			for _, b := range costs.Data {
				for _, r := range b.Results {
					billed += r.Amount.Value
				}
			}
			if got := int64(math.Round(billed * 1e6)); got != want {
				t.Errorf("the simulator billed %d micros, the hand figure is %d", got, want)
			}
		})
	}
}

// doneUsage reads s to its end and returns the usage EventDone carried.
func doneUsage(t *testing.T, s llm.Stream) *llm.Usage {
	t.Helper()
	defer s.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		ev, err := s.Next(ctx)
		if errors.Is(err, io.EOF) {
			t.Fatal("the stream ended without EventDone")
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == llm.EventDone {
			if ev.Usage == nil {
				t.Fatal("EventDone without usage")
			}
			return ev.Usage
		}
	}
}

// Usage with no tier named (an estimate's, or a provider that names none)
// and usage on "default" are both the standard tier: summed, they are
// "default" and priced, not "mixed" and unpriced; the standard tier with
// priority is mixed.
func TestStandardTiersSumAsOne(t *testing.T) {
	t.Parallel()
	named := billing.Usage{TextIn: 10, ServiceTier: "default"}
	unnamed := billing.Usage{TextIn: 5}
	for _, c := range []struct {
		u, v billing.Usage
		want string
	}{
		{named, unnamed, "default"},
		{unnamed, named, "default"},
		{unnamed, unnamed, ""},
		{named, billing.Usage{TextIn: 1, ServiceTier: "priority"}, "mixed"},
		{unnamed, billing.Usage{TextIn: 1, ServiceTier: "flex"}, "mixed"},
		{billing.Usage{}, billing.Usage{TextIn: 1, ServiceTier: "flex"}, "flex"},
	} {
		if got := c.u.Add(c.v).ServiceTier; got != c.want {
			t.Errorf("%q + %q = %q, want %q", c.u.ServiceTier, c.v.ServiceTier, got, c.want)
		}
	}
}
