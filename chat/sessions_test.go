package chat_test

import (
	"context"
	"fmt"
	"testing"
)

func sessionOf(r reply) string { return r.Events[0].Data["session_id"].(string) }

// A session idle for 8 hours is over: the next turn naming it starts a
// new one. A live one goes on, and the model sees its history.
func TestSessionIdleExpiry(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	sid := sessionOf(f.post(t, call{user: "u1", body: map[string]any{"message": "hi"}}))
	if got := sessionOf(f.post(t, call{user: "u1", body: map[string]any{"message": "hi again", "session_id": sid}})); got != sid {
		t.Fatalf("a live session was replaced: %s → %s", sid, got)
	}
	if _, err := f.pool.Exec(context.Background(), `UPDATE chat_sessions SET last_active_at = now() - interval '8 hours 1 minute' WHERE id = $1`, sid); err != nil {
		t.Fatal(err)
	}
	got := sessionOf(f.post(t, call{user: "u1", body: map[string]any{"message": "back", "session_id": sid}}))
	if got == sid {
		t.Fatal("an idle session went on")
	}
	if n := f.count(t, `SELECT count(*) FROM chat_messages WHERE session_id = $1`, got); n != 2 {
		t.Errorf("new session has %d messages", n)
	}
}

// A session keeps its newest 100 messages.
func TestSessionMessageCap(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	sid := sessionOf(f.post(t, call{user: "u1", body: map[string]any{"message": "hi"}}))
	if _, err := f.pool.Exec(context.Background(), `INSERT INTO chat_messages (id, session_id, user_id, turn_id, role, content)
		SELECT 'old' || g, $1, 'u1', 'turn_old' || g, 'user', 'old ' || g FROM generate_series(1, 98) g`, sid); err != nil {
		t.Fatal(err)
	}
	if _, err := f.pool.Exec(context.Background(), `UPDATE chat_sessions SET message_count = 100 WHERE id = $1`, sid); err != nil {
		t.Fatal(err)
	}
	f.post(t, call{user: "u1", body: map[string]any{"message": "one more", "session_id": sid}}).response(t)
	if n := f.count(t, `SELECT count(*) FROM chat_messages WHERE session_id = $1`, sid); n != 100 {
		t.Errorf("%d messages kept, want 100", n)
	}
	if n := f.count(t, `SELECT message_count FROM chat_sessions WHERE id = $1`, sid); n != 100 {
		t.Errorf("message_count %d, want 100", n)
	}
	// The two oldest went: the first turn's two messages.
	if n := f.count(t, `SELECT count(*) FROM chat_messages WHERE session_id = $1 AND content = 'hi'`, sid); n != 0 {
		t.Error("the oldest message was kept")
	}
}

// Sessions list newest first in pages; a deleted session's messages go
// and its usage records stay.
func TestSessionListAndDelete(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	var ids []string
	for i := range 3 {
		ids = append(ids, sessionOf(f.post(t, call{user: "u1", body: map[string]any{"message": fmt.Sprint("hi ", i)}})))
	}
	st, page1 := f.get(t, "u1", "/v1/chat/sessions?limit=2")
	items := page1["items"].([]any)
	if st != 200 || len(items) != 2 || items[0].(map[string]any)["id"] != ids[2] || items[1].(map[string]any)["id"] != ids[1] {
		t.Fatalf("page 1: %d %v", st, page1)
	}
	_, page2 := f.get(t, "u1", "/v1/chat/sessions?limit=2&cursor="+page1["next_cursor"].(string))
	if items := page2["items"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != ids[0] || page2["next_cursor"] != nil {
		t.Fatalf("page 2: %v", page2)
	}
	if st, _ := f.send(t, "DELETE", "u1", "/v1/chat/sessions/"+ids[0]); st != 204 {
		t.Fatalf("delete: %d", st)
	}
	if st, _ := f.get(t, "u1", "/v1/chat/sessions/"+ids[0]+"/messages"); st != 404 {
		t.Errorf("history after delete: %d", st)
	}
	if n := f.count(t, `SELECT count(*) FROM chat_messages WHERE session_id = $1`, ids[0]); n != 0 {
		t.Errorf("%d messages left", n)
	}
	if n := f.count(t, `SELECT count(*) FROM usage_records WHERE session_id = $1`, ids[0]); n != 1 {
		t.Errorf("%d usage records after delete, want 1", n)
	}
}

// The purge deletes sessions idle past retention, and old confirmations
// and idempotency keys.
func TestPurge(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	old := sessionOf(f.post(t, call{user: "u1", body: map[string]any{"message": "hi"}}))
	fresh := sessionOf(f.post(t, call{user: "u2", key: "k", body: map[string]any{"message": "hi"}}))
	ctx := context.Background()
	for _, q := range []string{
		`UPDATE chat_sessions SET last_active_at = now() - interval '91 days' WHERE id = '` + old + `'`,
		`UPDATE chat_idempotency SET created_at = now() - interval '25 hours'`,
		// A pending audit row of a unit the log has finished (a replica of
		// release 0088 finished it, docs/audit.md "Rollout"): stale.
		`INSERT INTO ai_audit_pending (turn_id, kind, user_id, session_id, route)
			SELECT turn_id, kind, user_id, session_id, route FROM ai_audit_log WHERE user_id = 'u1'`,
	} {
		if _, err := f.pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	p, err := f.svc.Purge(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.Sessions != 1 || p.IdempotencyKeys != 1 || p.StaleAuditPending != 1 {
		t.Errorf("purged %+v, want a session, a key and a stale pending audit row", p)
	}
	if n := f.count(t, `SELECT count(*) FROM ai_audit_pending`); n != 0 {
		t.Errorf("%d pending audit rows left", n)
	}
	if n := f.count(t, `SELECT count(*) FROM chat_sessions WHERE id IN ($1, $2)`, old, fresh); n != 1 {
		t.Errorf("%d sessions left, want the fresh one", n)
	}
	if n := f.count(t, `SELECT count(*) FROM usage_records WHERE session_id = $1`, old); n != 1 {
		t.Errorf("the purged session's usage record is gone")
	}
}
