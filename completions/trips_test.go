package completions_test

import (
	"context"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// A completion reaches PostgreSQL twice (issue #36): its admission (the
// ticket and the reservation) with its pending audit row riding it, and
// its end, where the record, the final audit row and the settlement
// travel as one batch. The pool has one connection, so after a warm-up
// every statement is prepared and nothing else shares the counts.
func TestACompletionReachesPostgreSQLTwice(t *testing.T) {
	t.Parallel()
	c := newComplFixture(t, func(o *options) { o.poolSize = 1 })
	ask1 := func() {
		t.Helper()
		if _, err := c.client("u-trips", "").Chat.Completions.New(context.Background(),
			openai.ChatCompletionNewParams{Model: "chat", Messages: ask("hello")}); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		ask1()
	}
	s0, r0 := database.Sent(c.pool)
	ask1()
	s1, r1 := database.Sent(c.pool)
	if s, r := s1-s0, r1-r0; r != 2 || s != 5 {
		t.Fatalf("a completion sent %v statements in %v round trips; want 5 in 2", s, r)
	}
	if n := len(c.records(t, "u-trips")); n != 4 {
		t.Fatalf("%d records; want 4", n)
	}
}

// An end PostgreSQL refuses as one transaction for a reason a retry
// cannot cure (here its final audit row breaks a constraint the test
// adds) is undone whole, then written step by step: the record and the
// settlement are kept, and only the audit row stays pending.
func TestARefusedAuditRowCostsNeitherTheRecordNorTheSettlement(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.URL(t)
	c := newComplFixture(t, func(o *options) { o.dbURL = dbURL })
	ctx := context.Background()
	if _, err := c.pool.Exec(ctx, `ALTER TABLE ai_audit_log ADD CONSTRAINT test_refuse_final
		CHECK (status = 'pending' OR user_id <> 'u-refused')`); err != nil {
		t.Fatal(err)
	}
	if _, err := c.client("u-refused", "").Chat.Completions.New(ctx,
		openai.ChatCompletionNewParams{Model: "chat", Messages: ask("hello")}); err != nil {
		t.Fatalf("the completion: %v", err)
	}
	if n := len(c.records(t, "u-refused")); n != 1 {
		t.Fatalf("%d records; want 1", n)
	}
	var tickets, tokens int64
	var status string
	if err := c.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM quota_tickets WHERE user_id = $1),
		(SELECT day_tokens FROM quota_users WHERE user_id = $1),
		(SELECT status FROM ai_audit_log WHERE user_id = $1 UNION ALL SELECT 'pending' FROM ai_audit_pending WHERE user_id = $1)`, "u-refused").Scan(&tickets, &tokens, &status); err != nil {
		t.Fatal(err)
	}
	if tickets != 0 || tokens == 0 {
		t.Fatalf("after the end: %d tickets, %d tokens settled; want 0 and the answer's", tickets, tokens)
	}
	if status != "pending" {
		t.Fatalf("audit row %s; want it left pending", status)
	}
}
