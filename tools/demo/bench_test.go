package demo

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/latency"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/tools"
)

const benchCallers = 32

// BenchmarkSearchRecipes measures search_recipes through the executor —
// validation, the claimed running row, the tool's Run (profile read,
// allergen resolution, search), the shaping and the finished row — at 32
// concurrent callers, beside two references that run directly on the same
// pool in the same run:
//
//   - baseline: the tool's Run called directly (the profile read, the
//     allergen resolution and the search: searchQuery, the one statement
//     that applies the exclusions), then one tool_calls insert. This is
//     the yardstick of the target: the search and one write are the work
//     the executor cannot skip; the rest is its overhead.
//
//   - preresolved: the search with the exclusions already resolved before
//     the run, then the same insert. It skips the profile read and the
//     allergen map, so it is a lower bound on any caller's cost, not a
//     like-for-like one; it is reported for comparison.
//
// tool_calls starts with 100,000 rows. docs/tools.md has the figures.
//
//	go test ./tools/demo -run '^$' -bench SearchRecipes -benchtime 4000x -count 3
func BenchmarkSearchRecipes(b *testing.B) {
	pool := pgtest.NewPool(b, pgtest.URL(b, Migrations), 10)
	f := newFixture(b, pool, false)
	f.profile(b, "bench", "none", "peanuts", "shellfish")
	ctx := context.Background()
	// A table in use: the executor's lookups in it must not grow with it.
	if _, err := pool.Exec(ctx, `INSERT INTO tool_calls (session_id, call_id, user_id, session_kind, source, tool,
			arguments, status, response, deadline, finished_at, duration_ms)
		SELECT 'old' || i / 20, 'call' || i, 'user' || i / 100, 'chat', 'chat', 'search_recipes',
			'{"query":"soup"}', 'succeeded', '{}', now(), now(), 3
		FROM generate_series(1, 100000) AS i;
		ANALYZE tool_calls`); err != nil {
		b.Fatal(err)
	}
	queries := []string{"chicken curry", "quick pasta", "vegan soup", "salmon", "lentils", "spicy noodles", "breakfast eggs", "tacos"}
	d := &app{db: pool, now: time.Now, maps: &allergenCache{ttl: time.Minute}}
	ex, err := d.exclusionsFor(ctx, []string{"peanuts", "shellfish"})
	if err != nil {
		b.Fatal(err)
	}
	var seq atomic.Int64
	record := func(i int64) error {
		_, err := pool.Exec(ctx, `INSERT INTO tool_calls (session_id, call_id, user_id, session_kind, source, tool, arguments, deadline)
			VALUES ('base', $1, 'bench', 'chat', 'chat', 'search_recipes', '{}', now())`, fmt.Sprint("b", i))
		return err
	}
	baseline := func() error {
		i := seq.Add(1)
		args := fmt.Sprintf(`{"query":%q}`, queries[i%int64(len(queries))])
		if _, err := d.searchRecipes(ctx, tools.Invocation{UserID: "bench", Args: []byte(args)}); err != nil {
			return err
		}
		return record(i)
	}
	preresolved := func() error {
		i := seq.Add(1)
		sql, args := searchQuery(searchFilter{query: queries[i%int64(len(queries))], limit: 5,
			groups: ex.groups, unknown: ex.unknown})
		rows, err := pool.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		return record(i)
	}
	executor := func() error {
		i := seq.Add(1)
		args := fmt.Sprintf(`{"query":%q}`, queries[i%int64(len(queries))])
		r, err := f.exec.Execute(ctx, tools.Call{SessionID: "bench", SessionKind: tools.KindVoice, CallID: fmt.Sprint("e", i),
			Name: "search_recipes", Arguments: []byte(args), Principal: auth.Principal{UserID: "bench"}})
		if err == nil && r.Error != nil {
			err = fmt.Errorf("tool error %+v", r.Error)
		}
		return err
	}
	const rounds = 3 // alternate, so no side gets only the warm or the cold part of the run
	n := max(b.N, 3*rounds*benchCallers)
	for _, fn := range []func() error{baseline, preresolved, executor} { // warm up every path
		measure(b, benchCallers, n/(2*rounds), fn)
	}
	b.ResetTimer()
	var base, pre, exec stats
	for range rounds {
		base = base.add(measure(b, benchCallers, n/rounds, baseline))
		exec = exec.add(measure(b, benchCallers, n/rounds, executor))
		pre = pre.add(measure(b, benchCallers, n/rounds, preresolved))
	}
	b.StopTimer()
	b.ReportMetric(exec.rate(), "calls/s")
	b.ReportMetric(base.rate(), "baseline_calls/s")
	b.ReportMetric(100*exec.rate()/base.rate(), "%_of_baseline")
	b.ReportMetric(latency.Millis(b, exec.lat, .50), "p50_ms")
	b.ReportMetric(latency.Millis(b, exec.lat, .99), "p99_ms")
	b.ReportMetric(latency.Millis(b, base.lat, .50), "baseline_p50_ms")
	b.ReportMetric(latency.Millis(b, base.lat, .99), "baseline_p99_ms")
	b.ReportMetric(pre.rate(), "preresolved_calls/s")
	b.ReportMetric(100*exec.rate()/pre.rate(), "%_of_preresolved")
}

type stats struct {
	lat  []time.Duration
	wall time.Duration
}

func (s stats) add(o stats) stats {
	return stats{lat: append(s.lat, o.lat...), wall: s.wall + o.wall}
}

func (s stats) rate() float64 { return float64(len(s.lat)) / s.wall.Seconds() }

// measure runs n calls of fn spread over workers goroutines.
func measure(b *testing.B, workers, n int, fn func() error) stats {
	b.Helper()
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				t0 := time.Now()
				if err := fn(); err != nil {
					failed.Store(err)
					return
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
	return stats{lat: lat, wall: time.Since(start)}
}
