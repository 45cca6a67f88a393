package billing_test

import (
	"context"
	"math"
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

// A route target's service_tier, from the config file to the ledger: the
// router sends it, the simulator (whose project serves the default tier)
// serves the call on the tier asked and names it, and the record is priced
// at that tier's multiple — by hand here, from gpt-6.2-sol's page (input
// $2.00, output $10.00 per 1M) — and matches what the simulator's own
// costs API bills. "fast" is answered as priority, as the spec says.
func TestAskedServiceTierReachesTheProvider(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	for _, c := range []struct {
		asked, served string
		halves        int64 // the tier's multiple in halves
	}{
		{"flex", "flex", 1},
		{"priority", "priority", 4},
		{"fast", "priority", 4},
		{"default", "default", 2},
	} {
		t.Run(c.asked, func(t *testing.T) {
			t.Parallel()
			_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})
			cfg, err := config.Parse([]byte(`
providers:
  - {name: openai, kind: openai}
routes:
  - name: default
    targets:
      - {provider: openai, model: gpt-6.2-sol, service_tier: ` + c.asked + `}
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
			s, err := router.Stream(t.Context(), llm.Request{Model: "default",
				Messages: []llm.Message{{Role: llm.RoleUser, Content: "hello"}}})
			if err != nil {
				t.Fatal(err)
			}
			u := doneUsage(t, s)
			if u.ServiceTier != c.served || u.CachedInputTokens != 0 || u.CacheWriteInputTokens != 0 {
				t.Fatalf("usage %+v: want served on %q with no cache", *u, c.served)
			}
			// (in × $2 + out × $10) × halves ÷ 2, half up.
			want := ((u.InputTokens*2+u.OutputTokens*10)*c.halves + 1) / 2
			rec, err := fx.ledger.Write(context.Background(), fx.pool, billing.Record{UserID: "dave", SessionID: "cmpl-asked-" + c.asked,
				TurnID: "cmpl-asked-" + c.asked, Kind: billing.KindCompletion, Provider: "openai", Model: u.Model,
				Usage: billing.FromLLM(*u), UsageSource: billing.SourceProviderReported})
			if err != nil {
				t.Fatal(err)
			}
			if rec.CostMicros == nil || *rec.CostMicros != want || rec.ServiceTier != c.served {
				t.Errorf("record: cost %v on %q; want %d micros on %q", rec.CostMicros, rec.ServiceTier, want, c.served)
			}
			admin := simtest.Client(ts.URL, option.WithAdminAPIKey(simtest.TestKey))
			day := time.Now().UTC().Truncate(24 * time.Hour)
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
