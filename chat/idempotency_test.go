package chat_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/quota"
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
// failed request frees its key. "Runs" means past its admission's take:
// in the moment between an admission's commit and its take, a retry with
// the key is taken for one whose first answer was lost and gets the ticket,
// and the first attempt stands aside (docs/quota.md, "Keyed admission"), so
// the retry waits until the first request has reached the model.
func TestIdempotencyInProgress(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{simCfg: &sim.Config{Latency: &sim.Latency{TTFT: 1500 * time.Millisecond}, Script: script()}})
	done := make(chan reply, 1)
	go func() {
		done <- f.post(t, call{user: "u1", key: "slow", body: map[string]any{"message": "hi", "stream": false}})
	}()
	waitFor(t, "the first request to reach the model", func() bool {
		return chatStats(f.sim).Requests > 0
	})
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
	if n := chatStats(f.sim).Requests; n != 1 {
		t.Errorf("the model was called %d times, want 1", n)
	}

	// A failed request leaves no key behind: its retry runs. (A refusal
	// the router does not fail over; a 5xx it would retry.)
	if _, err := f.sim.AddFault(sim.Fault{Endpoint: "/v1/chat/completions", Kind: sim.FaultContentFilter, Count: 1}); err != nil {
		t.Fatal(err)
	}
	r = f.post(t, call{user: "u1", key: "fails", body: map[string]any{"message": "hi", "stream": false}})
	if r.Status != 422 {
		t.Fatalf("faulted request: %d %v", r.Status, r.Body)
	}
	r = f.post(t, call{user: "u1", key: "fails", body: map[string]any{"message": "hi", "stream": false}})
	if r.Status != 200 {
		t.Errorf("retry after a failure: %d %v", r.Status, r.Body)
	}
}

// rawPost posts body with key and returns the status and the raw response
// body: a JSON body, or a stream's whole text.
func (f *fixture) rawPost(t *testing.T, user, key string, body map[string]any) (int, string) {
	t.Helper()
	resp := f.do(t, context.Background(), call{user: user, key: key, body: body})
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// doneResponse is the raw JSON of a stream's done event's response.
func doneResponse(t *testing.T, stream string) string {
	t.Helper()
	const prefix = "data: {\"type\":\"done\",\"response\":"
	i := strings.Index(stream, prefix)
	if i < 0 {
		t.Fatalf("no done event in %q", stream)
	}
	line, _, _ := strings.Cut(stream[i+len(prefix):], "\n")
	return strings.TrimSuffix(line, "}")
}

// A replay is the original final response byte for byte, whichever form
// the original and the retry take: the JSON body, and the done event's
// response of a stream.
func TestIdempotencyReplayIsByteIdentical(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	msg := map[string]any{"message": "find soup", "context": map[string]any{"zeta": 1, "alpha": "a"}}
	jsonBody := func(stream bool) map[string]any {
		b := maps.Clone(msg)
		b["stream"] = stream
		return b
	}
	for _, first := range []bool{false, true} {
		key := fmt.Sprintf("bytes-%v", first)
		status, orig := f.rawPost(t, "u1", key, jsonBody(first))
		if status != 200 {
			t.Fatalf("first (stream %v): got %d %s", first, status, orig)
		}
		want := orig
		if first {
			want = doneResponse(t, orig) + "\n"
		}
		if status, got := f.rawPost(t, "u1", key, jsonBody(false)); status != 200 || got != want {
			t.Errorf("stream %v, JSON replay:\n got %d %s\nwant %s", first, status, got, want)
		}
		status, got := f.rawPost(t, "u1", key, jsonBody(true))
		if status != 200 || doneResponse(t, got)+"\n" != want {
			t.Errorf("stream %v, streamed replay's response:\n got %d %s\nwant %s", first, status, doneResponse(t, got), want)
		}
	}
	// The jsonb copy a replica of the release before reads is the object.
	if n := f.count(t, `SELECT count(*) FROM chat_idempotency WHERE jsonb_typeof(response) = 'object'`); n != 2 {
		t.Errorf("got %d stored responses readable as objects, want 2", n)
	}
}

// A key stored by a replica of the release before (no fingerprint, the
// response only as jsonb) is still replayed during a rollout.
func TestIdempotencyRowOfThePreviousRelease(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	first := f.post(t, call{user: "u1", key: "old", body: map[string]any{"message": "find soup", "stream": false}})
	if _, err := f.pool.Exec(context.Background(), `UPDATE chat_idempotency SET fingerprint = NULL, response_bytes = NULL
		WHERE key = 'old'`); err != nil {
		t.Fatal(err)
	}
	r := f.post(t, call{user: "u1", key: "old", body: map[string]any{"message": "find soup", "stream": false}})
	if r.Status != 200 || r.Body["message_id"] != first.Body["message_id"] {
		t.Errorf("got %d %v, want the stored response", r.Status, r.Body)
	}
}

// The same key with a different request is 422 IDEMPOTENCY_MISMATCH, never
// the first answer: a different message, session, workflow, context or
// confirmation. The stream flag only picks the replay's form.
func TestIdempotencyKeyReusedWithADifferentRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	orig := map[string]any{"message": "find soup", "stream": false, "context": map[string]any{"a": 1, "b": 2}}
	first := f.post(t, call{user: "u1", key: "k", body: orig})
	if first.Status != 200 {
		t.Fatalf("first: got %d %v", first.Status, first.Body)
	}
	with := func(k string, v any) map[string]any {
		b := maps.Clone(orig)
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
		return b
	}
	cases := []struct {
		name string
		body map[string]any
		want int
	}{
		{"other message", with("message", "find bread"), 422},
		{"other session", with("session_id", first.Body["session_id"]), 422},
		{"a workflow", with("workflow", "search_items"), 422},
		{"other context", with("context", map[string]any{"a": 1, "b": 3}), 422},
		{"no context", with("context", nil), 422},
		{"same context, keys reordered", with("context", map[string]any{"b": 2, "a": 1}), 200},
		{"streamed", with("stream", true), 200},
		{"same", orig, 200},
	}
	for _, tc := range cases {
		r := f.post(t, call{user: "u1", key: "k", body: tc.body})
		code := ""
		if e, ok := r.Body["error"].(map[string]any); ok {
			code, _ = e["code"].(string)
		}
		switch {
		case r.Status != tc.want:
			t.Errorf("%s: got %d %v, want %d", tc.name, r.Status, r.Body, tc.want)
		case tc.want == 422 && code != "IDEMPOTENCY_MISMATCH":
			t.Errorf("%s: got code %q, want IDEMPOTENCY_MISMATCH", tc.name, code)
		}
	}
	if n := f.count(t, `SELECT count(*) FROM usage_records WHERE user_id = 'u1'`); n != 1 {
		t.Errorf("got %d usage records, want 1 (nothing else ran)", n)
	}
}

