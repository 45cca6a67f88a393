package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	dto "github.com/prometheus/client_model/go"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// slowSQL sleeps for arguments starting "slow", and fails with a division
// by zero for "boom".
const slowSQL = `SELECT md5(random()::text), (CASE WHEN $1 = 'boom' THEN 1 / 0 ELSE 1 END)::text || $1
FROM pg_sleep(CASE WHEN $1 LIKE 'slow%' THEN 0.4 ELSE 0 END)`

// slowExecutor is an executor with the tool "fast": slowSQL, and a
// timeout that its slow calls stay well within.
func slowExecutor(t *testing.T, pool *pgxpool.Pool, n *sqlCounts) *Executor {
	t.Helper()
	tool := sqlTool("fast", slowSQL, n, nil)
	tool.Timeout = 3 * time.Second
	return mustExecutor(t, pool, mustRegistry(t, RegistryParams{Builtins: []*Tool{tool}}))
}

// batchStats is what the executor's batch histogram saw for tool: the
// number of transactions and the calls in them.
func batchStats(t *testing.T, e *Executor, tool string) (batches uint64, calls float64) {
	t.Helper()
	var m dto.Metric
	if err := e.metrics.batches.WithLabelValues(tool).(interface{ Write(*dto.Metric) error }).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
}

func nonceOf(t *testing.T, r Result) string {
	t.Helper()
	var out map[string]string
	if err := json.Unmarshal(r.Result, &out); err != nil || out["nonce"] == "" {
		t.Fatalf("result %s: %v", r.Result, err)
	}
	return out["nonce"]
}

// TestSQLBatchAcrossReplicas: 100 calls, each sent at once to three
// replicas, are answered in shared transactions; every call is collected
// once, stored once, and its three callers get the same answer.
func TestSQLBatchAcrossReplicas(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	var n sqlCounts
	replicas := sqlReplicas(t, url, `SELECT md5(random()::text), $1::text FROM pg_sleep(0.005)`, &n, 4)
	const calls = 100
	results := make([][3]Result, calls)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range calls {
		for r := range 3 {
			wg.Go(func() {
				<-start
				res, err := replicas[r].Execute(context.Background(),
					chatCall("s", fmt.Sprint("c", i), "fast", fmt.Sprintf(`{"text":"t%d"}`, i)))
				if err != nil || res.Error != nil {
					t.Errorf("call %d on replica %d: %+v %v", i, r, res, err)
				}
				results[i][r] = res
			})
		}
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		return
	}
	seen := map[string]bool{}
	for i, rs := range results {
		fresh := 0
		for _, r := range rs {
			if r.Output != rs[0].Output {
				t.Fatalf("call %d: replicas answered %s and %s", i, rs[0].Output, r.Output)
			}
			if !r.Replayed {
				fresh++
			}
		}
		nonce := nonceOf(t, rs[0])
		if fresh != 1 || seen[nonce] {
			t.Fatalf("call %d: %d fresh answers (nonce %s seen before: %v)", i, fresh, nonce, seen[nonce])
		}
		seen[nonce] = true
	}
	if got := n.collected.Load(); got != calls {
		t.Fatalf("collected %d times, want %d", got, calls)
	}
	var batches uint64
	var batched float64
	for _, e := range replicas {
		b, c := batchStats(t, e, "fast")
		batches, batched = batches+b, batched+c
	}
	if batched <= float64(batches) {
		t.Fatalf("%v calls in %d transactions: no batch held more than one call", batched, batches)
	}
	var rows int
	if err := pgtest.NewPool(t, url, 1).QueryRow(context.Background(),
		`SELECT count(*) FROM tool_calls WHERE session_id = 's' AND status = 'succeeded'`).Scan(&rows); err != nil || rows != calls {
		t.Fatalf("%d stored rows (%v), want %d", rows, err, calls)
	}
}

