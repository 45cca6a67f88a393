package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/logbuf"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
	"github.com/voxgate/voxgate/tools/demo"
)

// Voice and finance through the real Main and route table, against the
// simulator as the provider: a session starts, runs a demo tool, ends with
// usage, and finance sees its record in the summary and the CSV.
func TestVoiceAndFinanceRoutes(t *testing.T) {
	t.Parallel()
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})
	m, _ := startMain(t, pgtest.URL(t, demo.Migrations), func(c *config.Config) {
		c.Demo.Enabled = true
		c.Secrets.OpenAIAPIKey, c.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
	})
	base := m.URL()
	alice := mint(t, "alice", "", "pro")

	status, _, body := call(t, "POST", base+"/v1/voice/sessions", alice, strings.NewReader(`{}`))
	var start struct {
		SessionID   string `json:"session_id"`
		RealtimeURL string `json:"realtime_url"`
		Tools       []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(body), &start); status != 201 || err != nil {
		t.Fatalf("start: %d %s", status, body)
	}
	if start.RealtimeURL != ts.URL+"/v1/realtime/calls" || len(start.Tools) == 0 {
		t.Fatalf("start %+v", start)
	}
	sess := base + "/v1/voice/sessions/" + start.SessionID
	status, _, body = call(t, "POST", sess+"/tool-calls", alice,
		strings.NewReader(`{"call_id":"call_1","name":"search_recipes","arguments":"{\"query\":\"pasta\"}"}`))
	if status != 200 || !strings.Contains(body, `"output"`) {
		t.Fatalf("tool call: %d %s", status, body)
	}
	if status, _, body = call(t, "GET", sess, mint(t, "bob", "", "pro"), nil); status != 404 {
		t.Fatalf("bob reads alice's session: %d %s", status, body)
	}
	status, _, body = call(t, "POST", sess+"/end", alice,
		strings.NewReader(`{"reason":"user_hangup","usage":{"input_token_details":{"text_tokens":1000},"output_token_details":{"audio_tokens":100}}}`))
	if status != 200 || !strings.Contains(body, `"cost_micros":10400`) {
		t.Fatalf("end: %d %s", status, body)
	}

	day := time.Now().UTC().Format(time.DateOnly)
	tomorrow := time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)
	summary := base + "/v1/admin/costs/summary?group_by=user&from=" + day + "&to=" + tomorrow
	for _, tc := range []struct {
		who    string
		tok    string
		status int
	}{{"finance", mint(t, "fin", "finance", ""), 200}, {"admin", mint(t, "ops", "admin", ""), 200}, {"user", alice, 403}, {"nobody", "", 401}} {
		if status, _, body = call(t, "GET", summary, tc.tok, nil); status != tc.status {
			t.Errorf("%s: summary %d %s, want %d", tc.who, status, body, tc.status)
		}
	}
	status, _, body = call(t, "GET", summary, mint(t, "fin", "finance", ""), nil)
	if !strings.Contains(body, `"key":"alice"`) || !strings.Contains(body, `"cost_micros":10400`) {
		t.Fatalf("summary: %d %s", status, body)
	}
	status, _, body = call(t, "GET", base+"/v1/admin/costs.csv?from="+day+"&to="+tomorrow, mint(t, "fin", "finance", ""), nil)
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if status != 200 || err != nil || len(rows) != 2 || rows[1][2] != "alice" {
		t.Fatalf("csv: %d %v %q", status, err, body)
	}
	// A finance token cannot change plans.
	if status, _, _ = call(t, "PUT", base+"/v1/admin/users/alice/plan", mint(t, "fin", "finance", ""), strings.NewReader(`{"plan":"free"}`)); status != 403 {
		t.Fatalf("finance sets a plan: %d", status)
	}

	// voxgate costs export writes the same rows.
	out := filepath.Join(t.TempDir(), "costs.csv")
	env := map[string]string{"VOXGATE_DATABASE_URL": m.Config.Database.URL}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"costs", "export", "--from", day, "--to", tomorrow, "--out", out},
		func(k string) string { return env[k] }, &stdout, &stderr); err != nil {
		t.Fatalf("costs export: %v (%s)", err, stderr.String())
	}
	file, err := os.ReadFile(out)
	if err != nil || string(file) != body {
		t.Fatalf("export file differs from the route's CSV:\n%s\nvs\n%s (%v)", file, body, err)
	}
	if err := run(context.Background(), []string{"costs", "export", "--from", tomorrow, "--to", day},
		func(k string) string { return env[k] }, &stdout, &stderr); err == nil {
		t.Fatal("costs export accepted from after to")
	}
}

// Without a provider key, voice is off: its routes answer 503 and say why,
// and the rest of the gateway runs.
func TestVoiceOffWithoutAKey(t *testing.T) {
	t.Parallel()
	m, logs := startMain(t, pgtest.URL(t), nil)
	status, retry, body := call(t, "POST", m.URL()+"/v1/voice/sessions", mint(t, "alice", "", "pro"), strings.NewReader(`{}`))
	if status != 503 || errorCode(body) != "AI_FEATURE_DISABLED" || retry == "" {
		t.Fatalf("start without a key: %d %q %s", status, retry, body)
	}
	if !strings.Contains(logs.String(), "voice is off") {
		t.Fatalf("no startup warning: %s", logs)
	}
	if status, _, _ := call(t, "GET", m.URL()+"/v1/me", mint(t, "alice", "", "pro"), nil); status != 200 {
		t.Fatalf("GET /v1/me: %d", status)
	}
}

// A configured model with no price stops startup, naming it.
func TestUnpricedModelStopsStartup(t *testing.T) {
	t.Parallel()
	env := map[string]string{"VOXGATE_DATABASE_URL": pgtest.URL(t), "VOXGATE_JWT_SECRET": testSecret, "VOXGATE_ADDR": "127.0.0.1:0",
		"OPENAI_API_KEY": "sk-x", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
	cfg, err := config.Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Voice.Model = "gpt-realtime-unpriced"
	cfg.Database.SpoolDir = t.TempDir()
	m := &Main{Config: cfg, Logger: newLogger(&logbuf.Buffer{})}
	err = m.Run(context.Background())
	defer m.Close(context.Background())
	if err == nil || !strings.Contains(err.Error(), `"gpt-realtime-unpriced"`) {
		t.Fatalf("error %v, want one naming the model", err)
	}
}
