package chat_test

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/gemini"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// A chat turn whose route asks gemini-3.7-flash, which Google has answered
// with gemini-3.8-flash since 2026-10-08 (models.md, the simulator's
// re-route table): through POST /v1/chat the router counts the re-route
// (voxgate_llm_rerouted_total, by the model asked and the one that
// answered), and the turn's record names the model that answered and is
// priced at its rates, computed here by hand from the reference table
// (gemini-3.8-flash until 2026-12-31: input $0.75, cached $0.075, output
// $3.75 per 1M), never at the model asked.
func TestChatRecordsTheReroutedModel(t *testing.T) {
	t.Parallel()
	s, url := testkit.NewSim(t, sim.Config{Script: script()})
	reg := prometheus.NewRegistry()
	route := config.DefaultChat().Route
	f := newFixture(t, options{sim: s, simURL: url, provider: func(llm.Provider) llm.Provider {
		g, err := gemini.New(context.Background(), gemini.Params{Name: "gemini", BaseURL: url, APIKey: simtest.TestKey})
		if err != nil {
			t.Fatal(err)
		}
		r, err := llm.NewRouter(llm.RouterParams{Providers: map[string]llm.Provider{"gemini": g}, Registerer: reg,
			Routes: []llm.Route{{Name: route, Targets: []llm.Target{{Provider: "gemini", Model: "gemini-3.7-flash"}}}}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}})
	r := f.post(t, call{user: "u-reroute", body: map[string]any{"message": "hi", "stream": false}})
	if r.Status != 200 {
		t.Fatalf("chat: %d %v", r.Status, r.Body)
	}
	var model, provider string
	var in, cached, out, cost int64
	if err := f.pool.QueryRow(context.Background(), `SELECT model, provider, text_in, text_cached_in, text_out, coalesce(cost_micros, -1)
		FROM usage_records WHERE user_id = $1 AND kind = 'chat'`, "u-reroute").Scan(&model, &provider, &in, &cached, &out, &cost); err != nil {
		t.Fatal(err)
	}
	// (plain × 750,000 + cached × 75,000 + out × 3,750,000) micro-USD per
	// 1M tokens, half up.
	want := ((in-cached)*750_000 + cached*75_000 + out*3_750_000 + 500_000) / 1_000_000
	if model != "gemini-3.8-flash" || provider != "gemini" || in == 0 || out == 0 || cost != want {
		t.Fatalf("record %s/%s, %d in (%d cached), %d out, %d micros; want gemini/gemini-3.8-flash priced at %d",
			provider, model, in, cached, out, cost, want)
	}
	if got := reroutes(t, reg, "gemini-3.7-flash", "gemini-3.8-flash"); got != 1 {
		t.Fatalf("voxgate_llm_rerouted_total{asked=gemini-3.7-flash, answered=gemini-3.8-flash} = %v, want 1", got)
	}
}

// reroutes is the router's count of answers by answered to asked.
func reroutes(t *testing.T, reg *prometheus.Registry, asked, answered string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "voxgate_llm_rerouted_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label(m, "asked") == asked && label(m, "answered") == answered {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
