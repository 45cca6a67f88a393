package tools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/internal/testkit"
)

// countingTool counts how often its body runs and answers with a nonce, so
// callers can prove they got that one run's answer.
func countingTool(runs *atomic.Int64, d time.Duration) *Tool {
	t := echoTool("counted")
	t.Run = func(ctx context.Context, _ Invocation) (Outcome, error) {
		runs.Add(1)
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return Outcome{}, ctx.Err()
		}
		return Outcome{Data: map[string]string{"nonce": hex.EncodeToString(b)}}, nil
	}
	return t
}

// TestExactlyOnceAcrossReplicas runs 100 concurrent copies of one call
// through three executors, each with its own pool: three replicas sharing
// one database.
func TestExactlyOnceAcrossReplicas(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	var runs atomic.Int64
	var replicas []*Executor
	for range 3 {
		reg := mustRegistry(t, RegistryParams{Builtins: []*Tool{countingTool(&runs, 200*time.Millisecond)}})
		replicas = append(replicas, mustExecutor(t, pgtest.NewPool(t, url, 5), reg))
	}

	const n = 100
	results := make([]Result, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i], errs[i] = replicas[i%3].Execute(context.Background(),
				chatCall("session-1", "call-1", "counted", `{"text":"once"}`))
		}()
	}
	close(start)
	wg.Wait()

	if got := runs.Load(); got != 1 {
		t.Fatalf("tool body ran %d times, want exactly 1", got)
	}
	fresh := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if results[i].Output != results[0].Output || string(results[i].Result) != string(results[0].Result) {
			t.Fatalf("caller %d got %s, caller 0 got %s", i, results[i].Output, results[0].Output)
		}
		if results[i].Error != nil {
			t.Fatalf("caller %d: tool error %+v", i, results[i].Error)
		}
		if !results[i].Replayed {
			fresh++
		}
	}
	if fresh != 1 {
		t.Fatalf("%d callers got a fresh result, want 1 (the rest replayed)", fresh)
	}
	pool := pgtest.NewPool(t, url, 1)
	if s := callRowState(t, pool, "session-1", "call-1"); s.Count != 1 || s.Status != "succeeded" {
		t.Fatalf("row: got %+v, want one succeeded row", s)
	}

	_, err := replicas[1].Execute(context.Background(), chatCall("session-1", "call-1", "counted", `{"text":"twice"}`))
	wantCode(t, err, apierr.Conflict)
}

// insertRunning leaves a running row as a replica that crashed mid-call
// would, with its deadline at now()+deadline.
func insertRunning(t *testing.T, e *Executor, session, callID, tool, args string, deadline time.Duration) {
	t.Helper()
	_, err := e.store.db.Exec(context.Background(), `INSERT INTO tool_calls
		(session_id, call_id, user_id, session_kind, source, tool, arguments, deadline, started_at)
		VALUES ($1, $2, 'u1', 'chat', 'chat', $3, $4::jsonb, now() + make_interval(secs => $5), now() - interval '1 second')`,
		session, callID, tool, args, deadline.Seconds())
	if err != nil {
		t.Fatal(err)
	}
}

