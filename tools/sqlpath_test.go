package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// sqlCounts counts what an SQL tool did: statements collected, statements
// whose rows the default collect read (one row each), and calls answered
// by Run instead.
type sqlCounts struct{ collected, read, ran atomic.Int64 }

// sqlTool answers with a nonce the database makes, so callers can prove
// they got one statement's answer. stmt gets the text argument as $1.
func sqlTool(name, stmt string, n *sqlCounts, collect func(pgx.Rows) (Outcome, error)) *Tool {
	t := echoTool(name)
	t.Timeout = 200 * time.Millisecond
	t.Run = func(_ context.Context, inv Invocation) (Outcome, error) {
		n.ran.Add(1)
		return Outcome{Data: map[string]string{"by": "run"}}, nil
	}
	if collect == nil {
		collect = func(rows pgx.Rows) (Outcome, error) {
			var nonce, text string
			for rows.Next() {
				if err := rows.Scan(&nonce, &text); err != nil {
					return Outcome{}, err
				}
				n.read.Add(1)
			}
			return Outcome{Data: map[string]string{"nonce": nonce, "text": text}}, rows.Err()
		}
	}
	t.SQL = &SQLBody{
		Build: func(inv Invocation) (string, []any, error) {
			var a struct{ Text string }
			if err := inv.Decode(&a); err != nil {
				return "", nil, err
			}
			return stmt, []any{a.Text}, nil
		},
		Collect: func(rows pgx.Rows, _ Invocation) (Outcome, error) {
			n.collected.Add(1)
			return collect(rows)
		},
	}
	return t
}

const nonceSQL = `SELECT md5(random()::text), $1::text`

// sqlReplicas is three executors on their own pools of conns connections,
// each with the tool sqlTool("fast", stmt, n, nil).
func sqlReplicas(t *testing.T, url, stmt string, n *sqlCounts, conns int32) []*Executor {
	t.Helper()
	var replicas []*Executor
	for range 3 {
		reg := mustRegistry(t, RegistryParams{Builtins: []*Tool{sqlTool("fast", stmt, n, nil)}})
		replicas = append(replicas, mustExecutor(t, pgtest.NewPool(t, url, conns), reg))
	}
	return replicas
}

func TestSQLBodyExactlyOnceAcrossReplicas(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	var n sqlCounts
	replicas := sqlReplicas(t, url, `SELECT md5(random()::text), $1::text FROM pg_sleep(0.1)`, &n, 5)
	const callers = 100
	results := make([]Result, callers)
	errs := make([]error, callers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			<-start
			results[i], errs[i] = replicas[i%3].Execute(context.Background(),
				chatCall("session-1", "call-1", "fast", `{"text":"once"}`))
		})
	}
	close(start)
	wg.Wait()

	fresh := 0
	for i := range callers {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if results[i].Output != results[0].Output || results[i].Error != nil {
			t.Fatalf("caller %d got %s (%v), caller 0 got %s", i, results[i].Output, results[i].Error, results[0].Output)
		}
		if !results[i].Replayed {
			fresh++
		}
	}
	// Duplicates' statements run in their pipelines too, but only the
	// owner's rows are collected.
	if got := n.collected.Load(); got != 1 || n.ran.Load() != 0 {
		t.Fatalf("collected %d times and ran %d times, want 1 and 0", got, n.ran.Load())
	}
	if fresh != 1 {
		t.Fatalf("%d callers got a fresh result, want 1", fresh)
	}
	pool := pgtest.NewPool(t, url, 1)
	if s := callRowState(t, pool, "session-1", "call-1"); s.Count != 1 || s.Status != "succeeded" {
		t.Fatalf("row: %+v", s)
	}
}

