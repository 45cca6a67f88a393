package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/sim"
)

// DESIGN §11's outcome table through POST /v1/chat, streamed and not.
func TestChatRouteOutcomes(t *testing.T) {
	t.Parallel()
	both := func(f sim.Fault) func(*testing.T, *gateway) {
		return func(t *testing.T, g *gateway) { g.primary.fault(t, f); g.fallback.fault(t, f) }
	}
	wrongKey := func(p, f *sim.Config) { p.Keys, f.Keys = []string{"sk-another"}, []string{"sk-another"} }
	cases := []struct {
		name    string
		sims    func(p, f *sim.Config)
		faults  func(*testing.T, *gateway)
		status  int    // stream: false
		code    string // "" for an answer
		retry   string // Retry-After
		status_ string // the audit row's status and error_code
	}{
		{name: "every target failed: degraded", faults: both(sim.Fault{Kind: sim.FaultUnavailable, Fraction: 1}),
			status: 200, status_: "degraded"},
		{name: "every target refused the key: 502", sims: wrongKey,
			status: 502, code: "AI_CONFIG_ERROR", status_: "refused AI_CONFIG_ERROR"},
		{name: "every target rate-limited: 429", faults: both(sim.Fault{Kind: sim.FaultRateLimit, Fraction: 1, RetryAfter: 30}),
			status: 429, code: "AI_RATE_LIMITED", retry: "30", status_: "refused AI_RATE_LIMITED"},
		{name: "a content-filter refusal: 422, never failed over",
			faults: func(t *testing.T, g *gateway) {
				g.primary.fault(t, sim.Fault{Kind: sim.FaultContentFilter, Fraction: 1})
			},
			status: 422, code: "AI_CONTENT_FILTERED", status_: "refused AI_CONTENT_FILTERED"},
		{name: "a context too long for every target: 502, never failed over",
			faults: func(t *testing.T, g *gateway) {
				g.primary.fault(t, sim.Fault{Kind: sim.FaultContextLength, Fraction: 1})
			},
			status: 502, code: "AI_CONFIG_ERROR", status_: "refused AI_CONFIG_ERROR"},
	}
	const fallback = "Our assistant is resting. Try again soon."
	tune := func(c *config.Config) {
		c.Chat.Degraded = config.Degraded{Message: fallback,
			Suggestions: []config.DegradedSuggestion{{Label: "Retry", Message: "Please try again."}}}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := startGateway(t, tc.sims, tune)
			if tc.faults != nil {
				tc.faults(t, g)
			}
			// Streamed: the same outcome, after the session event.
			r := g.chat(t, "streamed", `{"message":"hello"}`)
			if r.Status != 200 || len(r.Events) == 0 || r.Events[0].Type != "session" {
				t.Fatalf("stream: %d %v %s", r.Status, r.types(), r.Raw)
			}
			if tc.code == "" {
				checkDegraded(t, r, fallback)
				if got := r.types(); !slices.Equal(got[len(got)-3:], []string{"content", "stream_complete", "done"}) {
					t.Errorf("stream: events %v, want the fallback's content, stream_complete, done", got)
				}
			} else if last := r.last(); last.Type != "error" || last.Data["code"] != tc.code {
				t.Errorf("stream: last event %s %v, want error %s", last.Type, last.Data, tc.code)
			}
			// stream: false: the status of the table.
			j := g.chat(t, "json", `{"message":"hello","stream":false}`)
			if j.Status != tc.status {
				t.Fatalf("stream:false: %d %s, want %d", j.Status, j.Raw, tc.status)
			}
			if tc.code == "" {
				checkDegraded(t, j, fallback)
			} else if e, _ := j.Body["error"].(map[string]any); e["code"] != tc.code || j.Header.Get("Retry-After") != tc.retry {
				t.Errorf("stream:false: %v Retry-After %q, want %s with %q", j.Body, j.Header.Get("Retry-After"), tc.code, tc.retry)
			}
			if _, _, _, status := g.audit(t, "json"); status != tc.status_ {
				t.Errorf("audit status %q, want %q", status, tc.status_)
			}
		})
	}
}

// checkDegraded asserts DESIGN §11's degraded answer: degraded true, the
// configured message and suggestions, nothing from a provider.
func checkDegraded(t *testing.T, r chatReply, message string) {
	t.Helper()
	resp := r.response()
	sugg, _ := resp["suggestions"].([]any)
	first, _ := func() (map[string]any, bool) {
		if len(sugg) != 1 {
			return nil, false
		}
		m, ok := sugg[0].(map[string]any)
		return m, ok
	}()
	if resp["degraded"] != true || resp["message"] != message || first["label"] != "Retry" || first["message"] != "Please try again." {
		t.Errorf("degraded answer: %v, want degraded with %q and the configured suggestion", resp, message)
	}
}

