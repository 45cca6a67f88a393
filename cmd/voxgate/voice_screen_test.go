package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
	"github.com/voxgate/voxgate/tools/demo"
)

// TestDirectToolCallScreened: a direct-mode voice tool call passes the
// executor's screen in the session's language, Spanish or English: a
// claim or personal data in its arguments is refused with
// unsafe_arguments, a benign one runs.
func TestDirectToolCallScreened(t *testing.T) {
	t.Parallel()
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})
	m, _ := startMain(t, pgtest.URL(t, demo.Migrations), func(c *config.Config) {
		c.Demo.Enabled = true
		c.Secrets.OpenAIAPIKey, c.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
	})
	alice := mint(t, "alice", "", "pro")
	for _, tc := range []struct {
		lang, query string
		unsafe      bool
	}{
		{"es", "La canela cura la diabetes tipo 2.", true},
		{"", "Deja de tomar tu insulina y come más cúrcuma.", true},
		{"es", "sopa de lentejas con zanahoria", false},
		{"en", "Cinnamon cures type 2 diabetes.", true},
		{"en", "lentil soup with carrots", false},
	} {
		status, _, body := call(t, "POST", m.URL()+"/v1/voice/sessions", alice, strings.NewReader(`{"language":"`+tc.lang+`"}`))
		var start struct {
			SessionID string `json:"session_id"`
		}
		if err := json.Unmarshal([]byte(body), &start); status != 201 || err != nil {
			t.Fatalf("start %s: %d %s", tc.lang, status, body)
		}
		args, _ := json.Marshal(map[string]string{"query": tc.query})
		req, _ := json.Marshal(map[string]string{"call_id": "call_1", "name": "search_recipes", "arguments": string(args)})
		status, _, body = call(t, "POST", m.URL()+"/v1/voice/sessions/"+start.SessionID+"/tool-calls", alice,
			strings.NewReader(string(req)))
		if status != 200 {
			t.Fatalf("%q: %d %s", tc.query, status, body)
		}
		if got := strings.Contains(body, `unsafe_arguments`); got != tc.unsafe {
			t.Fatalf("%q in %s: refused %s, want %s: %s", tc.query, tc.lang, strconv.FormatBool(got), strconv.FormatBool(tc.unsafe), body)
		}
		if tc.unsafe && !strings.Contains(body, `"medical_claim"`) {
			t.Fatalf("%q: no medical_claim flag: %s", tc.query, body)
		}
		// One session at a time: the plan's concurrency cap.
		if status, _, body = call(t, "POST", m.URL()+"/v1/voice/sessions/"+start.SessionID+"/end", alice,
			strings.NewReader(`{"reason":"user_hangup"}`)); status != 200 {
			t.Fatalf("end: %d %s", status, body)
		}
	}
}
