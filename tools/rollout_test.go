package tools

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/internal/testkit"
)

// oldBatch is the previous release's SQL fast path for one call, as it
// runs during a rollout: in one transaction, tool_call_begin (migration
// 0024: the call's lock, and SQLSTATE VXD01 if the call has a row), then
// the finished row.
type oldBatch struct{ tx pgx.Tx }

func beginOldBatch(t *testing.T, ctx context.Context, e *Executor, c Call) (oldBatch, error) {
	t.Helper()
	tx, err := e.store.db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.Exec(ctx, `SELECT tool_call_begin($1::text[], $2::text[], '5000')`, []string{c.SessionID}, []string{c.CallID})
	if err != nil {
		_ = tx.Rollback(ctx)
	}
	return oldBatch{tx}, err
}

// insert adds the finished row, not yet committed.
func (b oldBatch) insert(ctx context.Context, c Call, res Result) error {
	resp, _ := json.Marshal(res)
	_, err := b.tx.Exec(ctx, `INSERT INTO tool_calls (session_id, call_id, user_id, session_kind, source, tool, arguments,
		status, response, deadline, finished_at, duration_ms)
		VALUES ($1, $2, $3, 'chat', 'chat', $4, $5::jsonb, 'succeeded', $6::json, now() + interval '5 seconds', clock_timestamp(), 1)`,
		c.SessionID, c.CallID, c.Principal.UserID, c.Name, string(c.Arguments), resp)
	if err != nil {
		_ = b.tx.Rollback(ctx)
	}
	return err
}

// TestRolloutBesidePreviousRelease: this release's claim takes no lock,
// and a call still runs once while a replica of the previous release, on
// its SQL fast path, works on the same call (docs/tools.md, "Rollout from
// the SQL fast path").
func TestRolloutBesidePreviousRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var runs atomic.Int64
	e := mustExecutor(t, pgtest.Pool(t), mustRegistry(t, RegistryParams{Builtins: []*Tool{countingTool(&runs, 0)}}))

	t.Run("new claim first", func(t *testing.T) {
		c := chatCall("s", "new-first", "counted", `{"text":"x"}`)
		old, err := beginOldBatch(t, ctx, e, c)
		if err != nil {
			t.Fatal(err)
		}
		// The new replica does not wait for the old one's lock: it claims,
		// runs and stores while the old batch is open.
		start := time.Now()
		r, err := e.Execute(ctx, c)
		if err != nil || r.Replayed || runs.Load() != 1 || time.Since(start) > 2*time.Second {
			t.Fatalf("new replica: %+v, %v, runs %d", r, err, runs.Load())
		}
		// The old batch's insert then fails on the unique key, and its
		// retry is refused as a duplicate, which replays the new answer.
		if err := old.insert(ctx, c, Result{Name: "counted", Output: `"old"`}); database.SQLState(err) != "23505" {
			t.Fatalf("old batch's insert: got %v, want a unique violation", err)
		}
		if _, err := beginOldBatch(t, ctx, e, c); database.SQLState(err) != "VXD01" {
			t.Fatalf("old batch's retry: got %v, want VXD01 (a duplicate)", err)
		}
		if s := callRowState(t, e.store.db, c.SessionID, c.CallID); s.Count != 1 || s.Status != "succeeded" {
			t.Fatalf("row: %+v", s)
		}
	})

	t.Run("old batch first", func(t *testing.T) {
		runs.Store(0)
		c := chatCall("s", "old-first", "counted", `{"text":"x"}`)
		old, err := beginOldBatch(t, ctx, e, c)
		if err != nil {
			t.Fatal(err)
		}
		stored := Result{CallID: c.CallID, Name: "counted", Output: `{"by":"old"}`, Result: json.RawMessage(`{"by":"old"}`)}
		if err := old.insert(ctx, c, stored); err != nil {
			t.Fatal(err)
		}
		// The new claim meets the uncommitted row and waits for its
		// transaction, then replays what it stored.
		type answer struct {
			r   Result
			err error
		}
		executed := make(chan answer, 1)
		go func() {
			r, err := e.Execute(ctx, c)
			executed <- answer{r, err}
		}()
		// The claim waits on the row's lock (bounded, so a claim that
		// never waits fails here rather than hanging). Asked on the old
		// batch's own connection: the pool may have no other.
		testkit.Eventually(t, ctx, "the new claim waiting on the old batch's row lock", func() bool {
			var waiting int
			if err := old.tx.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE NOT granted AND pg_backend_pid() = ANY(pg_blocking_pids(pid))`).Scan(&waiting); err != nil {
				t.Fatalf("old batch: %v", err)
			}
			return waiting > 0
		})
		if err := old.tx.Commit(ctx); err != nil {
			t.Fatalf("old batch: %v", err)
		}
		a := <-executed
		if r, err := a.r, a.err; err != nil || !r.Replayed || r.Output != stored.Output || runs.Load() != 0 {
			t.Fatalf("new replica: got %+v, %v (runs %d), want the old batch's answer replayed", r, err, runs.Load())
		}
	})
}