func TestStaleRunningRowIsInterruptedNotRerun(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	var runs atomic.Int64
	e := mustExecutor(t, pool, mustRegistry(t, RegistryParams{Builtins: []*Tool{countingTool(&runs, 0)}}))
	insertRunning(t, e, "s", "dead", "counted", `{"text":"x"}`, -time.Second)

	r, err := e.Execute(context.Background(), chatCall("s", "dead", "counted", `{"text":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Error == nil || r.Error.Code != ErrCodeInterrupted || !r.Replayed {
		t.Fatalf("got %+v, want a replayed interrupted failure", r)
	}
	if runs.Load() != 0 {
		t.Fatalf("tool ran %d times, want 0", runs.Load())
	}
	if s := callRowState(t, pool, "s", "dead"); s.Status != "failed" || s.ErrorCode == nil || *s.ErrorCode != "interrupted" {
		t.Fatalf("row: got %+v, want failed: interrupted", s)
	}
	again, err := e.Execute(context.Background(), chatCall("s", "dead", "counted", `{"text":"x"}`))
	if err != nil || again.Output != r.Output || runs.Load() != 0 {
		t.Fatalf("second duplicate: got %+v, %v; runs %d", again, err, runs.Load())
	}
}

// TestDuplicateWaitIsBounded: a duplicate of a call whose owner went silent
// waits until the row's deadline (the tool's timeout + 1 s) and no longer.
func TestDuplicateWaitIsBounded(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	var runs atomic.Int64
	tool := countingTool(&runs, 0)
	tool.Timeout = 300 * time.Millisecond
	e := mustExecutor(t, pool, mustRegistry(t, RegistryParams{Builtins: []*Tool{tool}}))
	insertRunning(t, e, "s", "silent", "counted", `{"text":"x"}`, tool.Timeout+time.Second)

	start := time.Now()
	r, err := e.Execute(context.Background(), chatCall("s", "silent", "counted", `{"text":"x"}`))
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	// The slack is for the statements after the deadline on a loaded
	// machine; a wait that outlived the deadline by a whole period (a
	// second timeout + 1 s) would still fail.
	if limit := tool.Timeout + time.Second + time.Second; took > limit {
		t.Fatalf("waited %s, want at most %s", took, limit)
	}
	if took < tool.Timeout {
		t.Fatalf("waited only %s: the owner was not given its time", took)
	}
	if r.Error == nil || r.Error.Code != ErrCodeInterrupted || runs.Load() != 0 {
		t.Fatalf("got %+v (runs %d), want interrupted without a run", r, runs.Load())
	}
}

// TestLateOwnerKeepsInterruptedAnswer: an owner that finishes after its row
// was declared interrupted returns the stored answer, so every caller
// agrees.
func TestLateOwnerKeepsInterruptedAnswer(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	var runs atomic.Int64
	tool := countingTool(&runs, 300*time.Millisecond)
	tool.Timeout = time.Second
	e := mustExecutor(t, pool, mustRegistry(t, RegistryParams{Builtins: []*Tool{tool}}))
	// A replica stalled past its deadline: the row is stale while the body
	// still runs.
	e.graceful = -tool.Timeout - time.Second

	owner := make(chan Result, 1)
	go func() {
		r, err := e.Execute(context.Background(), chatCall("s", "late", "counted", `{"text":"x"}`))
		if err != nil {
			t.Error(err)
		}
		owner <- r
	}()
	testkit.Eventually(t, context.Background(), "the owner to claim the row and run", func() bool { return runs.Load() > 0 })
	dup, err := e.Execute(context.Background(), chatCall("s", "late", "counted", `{"text":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if dup.Error == nil || dup.Error.Code != ErrCodeInterrupted {
		t.Fatalf("duplicate: got %+v, want interrupted", dup)
	}
	first := <-owner
	if first.Output != dup.Output {
		t.Fatalf("owner got %s, duplicate got %s: callers disagree", first.Output, dup.Output)
	}
	if runs.Load() != 1 {
		t.Fatalf("runs: got %d, want 1", runs.Load())
	}
}

// TestDuplicatesHoldNoConnectionWhileWaiting: duplicates of a slow call
// poll its row without holding a pool connection, so on a pool of two,
// ten of them waiting do not starve other queries or other calls.
func TestDuplicatesHoldNoConnectionWhileWaiting(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, pgtest.URL(t), 2)
	var runs atomic.Int64
	e := mustExecutor(t, pool, mustRegistry(t, RegistryParams{Builtins: []*Tool{countingTool(&runs, 1500*time.Millisecond), echoTool("echo")}}))
	call := chatCall("s", "slow", "counted", `{"text":"x"}`)

	const n = 10
	results := make([]Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = e.Execute(context.Background(), call)
		}()
	}
	testkit.Eventually(t, context.Background(), "the owner to run (the others wait on its row)", func() bool { return runs.Load() > 0 })
	ctx := context.Background()
	for i := range 5 {
		// The probe is bounded well under the slow call's 1.5 s, so a pool
		// the duplicates held would fail it rather than free up in time;
		// the call after it is an ordinary one, given testkit.Wait.
		qctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		var one int
		err := pool.QueryRow(qctx, `SELECT 1`).Scan(&one)
		cancel()
		if err != nil {
			t.Fatalf("query %d while duplicates wait: %v (pool %d of %d acquired)", i, err,
				pool.Stat().AcquiredConns(), pool.Stat().MaxConns())
		}
		ectx, cancel := context.WithTimeout(ctx, testkit.Wait)
		r, err := e.Execute(ectx, chatCall("s", fmt.Sprint("other", i), "echo", `{"text":"y"}`))
		cancel()
		if err != nil || r.Error != nil {
			t.Fatalf("another call while duplicates wait: %+v, %v", r, err)
		}
		if runs.Load() != 1 {
			t.Fatalf("the slow call had run %d times while others waited, want 1", runs.Load())
		}
		// measurement window: the five probes are spread over the slow
		// call's 1.5 s run, so a pool held by the waiting duplicates would
		// starve one of them; the time between probes is what is tested.
		time.Sleep(100 * time.Millisecond)
	}
	wg.Wait()
	fresh := 0
	for i := range n {
		if errs[i] != nil || results[i].Output != results[0].Output {
			t.Fatalf("caller %d: %+v, %v", i, results[i], errs[i])
		}
		if !results[i].Replayed {
			fresh++
		}
	}
	if runs.Load() != 1 || fresh != 1 {
		t.Fatalf("runs %d, fresh answers %d; want 1 and 1", runs.Load(), fresh)
	}
}
