package chat_test

import (
	"context"
	"testing"

	"github.com/voxgate/voxgate/chat"
	"github.com/voxgate/voxgate/internal/config"
)

// workflow forces its tool on the first model call: the same message
// without it calls nothing.
func TestWorkflowForcesTool(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	r := f.post(t, call{user: "u1", body: map[string]any{"message": "hello", "stream": false}})
	if r.Status != 200 || f.runs.search.Load() != 0 {
		t.Fatalf("without workflow: status %d, search ran %d times", r.Status, f.runs.search.Load())
	}
	r = f.post(t, call{user: "u1", body: map[string]any{"message": "hello", "workflow": "search_items"}})
	if got := f.runs.search.Load(); got != 1 {
		t.Fatalf("with workflow: search ran %d times, want 1 (events %v)", got, r.types())
	}
	if n := len(r.response(t)["cards"].([]any)); n != 1 {
		t.Errorf("%d cards, want the search's one", n)
	}
	// An unknown workflow is refused before anything is counted.
	r = f.post(t, call{user: "u1", body: map[string]any{"message": "hello", "workflow": "nope"}})
	if r.Status != 404 || r.Body["error"].(map[string]any)["code"] != "TOOL_NOT_FOUND" {
		t.Errorf("unknown workflow: %d %v", r.Status, r.Body)
	}
}

// A model that always calls a tool gets at most 10 model calls; the last
// is made without tools, so the turn still answers.
func TestIterationCap(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	before := chatStats(f.sim).Requests
	r := f.post(t, call{user: "u1", body: map[string]any{"message": "loop forever"}})
	resp := r.response(t)
	if got := chatStats(f.sim).Requests - before; got != 10 {
		t.Errorf("%d model calls, want 10", got)
	}
	if got := f.runs.always.Load(); got != 9 {
		t.Errorf("tool ran %d times, want 9", got)
	}
	if resp["message"] == "" {
		t.Error("no answer after the cap")
	}
	var calls int64
	if err := f.pool.QueryRow(context.Background(), `SELECT count(*) FROM tool_calls WHERE session_id = $1 AND source = 'chat'`,
		resp["session_id"]).Scan(&calls); err != nil || calls != 9 {
		t.Errorf("%d tool_calls rows (%v), want 9 distinct call ids", calls, err)
	}
}

// A final response that breaks its schema (an answer longer than the
// schema allows) is AI_VALIDATION_ERROR, and the usage is still recorded.
func TestFinalResponseValidated(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	r := f.post(t, call{user: "u1", body: map[string]any{"message": "ramble on"}})
	last := r.last()
	if last.Type != "error" || last.Data["code"] != "AI_VALIDATION_ERROR" {
		t.Fatalf("last event %s %v", last.Type, last.Data)
	}
	for _, e := range r.Events {
		if e.Type == "done" || e.Type == "stream_complete" {
			t.Errorf("%s after a failure", e.Type)
		}
	}
	sid := r.Events[0].Data["session_id"]
	if n := f.count(t, `SELECT count(*) FROM usage_records WHERE session_id = $1 AND text_out > 2000`, sid); n != 1 {
		t.Errorf("%d usage records for the failed turn", n)
	}
	if n := f.count(t, `SELECT count(*) FROM chat_messages WHERE session_id = $1`, sid); n != 0 {
		t.Errorf("%d messages stored for a refused answer", n)
	}
	r = f.post(t, call{user: "u1", body: map[string]any{"message": "ramble on", "stream": false}})
	if r.Status != 422 || r.Body["error"].(map[string]any)["code"] != "AI_VALIDATION_ERROR" {
		t.Errorf("stream:false: %d %v", r.Status, r.Body)
	}
}

