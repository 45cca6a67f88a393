package main

import (
	"testing"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
	"github.com/voxgate/voxgate/tools/demo"
)

// TestQueryStringsAreStrict: every route that reads its query string,
// through the whole server, answers 400 INVALID_REQUEST to a query that
// does not parse (a raw ';' Go's parser would drop, widening the answer),
// to a parameter it does not take and to one given twice, and 200 to the
// same request well formed.
func TestQueryStringsAreStrict(t *testing.T) {
	t.Parallel()
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})
	m, _ := startMain(t, pgtest.URL(t, demo.Migrations), func(c *config.Config) {
		c.Demo.Enabled = true
		c.Secrets.OpenAIAPIKey, c.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
	})
	base := m.URL()
	user, fin := mint(t, "u-query", "", "pro"), mint(t, "fin-query", "finance", "")
	routes := []struct {
		path, tok, good string
	}{
		{"/v1/admin/sessions", fin, "user_id=x%3By&limit=5"},
		{"/v1/admin/costs/summary", fin, "user_id=x%3By&group_by=user"},
		{"/v1/admin/costs.csv", fin, "user_id=x%3By"},
		{"/v1/chat/sessions", user, "limit=5"},
		{"/v1/voice/sessions", user, "limit=5"},
		{"/v1/tools", user, "voice=true"},
	}
	bad := []struct{ name, query string }{
		{"raw semicolon", "limit=5;user_id=x"},
		{"bad escape", "limit=%zz"},
		{"unknown parameter", "sort=asc"},
		{"repeated parameter", "limit=5&limit=6"},
	}
	for _, r := range routes {
		t.Run(r.path, func(t *testing.T) {
			if status, _, body := call(t, "GET", base+r.path+"?"+r.good, r.tok, nil); status != 200 {
				t.Fatalf("?%s: got %d %.200s, want 200", r.good, status, body)
			}
			for _, b := range bad {
				status, _, body := call(t, "GET", base+r.path+"?"+b.query, r.tok, nil)
				if status != 400 || errorCode(body) != "INVALID_REQUEST" {
					t.Errorf("%s (?%s): got %d %.200s, want 400 INVALID_REQUEST", b.name, b.query, status, body)
				}
			}
		})
	}
}
