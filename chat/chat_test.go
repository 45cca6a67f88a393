package chat_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// A full turn with a tool call: the exact event sequence and payloads; the
// messages, the tool call and the usage record persisted; the history
// rehydrated; message equal to the concatenated deltas.
func TestTurnWithToolCall(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	r := f.post(t, call{user: "u1", body: map[string]any{"message": "find me a soup"}})
	if r.Status != 200 {
		t.Fatalf("status %d, body %v", r.Status, r.Body)
	}
	want := []string{"session",
		"status", "status", "content", "status", // thinking start, complete, "Let me look.", searching start
		"tool", "tool", "partial", "status", // started, finished, the early card, searching complete
		"status", "status", "content", // thinking start, complete, the answer
		"stream_complete", "done"}
	// The sim streams a token per chunk: runs of content are one entry.
	if got := r.collapsed(); !slices.Equal(got, want) {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
	for i, e := range r.Events {
		if e.ID != fmt.Sprint(i+1) {
			t.Errorf("event %d has id %q", i, e.ID)
		}
		if e.Data["type"] != e.Type {
			t.Errorf("event %s carries type %v", e.Type, e.Data["type"])
		}
	}
	ev := r.Events
	sessionID, _ := ev[0].Data["session_id"].(string)
	if !strings.HasPrefix(sessionID, "cs_") {
		t.Fatalf("session event %v", ev[0].Data)
	}
	checkStatus := func(e event, status, state, label string) {
		t.Helper()
		if e.Data["status"] != status || e.Data["state"] != state || e.Data["label"] != label {
			t.Errorf("status event %v, want %s %s %q", e.Data, status, state, label)
		}
	}
	checkStatus(ev[1], "thinking", "start", "Understanding your question…")
	checkStatus(ev[2], "thinking", "complete", "Understanding your question…")
	tool := slices.IndexFunc(ev, func(e event) bool { return e.Type == "tool" })
	checkStatus(ev[tool-1], "searching", "start", "Looking up your data…")
	checkStatus(ev[tool+3], "searching", "complete", "Looking up your data…")
	callID, _ := ev[tool].Data["call_id"].(string)
	if ev[tool].Data["name"] != "search_items" || ev[tool].Data["state"] != "started" || ev[tool+1].Data["state"] != "finished" ||
		ev[tool+1].Data["call_id"] != callID || !strings.HasPrefix(callID, "turn_") {
		t.Errorf("tool events %v %v", ev[tool].Data, ev[tool+1].Data)
	}
	if p := ev[tool+2]; p.Data["kind"] != "item" || p.Data["data"].(map[string]any)["title"] != "Tomato soup" {
		t.Errorf("partial %v", p.Data)
	}
	var deltas string
	for _, e := range ev {
		if e.Type == "content" {
			deltas += e.Data["content"].(string)
		}
	}
	resp := r.response(t)
	if resp["message"] != deltas || deltas != "Let me look. I found tomato soup." {
		t.Errorf("message %q, deltas %q", resp["message"], deltas)
	}
	if resp["session_id"] != sessionID || resp["version"] != "1.0" || resp["language"] != "en" {
		t.Errorf("response %v", resp)
	}
	cards := resp["cards"].([]any)
	if len(cards) != 1 || cards[0].(map[string]any)["kind"] != "item" {
		t.Errorf("cards %v", cards)
	}
	u := resp["usage"].(map[string]any)
	if u["input_tokens"].(float64) <= 0 || u["output_tokens"].(float64) <= 0 || u["cost_micros"].(float64) <= 0 ||
		u["plan"] != "free" || u["calls_used_today"].(float64) != 1 ||
		u["tokens_used_today"].(float64) != u["input_tokens"].(float64)+u["output_tokens"].(float64) {
		t.Errorf("usage %v", u)
	}

	// Persisted: both messages, the tool call, one usage record that
	// matches the response.
	if n := f.count(t, `SELECT count(*) FROM chat_messages WHERE session_id = $1`, sessionID); n != 2 {
		t.Errorf("%d messages stored, want 2", n)
	}
	if n := f.count(t, `SELECT count(*) FROM tool_calls WHERE session_id = $1 AND call_id = $2 AND status = 'succeeded'`, sessionID, callID); n != 1 {
		t.Errorf("%d tool_calls rows for %s", n, callID)
	}
	var in, out, cost int64
	var source string
	err := f.pool.QueryRow(context.Background(), `SELECT text_in, text_out, cost_micros, usage_source FROM usage_records
		WHERE kind = 'chat' AND session_id = $1`, sessionID).Scan(&in, &out, &cost, &source)
	if err != nil {
		t.Fatal(err)
	}
	if in != int64(u["input_tokens"].(float64)) || out != int64(u["output_tokens"].(float64)) ||
		cost != int64(u["cost_micros"].(float64)) || source != "provider_reported" {
		t.Errorf("record %d/%d/%d %s vs usage %v", in, out, cost, source, u)
	}

	// History rehydrates the card and the tool call.
	status, hist := f.get(t, "u1", "/v1/chat/sessions/"+sessionID+"/messages")
	if status != 200 {
		t.Fatalf("history: %d %v", status, hist)
	}
	items := hist["items"].([]any)
	if len(items) != 2 {
		t.Fatalf("history %v", items)
	}
	user, answer := items[0].(map[string]any), items[1].(map[string]any)
	if user["role"] != "user" || user["content"] != "find me a soup" || answer["role"] != "assistant" ||
		answer["content"] != deltas || answer["id"] != resp["message_id"] {
		t.Errorf("history %v", items)
	}
	if c := answer["cards"].([]any); len(c) != 1 || c[0].(map[string]any)["kind"] != "item" {
		t.Errorf("rehydrated cards %v", answer["cards"])
	}
	if tc := answer["tool_calls"].([]any); len(tc) != 1 || tc[0].(map[string]any)["call_id"] != callID ||
		tc[0].(map[string]any)["state"] != "finished" {
		t.Errorf("rehydrated tool calls %v", answer["tool_calls"])
	}
}

// stream:false returns the final response as JSON, the same object.
func TestNonStreaming(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	r := f.post(t, call{user: "u1", body: map[string]any{"message": "hi", "stream": false}})
	if r.Status != 200 || r.Events != nil {
		t.Fatalf("status %d events %v", r.Status, r.types())
	}
	if r.Body["message"] != "Hello there." || r.Body["usage"].(map[string]any)["plan"] != "free" {
		t.Errorf("body %v", r.Body)
	}
}
