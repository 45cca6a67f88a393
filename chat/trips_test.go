package chat_test

import (
	"context"
	"testing"

	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// A chat turn's round trips to PostgreSQL (issue 36), counted by the
// pool: the admission with its pending audit row riding it, the context
// tool's claim and result (tools' own record of every call), and the
// turn's end: its messages, its record, its final audit row and the
// settlement, one batch; a turn in an existing session reads its owner
// and history first, in one query. Without a context tool (or while
// voice.context_cache_ttl holds the profile) a turn in a fresh session is
// the admission and the end alone. The pool has one connection, so after
// a warm-up every statement is prepared and nothing else shares the
// counts.
func TestAChatTurnRoundTrips(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		noContextTool bool
		// fresh and existing: statements and round trips of a turn in a
		// new session and in an existing one.
		fresh, existing [2]int64
	}{
		{name: "context tool", fresh: [2]int64{9, 4}, existing: [2]int64{10, 5}},
		{name: "no context tool", noContextTool: true, fresh: [2]int64{7, 2}, existing: [2]int64{8, 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, options{poolSize: 1, noContextTool: tc.noContextTool})
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
			if s, r := s1-s0, r1-r0; s != tc.fresh[0] || r != tc.fresh[1] {
				t.Errorf("a turn in a fresh session sent %v statements in %v round trips; want %v in %v", s, r, tc.fresh[0], tc.fresh[1])
			}
			if s, r := s2-s1, r2-r1; s != tc.existing[0] || r != tc.existing[1] {
				t.Errorf("a turn in an existing session sent %v statements in %v round trips; want %v in %v", s, r, tc.existing[0], tc.existing[1])
			}
			// The history still reaches the model: the continued turn's
			// request carries the first turn's answer.
			if n := f.count(t, `SELECT count(*) FROM chat_messages WHERE session_id = $1`, first.Body["session_id"]); n != 4 {
				t.Errorf("%d messages in the continued session, want 4", n)
			}
			if n := f.count(t, `SELECT message_count FROM chat_sessions WHERE id = $1`, first.Body["session_id"]); n != 4 {
				t.Errorf("message_count %d, want 4", n)
			}
			if n := f.count(t, `SELECT count(*) FROM usage_records WHERE user_id = 'u-trips' AND kind = 'chat'`); n != 8 {
				t.Errorf("%d chat records for 8 turns, want 8", n)
			}
		})
	}
}

// A turn's end PostgreSQL refuses as one transaction for a reason a retry
// cannot cure (here its final audit row breaks a constraint the test
// adds) is undone whole, then written step by step: the answer is
// delivered, its messages, its record and its settlement are kept, and
// only the audit row stays pending.
func TestARefusedAuditRowCostsATurnNothingElse(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{dbURL: pgtest.URL(t)})
	ctx := context.Background()
	if _, err := f.pool.Exec(ctx, `ALTER TABLE ai_audit_log ADD CONSTRAINT test_refuse_final
		CHECK (status = 'pending' OR user_id <> 'u-refused')`); err != nil {
		t.Fatal(err)
	}
	r := f.post(t, call{user: "u-refused", body: map[string]any{"message": "hello", "stream": false}})
	if r.Status != 200 {
		t.Fatalf("turn: %d %v; want 200", r.Status, r.Body)
	}
	sid := r.Body["session_id"]
	if n := f.count(t, `SELECT count(*) FROM chat_messages WHERE session_id = $1`, sid); n != 2 {
		t.Errorf("%d messages; want 2", n)
	}
	if n := f.count(t, `SELECT message_count FROM chat_sessions WHERE id = $1 AND user_id = 'u-refused'`, sid); n != 2 {
		t.Errorf("message_count %d; want 2", n)
	}
	if n := f.count(t, `SELECT count(*) FROM usage_records WHERE user_id = 'u-refused' AND kind = 'chat'`); n != 1 {
		t.Errorf("%d chat records; want 1", n)
	}
	if n := f.count(t, `SELECT count(*) FROM quota_tickets WHERE user_id = 'u-refused'`); n != 0 {
		t.Errorf("%d tickets after the end; want 0", n)
	}
	if n := f.count(t, `SELECT day_tokens FROM quota_users WHERE user_id = 'u-refused'`); n == 0 {
		t.Error("no tokens settled; want the turn's")
	}
	if n := f.count(t, `SELECT count(*) FROM ai_audit_pending WHERE user_id = 'u-refused'`); n != 1 {
		t.Errorf("%d pending audit rows; want the turn's left pending", n)
	}
}
