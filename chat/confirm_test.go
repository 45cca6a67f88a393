package chat_test

import (
	"context"
	"slices"
	"testing"
)

// logTurn asks for a standard-tier call and returns its confirmation.
func logTurn(t *testing.T, f *fixture, user string) (sessionID, callID string) {
	t.Helper()
	r := f.post(t, call{user: user, body: map[string]any{"message": "log my oats"}})
	types := r.types()
	at := slices.Index(types, "confirmation_required")
	if want := []string{"confirmation_required", "status", "stream_complete", "done"}; at < 0 || !slices.Equal(types[at:], want) {
		t.Fatalf("events %v", types)
	}
	c := r.Events[at].Data
	if c["name"] != "log_item" || c["tier"] != "standard" || c["description"] != "Log an item to your diary." {
		t.Fatalf("confirmation_required %v", c)
	}
	acts := r.response(t)["actions"].([]any)
	if len(acts) != 1 || acts[0].(map[string]any)["type"] != "confirm" ||
		acts[0].(map[string]any)["payload"].(map[string]any)["call_id"] != c["call_id"] {
		t.Fatalf("actions %v", acts)
	}
	return r.Events[0].Data["session_id"].(string), c["call_id"].(string)
}

func confirmBody(sessionID, callID string, allow bool) map[string]any {
	return map[string]any{"session_id": sessionID, "confirm": map[string]any{"call_id": callID, "allow": allow}}
}

func TestConfirmation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	notFound := func(r reply, what string) {
		t.Helper()
		if r.Status != 404 || r.Body["error"].(map[string]any)["code"] != "NOT_FOUND" {
			t.Errorf("%s: %d %v, want 404", what, r.Status, r.Body)
		}
	}

	t.Run("allow runs it once; a reuse is 404", func(t *testing.T) {
		sid, cid := logTurn(t, f, "u1")
		if f.runs.log.Load() != 0 {
			t.Fatal("the tool ran before it was confirmed")
		}
		r := f.post(t, call{user: "u1", body: confirmBody(sid, cid, true)})
		resp := r.response(t)
		if f.runs.log.Load() != 1 || resp["message"] != "Done with log_item." || resp["session_id"] != sid {
			t.Fatalf("allow: runs %d, response %v", f.runs.log.Load(), resp)
		}
		notFound(f.post(t, call{user: "u1", body: confirmBody(sid, cid, true)}), "reused")
		if f.runs.log.Load() != 1 {
			t.Error("a reused confirmation ran the tool again")
		}
		if n := f.count(t, `SELECT count(*) FROM tool_calls WHERE call_id = $1 AND status = 'succeeded'`, cid); n != 1 {
			t.Errorf("%d tool_calls rows for the confirmed call", n)
		}
		// The session the pending call opened counts every message its two
		// turns stored (the first turn's row was written by the pending call).
		if n := f.count(t, `SELECT message_count - (SELECT count(*) FROM chat_messages WHERE session_id = $1)
			FROM chat_sessions WHERE id = $1`, sid); n != 0 {
			t.Errorf("message_count is off by %d from the stored messages", n)
		}
	})
	t.Run("deny tells the model", func(t *testing.T) {
		before := f.runs.log.Load()
		sid, cid := logTurn(t, f, "u2")
		r := f.post(t, call{user: "u2", body: confirmBody(sid, cid, false)})
		r.response(t)
		if f.runs.log.Load() != before {
			t.Error("a denied call ran")
		}
		_, hist := f.get(t, "u2", "/v1/chat/sessions/"+sid+"/messages")
		items := hist["items"].([]any)
		last := items[len(items)-1].(map[string]any)
		if tc := last["tool_calls"].([]any); tc[0].(map[string]any)["state"] != "denied" {
			t.Errorf("stored tool calls %v", tc)
		}
	})
	t.Run("expired", func(t *testing.T) {
		sid, cid := logTurn(t, f, "u3")
		if _, err := f.pool.Exec(context.Background(), `UPDATE chat_confirmations SET expires_at = now() - interval '1 second' WHERE call_id = $1`, cid); err != nil {
			t.Fatal(err)
		}
		notFound(f.post(t, call{user: "u3", body: confirmBody(sid, cid, true)}), "expired")
	})
	t.Run("foreign", func(t *testing.T) {
		sid, cid := logTurn(t, f, "u4")
		notFound(f.post(t, call{user: "u5", body: confirmBody(sid, cid, true)}), "another user's")
		notFound(f.post(t, call{user: "u5", body: map[string]any{"confirm": map[string]any{"call_id": cid, "allow": true}}}), "another user's, no session")
		notFound(f.post(t, call{user: "u4", body: confirmBody(sid, "turn_unknown.1", true)}), "unknown")
		// The owner still can.
		f.post(t, call{user: "u4", body: confirmBody(sid, cid, true)}).response(t)
	})
	t.Run("arguments are validated before a call is offered", func(t *testing.T) {
		r := f.post(t, call{user: "u6", body: map[string]any{"message": "log it wrongly"}})
		for _, e := range r.Events {
			if e.Type == "confirmation_required" {
				t.Fatal("an invalid call was offered for confirmation")
			}
		}
		var failed bool
		for _, e := range r.Events {
			failed = failed || (e.Type == "tool" && e.Data["state"] == "failed")
		}
		if !failed || r.response(t)["message"] != "Done with log_item." {
			t.Errorf("events %v", r.types())
		}
	})
}