func TestSQLBodyReplayConflictAndOtherUser(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	var n sqlCounts
	e := mustExecutor(t, pool, mustRegistry(t, RegistryParams{Builtins: []*Tool{sqlTool("fast", nonceSQL, &n, nil)}}))
	ctx := context.Background()
	first, err := e.Execute(ctx, chatCall("s", "c1", "fast", `{"text":"a"}`))
	if err != nil || first.Replayed || first.Error != nil {
		t.Fatalf("first: %+v %v", first, err)
	}
	again, err := e.Execute(ctx, chatCall("s", "c1", "fast", `{ "text" : "a" }`))
	if err != nil || !again.Replayed || again.Output != first.Output {
		t.Fatalf("replay: %+v %v, want %s", again, err, first.Output)
	}
	_, err = e.Execute(ctx, chatCall("s", "c1", "fast", `{"text":"b"}`))
	wantCode(t, err, apierr.Conflict)
	other := chatCall("s", "c1", "fast", `{"text":"a"}`)
	other.Principal = auth.Principal{UserID: "u2"}
	_, err = e.Execute(ctx, other)
	wantCode(t, err, apierr.NotFound)
	if n.collected.Load() != 1 || n.ran.Load() != 0 {
		t.Fatalf("collected %d, ran %d; want 1 and 0", n.collected.Load(), n.ran.Load())
	}
	// A running row left by the general path (a replica that died) is
	// still interrupted, never run, when the fast path meets it.
	if _, err := pool.Exec(ctx, `INSERT INTO tool_calls (session_id, call_id, user_id, session_kind, source, tool, arguments, deadline)
		VALUES ('s', 'stale', 'u1', 'chat', 'chat', 'fast', '{"text":"a"}', now() - interval '1 second')`); err != nil {
		t.Fatal(err)
	}
	r, err := e.Execute(ctx, chatCall("s", "stale", "fast", `{"text":"a"}`))
	if err != nil || r.Error == nil || r.Error.Code != ErrCodeInterrupted || n.collected.Load() != 1 {
		t.Fatalf("stale row: %+v %v (collected %d)", r, err, n.collected.Load())
	}
}

func TestSQLBodyFallsBackToRun(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	cases := []struct {
		name, stmt string
		collect    func(pgx.Rows) (Outcome, error)
	}{
		{"statement cannot be prepared", `SELECT md5(random()::text), $1::text FROM no_such_table`, nil},
		{"statement fails while running", `SELECT md5(random()::text), $1::text WHERE 1 / (length($1) - length($1)) = 1`, nil},
		{"collect asks for run", nonceSQL, func(pgx.Rows) (Outcome, error) { return Outcome{}, ErrUseRun }},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var n sqlCounts
			name := fmt.Sprintf("fast%d", i)
			e := mustExecutor(t, pool, mustRegistry(t, RegistryParams{Builtins: []*Tool{sqlTool(name, c.stmt, &n, c.collect)}}))
			r, err := e.Execute(ctx, chatCall("s", name, name, `{"text":"a"}`))
			if err != nil || r.Error != nil || string(r.Result) != `{"by":"run"}` || n.ran.Load() != 1 {
				t.Fatalf("got %+v %v (ran %d)", r, err, n.ran.Load())
			}
			// Whatever the fast path did was rolled back: one row, Run's.
			if s := callRowState(t, pool, "s", name); s.Count != 1 || s.Status != "succeeded" {
				t.Fatalf("row: %+v", s)
			}
			again, err := e.Execute(ctx, chatCall("s", name, name, `{"text":"a"}`))
			if err != nil || !again.Replayed || string(again.Result) != `{"by":"run"}` || n.ran.Load() != 1 {
				t.Fatalf("replay: %+v %v", again, err)
			}
		})
	}
}

