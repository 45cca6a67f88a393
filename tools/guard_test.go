package tools

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// weightHook is a webhook write tool that records a weight, with its
// receiver: hits counts every request it got.
func weightHook(t *testing.T, dryRun bool) (*Executor, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte(`{"saved":true}`))
	}))
	t.Cleanup(srv.Close)
	w := config.WebhookTool{Name: "record_weight", Description: "Records the user's weight.", URL: srv.URL, SecretEnv: "HOOK",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{
			"weight": map[string]any{"type": "number"}, "note": map[string]any{"type": "string"}}, "required": []any{"weight"}},
		Output: map[string]any{"type": "object", "required": []any{"saved"}},
		Tier:   "standard", WritesTo: []string{"app.weights"},
		Measures: map[string]string{"weight": "weight_kg"}, Timeout: 2 * time.Second}
	reg := mustRegistry(t, RegistryParams{Config: config.Tools{Webhooks: []config.WebhookTool{w}},
		Getenv: func(string) string { return hookSecret }})
	e, err := NewExecutor(ExecutorParams{DB: pgtest.Pool(t), Registry: reg, Plans: fakePlans{}, DryRun: dryRun,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return e, &hits
}

// A webhook write whose declared measure is out of range is never
// called: the call answers a blocking unsafe_value flag, and the
// receiver sees nothing. In range, it is called once.
func TestWebhookWriteGuardedByRanges(t *testing.T) {
	t.Parallel()
	e, hits := weightHook(t, false)
	for i, args := range []string{`{"weight": 19.9}`, `{"weight": 501}`, `{"weight": -3}`, `{"weight": 1e400}`} {
		c := chatCall("sess", "bad-"+string(rune('a'+i)), "record_weight", args)
		c.Confirmed = true
		r, err := e.Execute(context.Background(), c)
		if err != nil {
			if strings.Contains(args, "e400") {
				continue // not a number JSON can hold: refused by the schema, never called either
			}
			t.Fatalf("%s: %v", args, err)
		}
		if len(r.SafetyFlags) != 1 || r.SafetyFlags[0].Type != "unsafe_value" || !r.SafetyFlags[0].Blocked ||
			r.SafetyFlags[0].Field != "weight" || len(r.DBWrites) != 0 || !strings.Contains(r.Output, "unsafe_value") {
			t.Errorf("%s: %+v, want one blocking unsafe_value on weight, no write", args, r)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the receiver got %d requests for out-of-range values, want 0", n)
	}
	c := chatCall("sess", "good", "record_weight", `{"weight": 72.5}`)
	c.Confirmed = true
	r, err := e.Execute(context.Background(), c)
	if err != nil || r.Error != nil || len(r.SafetyFlags) != 0 {
		t.Fatalf("in range: %+v %v", r, err)
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("the receiver got %d requests, want 1", n)
	}
}

// In dry run a webhook write is never called: the answer is the proposal,
// marked dry_run, with the write it would have made. Ranges still apply.
func TestWebhookWriteDryRun(t *testing.T) {
	t.Parallel()
	e, hits := weightHook(t, true)
	c := chatCall("sess", "dry", "record_weight", `{"weight": 70, "note": "after run"}`)
	c.Confirmed = true
	r, err := e.Execute(context.Background(), c)
	if err != nil || r.Error != nil {
		t.Fatalf("%+v %v", r, err)
	}
	var got struct {
		Written  bool `json:"written"`
		DryRun   bool `json:"dry_run"`
		Proposal struct {
			Tool      string         `json:"tool"`
			Arguments map[string]any `json:"arguments"`
		} `json:"proposal"`
	}
	if err := json.Unmarshal(r.Result, &got); err != nil {
		t.Fatal(err)
	}
	if got.Written || !got.DryRun || got.Proposal.Tool != "record_weight" || got.Proposal.Arguments["weight"] != float64(70) {
		t.Errorf("result %s, want the dry-run proposal", r.Result)
	}
	if len(r.DBWrites) != 1 || !r.DBWrites[0].DryRun || r.DBWrites[0].Table != "app.weights" {
		t.Errorf("db_writes %+v, want one dry-run write to app.weights", r.DBWrites)
	}
	bad := chatCall("sess", "dry-bad", "record_weight", `{"weight": 900}`)
	bad.Confirmed = true
	if r, err := e.Execute(context.Background(), bad); err != nil || len(r.SafetyFlags) != 1 || len(r.DBWrites) != 0 {
		t.Errorf("out of range in dry run: %+v %v, want the unsafe_value flag and no proposal", r, err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the receiver got %d requests in dry run, want 0", n)
	}
}

// A webhook's measures are checked at load: an unknown measure or an
// argument the parameters do not name stops startup, naming the key.
func TestWebhookMeasuresChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		measures map[string]string
		want     string
	}{
		{map[string]string{"weight": "weight_lb"}, `measures: weight: "weight_lb" is not a measure`},
		{map[string]string{"wieght": "weight_kg"}, `measures: "wieght" is not one of the tool's parameters`},
	} {
		w := config.WebhookTool{Name: "record_weight", Description: "Records a weight.", URL: "https://example.invalid/w",
			SecretEnv: "HOOK", Parameters: map[string]any{"type": "object", "properties": map[string]any{
				"weight": map[string]any{"type": "number"}}}, Measures: tc.measures}
		_, err := NewRegistry(RegistryParams{Config: config.Tools{Webhooks: []config.WebhookTool{w}}, Plans: testPlans,
			Getenv: func(string) string { return hookSecret }})
		if err == nil || !strings.Contains(err.Error(), "tools.webhooks[0] (record_weight)."+tc.want) {
			t.Errorf("measures %v: %v, want an error naming %q", tc.measures, err, tc.want)
		}
	}
}

// A tool that only reads is never held back by dry run.
func TestDryRunLeavesReadsAlone(t *testing.T) {
	t.Parallel()
	reg := mustRegistry(t, RegistryParams{Builtins: []*Tool{echoTool("echo")}})
	e, err := NewExecutor(ExecutorParams{DB: pgtest.Pool(t), Registry: reg, Plans: fakePlans{}, DryRun: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Execute(context.Background(), chatCall("sess", "read", "echo", `{"text":"hi"}`))
	if err != nil || strings.Contains(string(r.Result), "dry_run") {
		t.Errorf("a read in dry run: %s %v, want the tool's own answer", r.Result, err)
	}
}
