package quota

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/latency"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// benchCallers is the concurrency of DESIGN §15's admission benchmark.
const benchCallers = 64

// benchPlan has every limit on, and high, so an admission runs every check
// (windows, lease, daily reservation) and is never refused.
var benchPlan = config.Plan{
	RequestsPerMinute: 1e15, RequestsPerHour: 1e15, RequestsPerDay: 1e15,
	TokensPerDay: 1e15, CostPerDayMicros: 1e15, CallsPerDay: 1e15, ConcurrentTurns: 1e15,
	VoiceSecondsPerMonth: 1e15, MaxSessionSeconds: 1800, VoiceSessions: 1e15,
}

// BenchmarkAdmission measures admissions at 64 concurrent callers (each its
// own user, as real traffic is spread over users) beside a baseline of one
// trivial statement per call on the same pool, in the same run. It reports
// both rates, their ratio, and admission p50/p99. The concurrent Admit calls
// share statements (batch.go); docs/quota.md has the figures.
//
//	go test -run '^$' -bench Admission -benchtime 20000x ./quota/
func BenchmarkAdmission(b *testing.B) {
	pool := pgtest.NewPool(b, pgtest.URL(b), 10)
	s := mustService(b, pool, onePlan(benchPlan), nil)
	ctx := context.Background()
	n := b.N

	baseline, _ := runCallers(b, n, func(int, int) error {
		var one int
		return pool.QueryRow(ctx, "SELECT 1").Scan(&one)
	})
	admit, lat := runCallers(b, n, func(caller, _ int) error {
		_, err := s.Admit(ctx, benchUser(caller), Estimate{Tokens: 100, CostMicros: 100, Calls: 1})
		return err
	})
	b.ReportMetric(0, "ns/op") // the rates below are the figures
	b.ReportMetric(baseline, "baseline/s")
	b.ReportMetric(admit, "admissions/s")
	b.ReportMetric(admit/baseline, "ratio")
	b.ReportMetric(latency.Millis(b, lat, 0.50), "p50-ms")
	b.ReportMetric(latency.Millis(b, lat, 0.99), "p99-ms")
}

// BenchmarkTurn is a whole turn's quota work, Admit then Settle (two round
// trips), at the same concurrency, beside the same baseline.
//
//	go test -run '^$' -bench Turn -benchtime 20000x ./quota/
func BenchmarkTurn(b *testing.B) {
	pool := pgtest.NewPool(b, pgtest.URL(b), 10)
	s := mustService(b, pool, onePlan(benchPlan), nil)
	ctx := context.Background()
	baseline, _ := runCallers(b, b.N, func(int, int) error {
		var one int
		return pool.QueryRow(ctx, "SELECT 1").Scan(&one)
	})
	turns, lat := runCallers(b, b.N, func(caller, _ int) error {
		tk, err := s.Admit(ctx, benchUser(caller), Estimate{Tokens: 100, CostMicros: 100, Calls: 1})
		if err != nil {
			return err
		}
		_, err = tk.Settle(ctx, Usage{Tokens: 80, CostMicros: 80, Calls: 1})
		return err
	})
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(baseline, "baseline/s")
	b.ReportMetric(turns, "turns/s")
	b.ReportMetric(turns/baseline, "ratio")
	b.ReportMetric(latency.Millis(b, lat, 0.50), "p50-ms")
	b.ReportMetric(latency.Millis(b, lat, 0.99), "p99-ms")
}

func benchUser(caller int) auth.Principal {
	return auth.Principal{UserID: fmt.Sprintf("bench-%d", caller)}
}

// runCallers runs n calls of f over benchCallers goroutines and returns
// calls per second and every call's latency.
func runCallers(b *testing.B, n int, f func(caller, i int) error) (float64, []time.Duration) {
	b.Helper()
	var next atomic.Int64
	lat := make([][]time.Duration, benchCallers)
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for c := range benchCallers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				t := time.Now()
				if err := f(c, i); err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
				lat[c] = append(lat[c], time.Since(t))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return float64(n) / elapsed.Seconds(), slices.Concat(lat...)
}