// A workflow the caller's plan does not allow is refused before admission:
// the refusal counts nothing (DESIGN §9), so with three requests a minute
// (an hour and a day, so that a window's end mid-test hides nothing) the
// user is refused 403 every time, never 429, and can still chat.
func TestWorkflowNotInPlanCountsNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{plans: func(q *config.Quota) {
		p := q.Plans["free"]
		p.RequestsPerMinute, p.RequestsPerHour, p.RequestsPerDay = 3, 3, 3
		q.Plans["free"] = p
	}})
	for i := range 4 {
		r := f.post(t, call{user: "u1", plan: "free", body: map[string]any{"message": "hello", "workflow": "pro_report", "stream": false}})
		e, _ := r.Body["error"].(map[string]any)
		if r.Status != 403 || e["code"] != "TOOL_NOT_ALLOWED" {
			t.Fatalf("request %d: got %d %v, want 403 TOOL_NOT_ALLOWED", i+1, r.Status, r.Body)
		}
	}
	if r := f.post(t, call{user: "u1", plan: "free", body: map[string]any{"message": "hello", "stream": false}}); r.Status != 200 {
		t.Errorf("a plain turn after the refusals: got %d %v, want 200", r.Status, r.Body)
	}
}

// A call that finds more cards than a response holds (60, and 55 of them
// as partials too) gives a turn that succeeds: the first 50 cards, the
// count of the rest, partial events for the kept ones only, and the same
// in the stored history. Both forms of the answer agree.
func TestCardsAreCapped(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	r := f.post(t, call{user: "u1", body: map[string]any{"message": "show me the inventory"}})
	resp := r.response(t)
	cards, _ := resp["cards"].([]any)
	if len(cards) != chat.MaxCards || resp["cards_omitted"] != 10.0 {
		t.Fatalf("got %d cards and cards_omitted %v, want %d and 10", len(cards), resp["cards_omitted"], chat.MaxCards)
	}
	if id := cards[chat.MaxCards-1].(map[string]any)["data"].(map[string]any)["id"]; id != float64(chat.MaxCards-1) {
		t.Errorf("last card has id %v, want %d (the first ones kept, in order)", id, chat.MaxCards-1)
	}
	partials := 0
	for _, e := range r.Events {
		if e.Type == "partial" {
			partials++
		}
	}
	if partials != chat.MaxCards {
		t.Errorf("got %d partial events, want %d", partials, chat.MaxCards)
	}
	status, hist := f.get(t, "u1", "/v1/chat/sessions/"+resp["session_id"].(string)+"/messages")
	items, _ := hist["items"].([]any)
	if status != 200 || len(items) != 2 {
		t.Fatalf("history: got %d %v", status, hist)
	}
	answer := items[1].(map[string]any)
	if got := len(answer["cards"].([]any)); got != chat.MaxCards || answer["cards_omitted"] != 10.0 {
		t.Errorf("history: got %d cards and cards_omitted %v, want %d and 10", got, answer["cards_omitted"], chat.MaxCards)
	}
	j := f.post(t, call{user: "u2", body: map[string]any{"message": "show me the inventory", "stream": false}})
	if j.Status != 200 || len(j.Body["cards"].([]any)) != chat.MaxCards || j.Body["cards_omitted"] != 10.0 {
		t.Errorf("stream:false: got %d with cards_omitted %v", j.Status, j.Body["cards_omitted"])
	}
}

// The workflow's forced call is the answer the app asked for: arguments
// its tool refuses fail the turn as the model's invalid output. The same
// call made unforced goes back to the model, which answers.
func TestWorkflowBadArgumentsFailTurn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	r := f.post(t, call{user: "u1", body: map[string]any{"message": "log it wrongly", "workflow": "log_item", "stream": false}})
	if r.Status != 422 || r.Body["error"].(map[string]any)["code"] != "AI_VALIDATION_ERROR" || f.runs.log.Load() != 0 {
		t.Fatalf("forced: %d %v, log ran %d times", r.Status, r.Body, f.runs.log.Load())
	}
	r = f.post(t, call{user: "u2", body: map[string]any{"message": "log it wrongly", "stream": false}})
	if r.Status != 200 || f.runs.log.Load() != 0 {
		t.Fatalf("unforced: %d %v", r.Status, r.Body)
	}
}
