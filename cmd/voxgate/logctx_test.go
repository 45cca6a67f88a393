package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/logbuf"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// A line a domain package logs with a request's context carries that
// request's id and its caller, once each; a line logged outside any request
// carries neither. The line is the chat context tool's failure: its
// webhook answers 500, the turn goes on without a profile.
func TestLogLinesCarryTheRequest(t *testing.T) {
	t.Parallel()
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	t.Cleanup(hook.Close)
	env := map[string]string{"VOXGATE_DATABASE_URL": pgtest.URL(t), "VOXGATE_JWT_SECRET": testSecret,
		"VOXGATE_ADDR": "127.0.0.1:0", "PROFILE_HOOK_SECRET": "a-secret-of-some-length"}
	cfg, err := config.Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database.MaxConns = 4
	cfg.Database.SpoolDir = t.TempDir()
	cfg.Secrets.OpenAIAPIKey, cfg.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
	cfg.Tools.Webhooks = []config.WebhookTool{{Name: "profile_hook", Description: "Reads the user's profile.",
		URL: hook.URL, SecretEnv: "PROFILE_HOOK_SECRET", Parameters: map[string]any{"type": "object"}}}
	contextTool := "profile_hook"
	cfg.Voice.ContextTool = &contextTool
	logs := &logbuf.Buffer{}
	m := &Main{Config: cfg, Logger: newLogger(logs), Getenv: func(k string) string { return env[k] }}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })

	resp := postChat(t, context.Background(), m.URL(), mint(t, "u-logged", "", "pro"), `{"message":"hello"}`)
	requestID := resp.Header.Get("X-Request-Id")
	if names := eventNames(t, resp); resp.StatusCode != 200 || len(names) == 0 || names[len(names)-1] != "done" {
		t.Fatalf("POST /v1/chat: got %d %v, want 200 ending in done", resp.StatusCode, names)
	}

	cases := []struct {
		name     string
		msg      string // a substring of the line's msg
		wantID   string // "" means no request_id key
		wantUser string // "" means no user_id key
	}{
		{"logged by a domain package with the request's context", "chat context tool failed", requestID, "u-logged"},
		{"logged at startup", "voxgate listening", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			line := findLine(t, logs.String(), tc.msg)
			for key, want := range map[string]string{"request_id": tc.wantID, "user_id": tc.wantUser} {
				n := strings.Count(line, `"`+key+`":`)
				var got map[string]any
				_ = json.Unmarshal([]byte(line), &got)
				switch {
				case want == "" && n != 0:
					t.Fatalf("%s: got %d, want none in %s", key, n, line)
				case want != "" && (n != 1 || got[key] != want):
					t.Fatalf("%s: got %d keys, value %v; want one, %q, in %s", key, n, got[key], want, line)
				}
			}
		})
	}
}

// findLine returns the log line whose msg contains msg.
func findLine(t *testing.T, logs, msg string) string {
	t.Helper()
	for _, line := range strings.Split(logs, "\n") {
		var l struct{ Msg string }
		if json.Unmarshal([]byte(line), &l) == nil && strings.Contains(l.Msg, msg) {
			return line
		}
	}
	t.Fatalf("no line saying %q in:\n%s", msg, logs)
	return ""
}