// queueBehind makes the next calls on e queue as one batch: it lowers the
// batches in flight to one and sends a slow call first. It returns when
// that call has been answered.
func queueBehind(t *testing.T, e *Executor, tool string) (wait func()) {
	t.Helper()
	for tt, b := range e.batchers {
		if tt.Name == tool {
			b.maxInFlight = 1
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if r, err := e.Execute(context.Background(), chatCall("s", "blocker", tool, `{"text":"slow blocker"}`)); err != nil || r.Error != nil {
			t.Errorf("blocker: %+v %v", r, err)
		}
	}()
	time.Sleep(100 * time.Millisecond) // the blocker is in flight
	return func() { <-done }
}

// TestSQLBatchOneCallCannotFailAnother: a batch that holds a duplicate of a
// call another replica is running, and a call whose statement fails, is
// retried call by call: the duplicate replays, the failing call is
// answered by Run, and the others are answered as if alone, each
// collected once.
func TestSQLBatchOneCallCannotFailAnother(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	var n sqlCounts
	a, b := slowExecutor(t, pgtest.NewPool(t, url, 3), &n), slowExecutor(t, pgtest.NewPool(t, url, 3), &n)
	ctx := context.Background()

	// Replica a runs "dup" slowly; replica b queues a batch behind its own
	// blocker that holds dup, a failing call and two plain ones.
	var owner Result
	ownerDone := make(chan struct{})
	go func() {
		defer close(ownerDone)
		var err error
		if owner, err = a.Execute(ctx, chatCall("s", "dup", "fast", `{"text":"slow dup"}`)); err != nil || owner.Error != nil {
			t.Errorf("owner: %+v %v", owner, err)
		}
	}()
	wait := queueBehind(t, b, "fast")
	type answer struct {
		r   Result
		err error
	}
	calls := map[string]string{"dup": "slow dup", "boom": "boom", "p1": "plain 1", "p2": "plain 2"}
	answers := make(map[string]answer)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for id, text := range calls {
		wg.Go(func() {
			r, err := b.Execute(ctx, chatCall("s", id, "fast", fmt.Sprintf(`{"text":%q}`, text)))
			mu.Lock()
			answers[id] = answer{r, err}
			mu.Unlock()
		})
	}
	wg.Wait()
	wait()
	<-ownerDone
	if t.Failed() {
		return
	}
	for id, ans := range answers {
		if ans.err != nil || ans.r.Error != nil {
			t.Fatalf("%s: %+v %v", id, ans.r, ans.err)
		}
	}
	if d := answers["dup"].r; !d.Replayed || d.Output != owner.Output {
		t.Fatalf("dup: %+v, want a replay of %s", d, owner.Output)
	}
	if r := answers["boom"].r; string(r.Result) != `{"by":"run"}` || n.ran.Load() != 1 {
		t.Fatalf("boom: %+v (ran %d), want Run's answer", r, n.ran.Load())
	}
	for _, id := range []string{"p1", "p2"} {
		if r := answers[id].r; r.Replayed || nonceOf(t, r) == "" {
			t.Fatalf("%s: %+v", id, r)
		}
	}
	// dup (on a), the blocker, p1 and p2: each statement answered once.
	// The batch failed at dup's lock, before any statement of it ran.
	if got := n.read.Load(); got != 4 {
		t.Fatalf("%d statements answered, want 4", got)
	}
	if batches, calls := batchStats(t, b, "fast"); calls <= float64(batches) {
		t.Fatalf("replica b: %v calls in %d transactions, want a batch of several", calls, batches)
	}
	pool := pgtest.NewPool(t, url, 1)
	for id := range calls {
		if s := callRowState(t, pool, "s", id); s.Count != 1 || s.Status != "succeeded" {
			t.Fatalf("%s: row %+v", id, s)
		}
	}
}

// TestSQLBatchCallerGoneWhileQueued: a call whose caller goes away while
// it waits for a batch is never sent; one already sent is stored.
func TestSQLBatchCallerGoneWhileQueued(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	var n sqlCounts
	e := slowExecutor(t, pool, &n)
	wait := queueBehind(t, e, "fast")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := e.Execute(ctx, chatCall("s", "gone", "fast", `{"text":"plain"}`))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 250*time.Millisecond {
		t.Fatalf("got %v after %v, want the caller's deadline at once", err, time.Since(start))
	}
	wait()
	var stored int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM tool_calls WHERE call_id = 'gone'`).Scan(&stored); err != nil || stored != 0 {
		t.Fatalf("the abandoned call was stored (%d rows, %v)", stored, err)
	}
	if s := callRowState(t, pool, "s", "blocker"); s.Count != 1 || s.Status != "succeeded" {
		t.Fatalf("blocker: %+v", s)
	}
	// The key is free again: the same call runs normally.
	r, err := e.Execute(context.Background(), chatCall("s", "gone", "fast", `{"text":"plain"}`))
	if err != nil || r.Error != nil || r.Replayed || n.collected.Load() != 2 {
		t.Fatalf("retry: %+v %v (collected %d)", r, err, n.collected.Load())
	}
}

type panicky struct{}

func (panicky) MarshalJSON() ([]byte, error) { panic("boom") }

// TestSQLBatchShapingPanic: a panic while shaping a fast-path outcome, on
// the batch's goroutine, is the call's stored panic result, not a crash.
func TestSQLBatchShapingPanic(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	var n sqlCounts
	tool := sqlTool("fast", nonceSQL, &n, func(rows pgx.Rows) (Outcome, error) {
		for rows.Next() {
		}
		return Outcome{Data: panicky{}}, rows.Err()
	})
	e := mustExecutor(t, pool, mustRegistry(t, RegistryParams{Builtins: []*Tool{tool}}))
	r, err := e.Execute(context.Background(), chatCall("s", "p", "fast", `{"text":"a"}`))
	if err != nil || r.Error == nil || r.Error.Code != ErrCodePanic {
		t.Fatalf("got %+v %v, want a stored panic", r, err)
	}
	if s := callRowState(t, pool, "s", "p"); s.Count != 1 || s.Status != "failed" || *s.ErrorCode != ErrCodePanic {
		t.Fatalf("row: %+v", s)
	}
}

// TestToolCallBeginUsesUniqueKey: tool_call_begin looks calls up by the
// unique key even with a plan cached while tool_calls was empty, so its
// cost does not grow with the table (a join to the unnested arrays once
// kept a scan of the whole table as its cached plan).
func TestToolCallBeginUsesUniqueKey(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	begin := func(i int) {
		t.Helper()
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		calls := []string{fmt.Sprint("a", i), fmt.Sprint("b", i), fmt.Sprint("c", i)}
		if _, err := tx.Exec(ctx, beginSQL, []string{"s", "s", "s"}, calls, "5000"); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 { // past PL/pgSQL's switch to a cached generic plan
		begin(i)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO tool_calls (session_id, call_id, user_id, session_kind, source, tool,
			arguments, status, response, deadline, finished_at)
		SELECT 's', 'old' || i, 'u', 'chat', 'chat', 't', '{}', 'succeeded', '{}', now(), now()
		FROM generate_series(1, 20000) AS i`); err != nil {
		t.Fatal(err)
	}
	seqScans := func() int64 {
		t.Helper()
		var n int64
		if err := conn.QueryRow(ctx, `SELECT pg_stat_force_next_flush()`).Scan(new(any)); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRow(ctx, `SELECT pg_stat_clear_snapshot(), seq_scan FROM pg_stat_user_tables WHERE relname = 'tool_calls'`).
			Scan(new(any), &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := seqScans()
	for i := range 5 {
		begin(100 + i)
	}
	if after := seqScans(); after != before {
		t.Fatalf("tool_call_begin scanned tool_calls %d times, want lookups by key", after-before)
	}
}

// TestSQLBatchKeepsCollectedAnswers: when a statement fails in the middle
// of a batch, the calls before it keep the answers already collected (they
// are stored, not run again), and the calls after it run alone.
func TestSQLBatchKeepsCollectedAnswers(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	var n sqlCounts
	e := slowExecutor(t, pool, &n)
	wait := queueBehind(t, e, "fast")
	results := make(map[string]Result)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, id := range []string{"first", "boom", "last"} { // queued in this order
		text := id
		if id != "boom" {
			text = "plain " + id
		}
		wg.Go(func() {
			r, err := e.Execute(context.Background(), chatCall("s", id, "fast", fmt.Sprintf(`{"text":%q}`, text)))
			if err != nil || r.Error != nil {
				t.Errorf("%s: %+v %v", id, r, err)
			}
			mu.Lock()
			results[id] = r
			mu.Unlock()
		})
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	wait()
	if t.Failed() {
		return
	}
	if string(results["boom"].Result) != `{"by":"run"}` || n.ran.Load() != 1 {
		t.Fatalf("boom: %+v (ran %d), want Run's answer", results["boom"], n.ran.Load())
	}
	// The blocker, first and last, each read once: first's answer from the
	// failed batch was kept.
	if got := n.read.Load(); got != 3 {
		t.Fatalf("%d statements returned rows, want 3", got)
	}
	if batches, calls := batchStats(t, e, "fast"); calls <= float64(batches) {
		t.Fatalf("%v calls in %d transactions, want a batch of several", calls, batches)
	}
	for _, id := range []string{"first", "boom", "last"} {
		if s := callRowState(t, pool, "s", id); s.Count != 1 || s.Status != "succeeded" {
			t.Fatalf("%s: row %+v", id, s)
		}
		_, err := e.Execute(context.Background(), chatCall("s", id, "fast", `{"text":"x"}`))
		wantCode(t, err, apierr.Conflict) // other arguments: the stored call stands
	}
	if r := results["first"]; nonceOf(t, r) == "" || r.Replayed {
		t.Fatalf("first: %+v", r)
	}
}
