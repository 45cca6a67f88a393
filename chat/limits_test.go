package chat_test

import (
	"sync"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/sim"
)

// A refusal before the stream starts is §5 JSON: 429 with Retry-After and
// the friendly message.
func TestRateLimitBeforeStream(t *testing.T) {
	t.Parallel()
	// Quota reads a clock that stands half way through a minute, so both
	// posts fall in its window however long the machine takes between
	// them, and the wait left is 30 s.
	at := time.Date(2030, 6, 14, 12, 0, 30, 0, time.UTC)
	f := newFixture(t, options{quotaNow: func() time.Time { return at }, plans: func(q *config.Quota) {
		p := q.Plans["free"]
		p.RequestsPerMinute = 1
		q.Plans["free"] = p
	}})
	if r := f.post(t, call{user: "u1", body: map[string]any{"message": "hi"}}); r.Status != 200 {
		t.Fatalf("first: %d", r.Status)
	}
	r := f.post(t, call{user: "u1", body: map[string]any{"message": "hi"}})
	e, _ := r.Body["error"].(map[string]any)
	if r.Status != 429 || r.Events != nil || e["code"] != "RATE_LIMITED" ||
		e["message"] != "You've been busy! Give me a moment to catch up." || r.Header.Get("Retry-After") != "30" {
		t.Errorf("second: %d %v %v (Retry-After %q)", r.Status, r.types(), r.Body, r.Header.Get("Retry-After"))
	}
}

// A failure after the stream started is one error event with a §5 code,
// and the stream ends without done.
func TestFailureAfterStreamStart(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		fault sim.Fault
		code  string
	}{
		// Retry-After past the route's budget: no retry, and the one
		// target's refusal is the route's.
		{"rate limited upstream", sim.Fault{Kind: sim.FaultRateLimit, RetryAfter: 30}, "AI_RATE_LIMITED"},
		{"cut mid-stream", sim.Fault{Kind: sim.FaultStreamError, AfterChunks: 2}, "AI_UNAVAILABLE"},
		{"connection cut mid-body", sim.Fault{Kind: sim.FaultCutStream, AfterChunks: 2}, "AI_UNAVAILABLE"},
		{"unreadable chunk", sim.Fault{Kind: sim.FaultMalformedJSON, AfterChunks: 2}, "AI_PARSE_ERROR"},
	}
	for _, tc := range cases {
		// A fixture each: three failures in a row would open the one
		// target's breaker (DESIGN §11), and the next case would be
		// degraded instead.
		f := newFixture(t, options{})
		tc.fault.Endpoint, tc.fault.Count = "/v1/chat/completions", 1
		if _, err := f.sim.AddFault(tc.fault); err != nil {
			t.Fatal(err)
		}
		r := f.post(t, call{user: "u-" + tc.name, body: map[string]any{"message": "tell me a story"}})
		if r.Status != 200 || len(r.Events) < 2 || r.Events[0].Type != "session" {
			t.Fatalf("%s: %d %v", tc.name, r.Status, r.types())
		}
		last := r.last()
		if last.Type != "error" || last.Data["code"] != tc.code || last.Data["message"] == "" {
			t.Errorf("%s: last event %s %v, want error %s", tc.name, last.Type, last.Data, tc.code)
		}
		if retry, _ := last.Data["retry_after_s"].(float64); tc.code != "AI_PARSE_ERROR" && retry < 1 {
			t.Errorf("%s: retry_after_s %v, want the retry advice", tc.name, last.Data["retry_after_s"])
		}
		for _, e := range r.Events {
			if e.Type == "done" {
				t.Errorf("%s: done after an error", tc.name)
			}
		}
	}
}

// Another user's session, history or confirmation is 404, never revealed.
func TestForeignSession(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	sid := f.post(t, call{user: "owner", body: map[string]any{"message": "hi"}}).Events[0].Data["session_id"].(string)
	if st, _ := f.get(t, "thief", "/v1/chat/sessions/"+sid+"/messages"); st != 404 {
		t.Errorf("history: %d", st)
	}
	if st, _ := f.send(t, "DELETE", "thief", "/v1/chat/sessions/"+sid); st != 404 {
		t.Errorf("delete: %d", st)
	}
	r := f.post(t, call{user: "thief", body: map[string]any{"message": "hi", "session_id": sid}})
	if r.Status != 404 {
		t.Errorf("post into it: %d %v", r.Status, r.types())
	}
	if _, list := f.get(t, "thief", "/v1/chat/sessions"); len(list["items"].([]any)) != 0 {
		t.Errorf("listed: %v", list)
	}
	if st, _ := f.get(t, "owner", "/v1/chat/sessions/"+sid+"/messages"); st != 200 {
		t.Errorf("owner's history: %d", st)
	}
}

// Three replicas (three pools, one database, one model) sending one user's
// turns at once never run more than the plan's concurrent turns.
func TestConcurrentTurnsAcrossReplicas(t *testing.T) {
	t.Parallel()
	one := func(q *config.Quota) {
		p := q.Plans["free"]
		p.ConcurrentTurns = 1
		q.Plans["free"] = p
	}
	first := newFixture(t, options{plans: one, simCfg: &sim.Config{Latency: &sim.Latency{TTFT: 3 * time.Second}, Script: script()}})
	replicas := []*fixture{first}
	for range 2 {
		replicas = append(replicas, newFixture(t, options{plans: one, dbURL: first.dbURL, sim: first.sim, simURL: simURL(first)}))
	}
	var wg sync.WaitGroup
	results := make(chan reply, 9)
	for i := range 9 {
		wg.Go(func() {
			results <- replicas[i%3].post(t, call{user: "busy", body: map[string]any{"message": "hi", "stream": false}})
		})
	}
	wg.Wait()
	close(results)
	ok, limited := 0, 0
	for r := range results {
		switch {
		case r.Status == 200:
			ok++
		case r.Status == 429 && r.Body["error"].(map[string]any)["code"] == "CONCURRENT_LIMIT":
			limited++
		default:
			t.Errorf("unexpected %d %v", r.Status, r.Body)
		}
	}
	if ok != 1 || limited != 8 {
		t.Errorf("%d answered and %d refused, want 1 and 8", ok, limited)
	}
}
