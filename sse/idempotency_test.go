package sse_test

import (
	"testing"
	"time"

	"github.com/voxgate/voxgate/sim"
)

// The same key from the same user replays the stored response, as JSON or
// as a short stream, without calling the model or billing again.
func TestIdempotencyReplay(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	first := f.post(t, call{user: "u1", key: "k-1", body: map[string]any{"message": "find soup", "stream": false}})
	if first.Status != 200 {
		t.Fatalf("first: %d %v", first.Status, first.Body)
	}
	calls := chatStats(f.sim).Requests
	again := f.post(t, call{user: "u1", key: "k-1", body: map[string]any{"message": "find soup", "stream": false}})
	if again.Status != 200 || again.Body["message_id"] != first.Body["message_id"] || again.Body["message"] != first.Body["message"] {
		t.Fatalf("replay %d %v, first %v", again.Status, again.Body, first.Body)
	}
	streamed := f.post(t, call{user: "u1", key: "k-1", body: map[string]any{"message": "find soup"}})
	if got := streamed.types(); len(got) != 4 || got[0] != "session" || got[1] != "content" || got[3] != "done" ||
		streamed.response(t)["message_id"] != first.Body["message_id"] {
		t.Fatalf("streamed replay %v", got)
	}
	if got := chatStats(f.sim).Requests; got != calls {
		t.Errorf("a replay called the model (%d → %d)", calls, got)
	}
	if n := f.count(t, `SELECT count(*) FROM usage_records WHERE user_id = 'u1'`); n != 1 {
		t.Errorf("%d usage records, want 1", n)
	}
	if n := f.count(t, `SELECT count(*) FROM chat_messages WHERE user_id = 'u1'`); n != 2 {
		t.Errorf("%d messages, want 2", n)
	}
	// Another user's same key is their own.
	other := f.post(t, call{user: "u2", key: "k-1", body: map[string]any{"message": "hi", "stream": false}})
	if other.Status != 200 || other.Body["message_id"] == first.Body["message_id"] {
		t.Errorf("another user's key: %v", other.Body)
	}
	// A bad key is 400.
	bad := f.post(t, call{user: "u1", key: "has space", body: map[string]any{"message": "hi"}})
	if bad.Status != 400 {
		t.Errorf("bad key: %d", bad.Status)
	}
}

// While the first request runs, a retry with its key is 409 CONFLICT; a
// failed request frees its key.
func TestIdempotencyInProgress(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{simCfg: &sim.Config{Latency: &sim.Latency{TTFT: 1500 * time.Millisecond}, Script: script()}})
	done := make(chan reply, 1)
	go func() {
		done <- f.post(t, call{user: "u1", key: "slow", body: map[string]any{"message": "hi", "stream": false}})
	}()
	deadline := time.Now().Add(5 * time.Second)
	for f.count(t, `SELECT count(*) FROM chat_idempotency WHERE key = 'slow'`) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the first request never claimed its key")
		}
		time.Sleep(10 * time.Millisecond)
	}
	r := f.post(t, call{user: "u1", key: "slow", body: map[string]any{"message": "hi", "stream": false}})
	if r.Status != 409 || r.Body["error"].(map[string]any)["code"] != "CONFLICT" {
		t.Errorf("retry while running: %d %v", r.Status, r.Body)
	}
	if first := <-done; first.Status != 200 {
		t.Fatalf("first: %d %v", first.Status, first.Body)
	}
	if n := f.count(t, `SELECT count(*) FROM usage_records WHERE user_id = 'u1'`); n != 1 {
		t.Errorf("%d usage records, want 1", n)
	}

	// A failed request leaves no key behind: its retry runs.
	if _, err := f.sim.AddFault(sim.Fault{Endpoint: "/v1/chat/completions", Kind: sim.FaultServerError, Count: 1}); err != nil {
		t.Fatal(err)
	}
	r = f.post(t, call{user: "u1", key: "fails", body: map[string]any{"message": "hi", "stream": false}})
	if r.Status < 500 {
		t.Fatalf("faulted request: %d %v", r.Status, r.Body)
	}
	r = f.post(t, call{user: "u1", key: "fails", body: map[string]any{"message": "hi", "stream": false}})
	if r.Status != 200 {
		t.Errorf("retry after a failure: %d %v", r.Status, r.Body)
	}
}