// A failed attempt the provider reported usage for is an attempt record,
// priced, never the turn's chat record: a content filter stops the
// primary's stream after its role frame (before any content), with the
// usage of the prompt it read.
func TestChatRouteAttemptBilled(t *testing.T) {
	t.Parallel()
	g := startGateway(t, nil, nil)
	g.primary.fault(t, sim.Fault{Kind: sim.FaultContentFilter, Fraction: 1, AfterChunks: 1})
	if r := g.chat(t, "u1", `{"message":"hello","stream":false}`); r.Status != 422 || errorCode(r.Raw) != "AI_CONTENT_FILTERED" {
		t.Fatalf("got %d %s, want 422", r.Status, r.Raw)
	}
	recs := g.records(t, "u1")
	if len(recs) != 2 {
		t.Fatalf("records %+v, want the turn's and the attempt's", recs)
	}
	var chat, attempt record
	for _, r := range recs {
		switch r.Kind {
		case "chat":
			chat = r
		case "attempt":
			attempt = r
		}
	}
	if attempt.Provider != "primary" || attempt.TextIn == 0 || attempt.CostMicros == nil || *attempt.CostMicros == 0 ||
		!strings.HasSuffix(attempt.TurnID, "/1") || !strings.HasPrefix(attempt.TurnID, chat.TurnID+"/") {
		t.Errorf("attempt record %+v, want primary's usage, priced, under turn %s/1", attempt, chat.TurnID)
	}
	if chat.TextIn != 0 || chat.TextOut != 0 || chat.Provider != "none" {
		t.Errorf("chat record %+v, want no usage of its own and no provider (nothing answered)", chat)
	}
	if g.fallback.count() != 0 {
		t.Errorf("the fallback saw %d calls after a content-filter refusal, want 0", g.fallback.count())
	}
}

// A tool loop that changes provider between iterations: OpenAI calls a
// tool, then fails; Gemini continues with the tool's result (the history
// in its own format, the call under the gateway's id) and answers. Neither
// provider receives the user's id, name or email. (The Anthropic adapter
// is not on this branch's main yet: the second vendor is Gemini.)
func TestChatRouteToolLoopSwitchesProvider(t *testing.T) {
	t.Parallel()
	g := startGateway(t, nil, nil)
	var once sync.Once
	g.primary.before = func(body []byte) {
		if bytes.Contains(body, []byte(`"role":"tool"`)) {
			once.Do(func() { g.primary.fault(t, sim.Fault{Kind: sim.FaultUnavailable, Fraction: 1}) })
		}
	}
	const user = "alice.private@example.com"
	if _, err := g.m.Pool.Exec(context.Background(), `INSERT INTO demo.profiles (user_id, display_name, diet)
		VALUES ($1, 'Alice Privatename', 'vegetarian')`, user); err != nil {
		t.Fatal(err)
	}
	r := g.chat(t, user, `{"message":"find me a pasta recipe"}`)
	resp := r.response()
	if msg, _ := resp["message"].(string); !strings.Contains(msg, "search_recipes") {
		t.Fatalf("answer %v (events %v), want the fallback's answer from the tool's result", resp, r.types())
	}
	trace, provider, model, _ := g.audit(t, user)
	want := []string{"1 primary/" + primaryModel + ":success", "2 primary/" + primaryModel + ":PROVIDER_UNAVAILABLE",
		"2 primary/" + primaryModel + ":PROVIDER_UNAVAILABLE", "2 fallback/" + fallbackModel + ":success"}
	if !slices.Equal(trace, want) || provider != "fallback" || model != fallbackModel {
		t.Errorf("audit %q by %s/%s, want %q by fallback", trace, provider, model, want)
	}
	gem, _ := g.fallback.calls()
	if len(gem) != 1 || !bytes.Contains(gem[0], []byte("functionResponse")) || !bytes.Contains(gem[0], []byte("search_recipes")) {
		t.Errorf("the fallback's request lacks the tool call and its result: %s", gem)
	}
	oai, _ := g.primary.calls()
	for _, body := range append(oai, gem...) {
		for _, secret := range []string{"alice.private", "example.com", "Privatename"} {
			if bytes.Contains(body, []byte(secret)) {
				t.Errorf("a provider received %q: %s", secret, body)
			}
		}
	}
	// The operator sees why traffic moved: the primary's two failures.
	st := g.breakers(t)
	if p := st[0]; p.Provider != "primary" || p.State != "closed" || p.Failures != 2 || !p.Configured || !strings.Contains(p.Reason, "2 recent failures") {
		t.Errorf("primary: %+v, want closed with 2 failures, and why", p)
	}
	if f := st[1]; f.Provider != "fallback" || f.Failures != 0 || f.Reason != "closed: healthy" {
		t.Errorf("fallback: %+v, want closed and healthy", f)
	}
}

// The router's admin routes are for admins only: finance and users get
// 403, and a user never reads a turn's trace.
func TestChatRouteAdminOnly(t *testing.T) {
	t.Parallel()
	g := startGateway(t, nil, nil)
	for _, role := range []string{"", "finance"} {
		for _, path := range []string{"/v1/admin/providers", "/v1/admin/chat/turns/turn_x", "/v1/admin/audit"} {
			if code, _, body := call(t, "GET", g.m.URL()+path, mint(t, "u1", role, ""), nil); code != 403 || errorCode(body) != "FORBIDDEN" {
				t.Errorf("%s as %q: %d %s, want 403 FORBIDDEN", path, role, code, body)
			}
		}
	}
	if code, _, body := call(t, "GET", g.m.URL()+"/v1/admin/chat/turns/turn_unknown", mint(t, "ops", "admin", ""), nil); code != 404 {
		t.Errorf("an unknown turn: %d %s, want 404", code, body)
	}
}
