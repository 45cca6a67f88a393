package chat_test

import (
	"context"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/logbuf"
	"github.com/voxgate/voxgate/llm"
)

// gated holds back every model call whose last message contains marker
// until open is closed, and reports each such call on entered.
type gated struct {
	llm.Provider
	marker  string
	entered chan struct{}
	open    chan struct{}
}

func (g gated) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	if n := len(req.Messages); n > 0 && strings.Contains(req.Messages[n-1].Content, g.marker) {
		g.entered <- struct{}{}
		select {
		case <-g.open:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.Provider.Stream(ctx, req)
}

// deleteDuringTurn has u1 start a conversation, then send message (which g
// holds at the model), delete the conversation while that turn waits, and
// let the turn go on; it returns the conversation and the turn's reply.
func deleteDuringTurn(t *testing.T, f *fixture, g gated, message string) (string, reply) {
	t.Helper()
	first := f.post(t, call{user: "u1", body: map[string]any{"message": "hello", "stream": false}})
	sid, _ := first.Body["session_id"].(string)
	if first.Status != 200 || sid == "" {
		t.Fatalf("first turn: got %d %v", first.Status, first.Body)
	}
	done := make(chan reply, 1)
	go func() {
		resp := f.do(t, context.Background(), call{user: "u1", body: map[string]any{"message": message, "session_id": sid}})
		defer resp.Body.Close()
		done <- readReply(t, resp)
	}()
	<-g.entered
	if status, body := f.send(t, "DELETE", "u1", "/v1/chat/sessions/"+sid); status != 204 {
		t.Fatalf("delete: got %d %v, want 204", status, body)
	}
	close(g.open)
	return sid, <-done
}

// Deleting a conversation while its turn runs: the turn still answers
// (done, not an error), nothing is stored for the deleted conversation,
// the usage is recorded, and nothing is logged as an error.
func TestDeleteSessionDuringTurn(t *testing.T) {
	t.Parallel()
	g := gated{marker: "hold on", entered: make(chan struct{}, 1), open: make(chan struct{})}
	var logs logbuf.Buffer
	f := newFixture(t, options{logs: &logs, provider: func(p llm.Provider) llm.Provider { g.Provider = p; return g }})
	sid, r := deleteDuringTurn(t, f, g, "hold on, please")
	if last := r.last(); last.Type != "done" {
		t.Fatalf("got last event %s %v, want done", last.Type, last.Data)
	}
	if msg := r.response(t)["message"]; msg == "" {
		t.Errorf("got an empty answer, want the model's")
	}
	if n := f.count(t, `SELECT count(*) FROM chat_messages WHERE session_id = $1`, sid); n != 0 {
		t.Errorf("got %d messages stored for the deleted conversation, want 0", n)
	}
	if n := f.count(t, `SELECT count(*) FROM chat_sessions WHERE id = $1`, sid); n != 0 {
		t.Errorf("got the deleted session back (%d rows)", n)
	}
	if n := f.count(t, `SELECT count(*) FROM usage_records WHERE session_id = $1`, sid); n != 2 {
		t.Errorf("got %d usage records for the conversation, want 2 (both turns)", n)
	}
	if strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Errorf("logged an error: %s", logs.String())
	}
}

// A turn that stops for a confirmation in a conversation deleted while it
// ran stores no pending call (it could never be confirmed) and ends with
// NOT_FOUND, not INTERNAL; its usage is recorded.
func TestDeleteSessionBeforeConfirmation(t *testing.T) {
	t.Parallel()
	g := gated{marker: "hold on", entered: make(chan struct{}, 1), open: make(chan struct{})}
	f := newFixture(t, options{provider: func(p llm.Provider) llm.Provider { g.Provider = p; return g }})
	sid, r := deleteDuringTurn(t, f, g, "hold on, log oats")
	if last := r.last(); last.Type != "error" || last.Data["code"] != "NOT_FOUND" {
		t.Fatalf("got last event %s %v, want error NOT_FOUND", last.Type, last.Data)
	}
	if n := f.count(t, `SELECT count(*) FROM chat_confirmations WHERE session_id = $1`, sid); n != 0 {
		t.Errorf("got %d pending calls stored for the deleted conversation, want 0", n)
	}
	if n := f.count(t, `SELECT count(*) FROM usage_records WHERE session_id = $1`, sid); n != 2 {
		t.Errorf("got %d usage records for the conversation, want 2 (both turns)", n)
	}
}
