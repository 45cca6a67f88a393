package llm_test

import (
	"bytes"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/gemini"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestGeminiRecordsTheModelThatAnswered: from 2026-12-01 Google answers
// gemini-2.5-pro with gemini-3.8-flash; the usage names the model that
// answered (what the record stores and is priced by) and a warning names
// both. Not parallel: it captures the default logger.
func TestGeminiRecordsTheModelThatAnswered(t *testing.T) {
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	_, url := testkit.NewSim(t, sim.Config{Now: func() time.Time { return now }})
	g := newGemini(t, url, 0, nil)
	st, err := g.Stream(t.Context(), userRequest("gemini-2.5-pro", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	r := drain(t, st)
	if r.err != nil || r.done.Usage == nil {
		t.Fatalf("stream: %v, usage %v", r.err, r.done.Usage)
	}
	if got := r.done.Usage.Model; got != "gemini-3.8-flash" {
		t.Errorf("usage model %q, want gemini-3.8-flash, the modelVersion that answered", got)
	}
	out := logs.String()
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "configured=gemini-2.5-pro") || !strings.Contains(out, "answered=gemini-3.8-flash") {
		t.Errorf("log %q: want a warning naming both models", out)
	}

	// The model asked answering as itself is no warning.
	logs.Reset()
	st, err = g.Stream(t.Context(), userRequest(geminiModel, "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if r := drain(t, st); r.err != nil || r.done.Usage.Model != geminiModel {
		t.Fatalf("%v, %+v", r.err, r.done.Usage)
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("log %q: a warning for a model answering as itself", logs.String())
	}
}

// TestGeminiSendsStoreFalse: every request says store: false unless the
// provider is configured to let Google keep them.
func TestGeminiSendsStoreFalse(t *testing.T) {
	t.Parallel()
	s, url := testkit.NewSim(t, sim.Config{})
	st, err := newGemini(t, url, 0, nil).Stream(t.Context(), userRequest(geminiModel, "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if r := drain(t, st); r.err != nil {
		t.Fatal(r.err)
	}
	if got := s.GeminiStores(); got.False != 1 || got.True != 0 || got.Unset != 0 {
		t.Errorf("stores %+v, want one request with store: false", got)
	}
	kept, err := gemini.New(t.Context(), gemini.Params{BaseURL: url, APIKey: simtest.TestKey, Store: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err = kept.Stream(t.Context(), userRequest(geminiModel, "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if r := drain(t, st); r.err != nil {
		t.Fatal(r.err)
	}
	if got := s.GeminiStores(); got.False != 1 || got.True != 1 {
		t.Errorf("stores %+v, want the configured provider to send store: true", got)
	}
}

// TestGeminiThinkingLevelsTheModelTakes: a reasoning effort goes as a
// Gemini 3 model's thinkingLevel, and gemini-3.8-flash, which refuses
// MINIMAL with a 400, is asked for LOW instead.
func TestGeminiThinkingLevelsTheModelTakes(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{})
	rec := &recorder{}
	g := newGemini(t, url, 0, rec)
	for _, tc := range []struct{ model, effort, want string }{
		{"gemini-3.8-flash", "minimal", "LOW"},
		{"gemini-3.8-flash", "high", "HIGH"},
		{"gemini-3.5-flash-lite", "minimal", "MINIMAL"},
	} {
		req := userRequest(tc.model, "hi")
		req.ReasoningEffort = tc.effort
		st, err := g.Stream(t.Context(), req)
		if err != nil {
			t.Fatalf("%s at %s: %v", tc.model, tc.effort, err)
		}
		if r := drain(t, st); r.err != nil {
			t.Fatalf("%s at %s: %v", tc.model, tc.effort, r.err)
		}
		gc, _ := bodyOf(t, rec.last(t))["generationConfig"].(map[string]any)
		tcfg, _ := gc["thinkingConfig"].(map[string]any)
		if got := tcfg["thinkingLevel"]; got != tc.want {
			t.Errorf("%s at %s: thinkingLevel %v, want %s", tc.model, tc.effort, got, tc.want)
		}
	}
}

// TestRouterCountsARerouteAnswer: a routed call Google answers with another
// model than the target asks is counted by the router
// (voxgate_llm_rerouted_total, by the model asked and the one that
// answered); one answered by the model asked is not.
func TestRouterCountsARerouteAnswer(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	_, url := testkit.NewSim(t, sim.Config{Now: func() time.Time { return now }})
	reg := prometheus.NewRegistry()
	r, err := llm.NewRouter(llm.RouterParams{
		Providers: map[string]llm.Provider{"google": newGemini(t, url, 0, nil)},
		Routes: []llm.Route{
			{Name: "retired", Targets: []llm.Target{{Provider: "google", Model: "gemini-2.5-pro"}}},
			{Name: "current", Targets: []llm.Target{{Provider: "google", Model: geminiModel}}},
		},
		Registerer: reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, route := range []string{"retired", "current"} {
		st, err := r.Stream(t.Context(), userRequest(route, "hi"))
		if err != nil {
			t.Fatal(err)
		}
		if res := drain(t, st); res.err != nil {
			t.Fatalf("%s: %v", route, res.err)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, mf := range mfs {
		if mf.GetName() != "voxgate_llm_rerouted_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			got = append(got, l["provider"]+" "+l["asked"]+" -> "+l["answered"]+" "+strconv.FormatFloat(m.GetCounter().GetValue(), 'f', -1, 64))
		}
	}
	if len(got) != 1 || got[0] != "google gemini-2.5-pro -> gemini-3.8-flash 1" {
		t.Fatalf("rerouted series %v; want the retired model's one answer, once", got)
	}
}