func TestSQLBodyFailuresAreRecorded(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	cases := []struct {
		name    string
		stmt    string
		collect func(pgx.Rows) (Outcome, error)
		code    string
	}{
		{"tool error", nonceSQL, func(pgx.Rows) (Outcome, error) { return Outcome{}, Failf("not_found", "No such thing.") }, "not_found"},
		{"panic", nonceSQL, func(pgx.Rows) (Outcome, error) { panic("boom") }, ErrCodePanic},
		{"other error", nonceSQL, func(pgx.Rows) (Outcome, error) { return Outcome{}, errors.New("secret detail") }, ErrCodeFailed},
		{"timeout", `SELECT md5(random()::text), $1::text FROM pg_sleep(5)`, nil, ErrCodeTimeout},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var n sqlCounts
			name := fmt.Sprintf("fast%d", i)
			e := mustExecutor(t, pool, mustRegistry(t, RegistryParams{Builtins: []*Tool{sqlTool(name, c.stmt, &n, c.collect)}}))
			r, err := e.Execute(ctx, chatCall("s", name, name, `{"text":"a"}`))
			if err != nil || r.Error == nil || r.Error.Code != c.code {
				t.Fatalf("got %+v %v, want a %s failure", r, err, c.code)
			}
			if s := callRowState(t, pool, "s", name); s.Count != 1 || s.Status != "failed" || s.ErrorCode == nil || *s.ErrorCode != c.code {
				t.Fatalf("row: %+v", s)
			}
			again, err := e.Execute(ctx, chatCall("s", name, name, `{"text":"a"}`))
			if err != nil || !again.Replayed || again.Output != r.Output || n.ran.Load() != 0 {
				t.Fatalf("replay: %+v %v (ran %d)", again, err, n.ran.Load())
			}
		})
	}
}

// TestSQLBodyStalledOwnerReleasesDuplicates: an owner that stalls between
// its two round trips holds the call's row lock only until the server ends
// its idle transaction (the tool's timeout + 1 s). Its work is rolled back
// unstored, the waiting duplicate then runs the call, and the owner, when
// it wakes, answers with the duplicate's stored result: every caller gets
// the one stored answer.
func TestSQLBodyStalledOwnerReleasesDuplicates(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	var n sqlCounts
	var stalls atomic.Int64
	collect := func(rows pgx.Rows) (Outcome, error) {
		var nonce, text string
		for rows.Next() {
			if err := rows.Scan(&nonce, &text); err != nil {
				return Outcome{}, err
			}
		}
		if stalls.Add(1) == 1 {
			time.Sleep(2500 * time.Millisecond) // past the 1.2 s idle bound
		}
		return Outcome{Data: map[string]string{"nonce": nonce}}, rows.Err()
	}
	mk := func() *Executor {
		reg := mustRegistry(t, RegistryParams{Builtins: []*Tool{sqlTool("fast", nonceSQL, &n, collect)}})
		return mustExecutor(t, pgtest.NewPool(t, url, 2), reg)
	}
	owner, dup := mk(), mk()
	var ownerRes Result
	var ownerErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		ownerRes, ownerErr = owner.Execute(context.Background(), chatCall("s", "c", "fast", `{"text":"a"}`))
	}()
	time.Sleep(600 * time.Millisecond)
	dupRes, err := dup.Execute(context.Background(), chatCall("s", "c", "fast", `{"text":"a"}`))
	if err != nil || dupRes.Error != nil || dupRes.Replayed {
		t.Fatalf("duplicate: %+v %v, want it to run the call after the owner's lock was released", dupRes, err)
	}
	<-done
	if ownerErr != nil || ownerRes.Output != dupRes.Output || !ownerRes.Replayed {
		t.Fatalf("owner: %+v %v, want a replay of %s", ownerRes, ownerErr, dupRes.Output)
	}
	if s := callRowState(t, pgtest.NewPool(t, url, 1), "s", "c"); s.Count != 1 || s.Status != "succeeded" {
		t.Fatalf("row: %+v", s)
	}
	var stored map[string]any
	if err := json.Unmarshal([]byte(dupRes.Output), &stored); err != nil || stored["nonce"] == "" {
		t.Fatalf("output %s", dupRes.Output)
	}
}