// A turn whose admission committed but whose reply was lost (a failover
// between the commit and the answer) failed, and its key may still read
// running (dropping it failed too, the database being away). The client's
// retry with the key is not refused: it is admitted on the ticket the lost
// admission was given, counted once, and answers (docs/chat.md,
// "Idempotency"). The state the loss leaves is made here directly: the
// running key, and the keyed ticket nobody took.
func TestIdempotencyRetryAfterALostAdmissionReply(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	ctx := context.Background()
	qs, err := quota.New(quota.Params{Pool: f.pool, Config: testQuota(), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	lost, err := qs.Admit(ctx, auth.Principal{UserID: "u1"}, quota.Estimate{Tokens: 10, Calls: 1, Key: "lost"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.pool.Exec(ctx, `UPDATE quota_tickets SET admit_taken = false WHERE id = $1`, lost.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.pool.Exec(ctx, `INSERT INTO chat_idempotency (user_id, key, state, running_until)
		VALUES ('u1', 'lost', 'running', now() + interval '10 minutes')`); err != nil {
		t.Fatal(err)
	}
	r := f.post(t, call{user: "u1", key: "lost", body: map[string]any{"message": "find soup", "stream": false}})
	if r.Status != 200 {
		t.Fatalf("the retry: got %d %v, want 200 on the lost admission's ticket", r.Status, r.Body)
	}
	if n := f.count(t, `SELECT day_requests::int FROM quota_users WHERE user_id = 'u1'`); n != 1 {
		t.Errorf("%d requests counted, want 1 (the lost admission's)", n)
	}
	waitFor(t, "the ticket to be settled", func() bool {
		return f.count(t, `SELECT count(*) FROM quota_tickets WHERE user_id = 'u1'`) == 0
	})
	if n := f.count(t, `SELECT count(*) FROM chat_idempotency WHERE user_id = 'u1' AND key = 'lost' AND state = 'done'`); n != 1 {
		t.Errorf("the key is not done after the retry answered (%d rows)", n)
	}
	again := f.post(t, call{user: "u1", key: "lost", body: map[string]any{"message": "find soup", "stream": false}})
	if again.Status != 200 || again.Body["message_id"] != r.Body["message_id"] {
		t.Errorf("a second retry: got %d %v, want the stored answer replayed", again.Status, again.Body)
	}

	// A key whose ticket is held (its turn runs) is still 409, counting nothing.
	held, err := qs.Admit(ctx, auth.Principal{UserID: "u2"}, quota.Estimate{Tokens: 10, Calls: 1, Key: "held"})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(ctx)
	if _, err := f.pool.Exec(ctx, `INSERT INTO chat_idempotency (user_id, key, state, running_until)
		VALUES ('u2', 'held', 'running', now() + interval '10 minutes')`); err != nil {
		t.Fatal(err)
	}
	if r := f.post(t, call{user: "u2", key: "held", body: map[string]any{"message": "hi", "stream": false}}); r.Status != 409 {
		t.Errorf("a retry while the first try holds its ticket: got %d %v, want 409", r.Status, r.Body)
	}
	if n := f.count(t, `SELECT day_requests::int FROM quota_users WHERE user_id = 'u2'`); n != 1 {
		t.Errorf("u2: %d requests counted, want 1", n)
	}
}
