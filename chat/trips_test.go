package chat_test

import (
	"testing"

	"github.com/voxgate/voxgate/internal/database"
)

// A chat turn's round trips to PostgreSQL (issue 36), counted by the
// pool: the admission with its pending audit row riding it, the context
// tool's claim and result (tools' own record of every call), the turn's
// messages with its record (one batch), and its end (the final audit row
// and the settlement); a turn in an existing session reads its owner and
// history first, in one query. The pool has one connection, so after a
// warm-up every statement is prepared and nothing else shares the counts.
func TestAChatTurnRoundTrips(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{poolSize: 1})
	turn := func(body map[string]any) reply {
		t.Helper()
		r := f.post(t, call{user: "u-trips", body: body})
		if r.Status != 200 {
			t.Fatalf("turn: %d %v", r.Status, r.Body)
		}
		return r
	}
	hi := map[string]any{"message": "hi", "stream": false}
	for range 3 { // every statement of both kinds of turn prepared
		warm := turn(hi)
		turn(map[string]any{"message": "hi again", "stream": false, "session_id": warm.Body["session_id"]})
	}
	s0, r0 := database.Sent(f.pool)
	first := turn(hi)
	s1, r1 := database.Sent(f.pool)
	turn(map[string]any{"message": "hi again", "stream": false, "session_id": first.Body["session_id"]})
	s2, r2 := database.Sent(f.pool)
	if s, r := s1-s0, r1-r0; r != 5 || s != 9 {
		t.Errorf("a turn in a fresh session sent %v statements in %v round trips; want 9 in 5", s, r)
	}
	if s, r := s2-s1, r2-r1; r != 6 || s != 10 {
		t.Errorf("a turn in an existing session sent %v statements in %v round trips; want 10 in 6", s, r)
	}
	// The history still reaches the model: the continued turn's request
	// carries the first turn's answer.
	if n := f.count(t, `SELECT count(*) FROM chat_messages WHERE session_id = $1`, first.Body["session_id"]); n != 4 {
		t.Errorf("%d messages in the continued session, want 4", n)
	}
	if n := f.count(t, `SELECT message_count FROM chat_sessions WHERE id = $1`, first.Body["session_id"]); n != 4 {
		t.Errorf("message_count %d, want 4", n)
	}
}
