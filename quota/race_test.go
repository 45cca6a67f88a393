package quota

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// rounds is how many times each race runs.
const rounds = 20

// replicas opens three independent pools on one database, as three voxgate
// replicas would have, each with its own Service on the shared clock.
func replicas(t *testing.T, cfg config.Quota, clk *clock) []*Service {
	t.Helper()
	url := pgtest.URL(t)
	var out []*Service
	for range 3 {
		out = append(out, mustService(t, pgtest.NewPool(t, url, 5), cfg, clk))
	}
	return out
}

// race runs n attempts at once, spread over the replicas, and returns how
// many succeeded. Any error but the expected refusal fails the test.
func race(t *testing.T, svcs []*Service, n int, refusal apierr.Code, try func(s *Service, i int) (bool, error)) int {
	t.Helper()
	var ok atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			admitted, err := try(svcs[i%len(svcs)], i)
			switch {
			case err == nil && admitted:
				ok.Add(1)
			case err != nil && apierr.CodeOf(err) != refusal:
				t.Errorf("attempt %d: %v", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	return int(ok.Load())
}

// TestExactRequestWindowAcrossReplicas: 300 concurrent attempts on three
// replicas against a per-minute limit of 10 admit exactly 10.
func TestExactRequestWindowAcrossReplicas(t *testing.T) {
	t.Parallel()
	svcs := replicas(t, onePlan(config.Plan{RequestsPerMinute: 10}), newClock(t0))
	ctx := context.Background()
	for round := range rounds {
		p := user(t)
		got := race(t, svcs, 300, apierr.RateLimited, func(s *Service, _ int) (bool, error) {
			tk, err := s.Admit(ctx, p, Estimate{Tokens: 1})
			return tk != nil, err
		})
		if got != 10 {
			t.Fatalf("round %d: got %d admitted, want exactly 10", round, got)
		}
	}
}

// TestLeaseNeverTwoHolders: with a concurrency limit of 1, callers on three
// replicas hammering one user never hold two leases at once.
func TestLeaseNeverTwoHolders(t *testing.T) {
	t.Parallel()
	svcs := replicas(t, onePlan(config.Plan{ConcurrentTurns: 1}), newClock(t0))
	ctx := context.Background()
	for round := range rounds {
		p := user(t)
		var holders, most atomic.Int64
		got := race(t, svcs, 60, apierr.ConcurrentLimit, func(s *Service, _ int) (bool, error) {
			admitted := false
			for range 5 {
				tk, err := s.Admit(ctx, p, Estimate{})
				if err != nil {
					if apierr.CodeOf(err) != apierr.ConcurrentLimit {
						return admitted, err
					}
					continue
				}
				admitted = true
				h := holders.Add(1)
				for m := most.Load(); h > m && !most.CompareAndSwap(m, h); m = most.Load() {
				}
				// Leave before releasing: the next holder may be admitted
				// the moment the release commits.
				holders.Add(-1)
				if err := tk.Release(ctx); err != nil {
					return admitted, err
				}
			}
			return admitted, nil
		})
		if most.Load() != 1 {
			t.Fatalf("round %d: got %d holders at once, want 1", round, most.Load())
		}
		if got == 0 {
			t.Fatalf("round %d: nobody was admitted", round)
		}
	}
}

// TestVoiceReservationsNeverExceedAllowance: concurrent voice starts on
// three replicas reserve, together, exactly the monthly allowance and
// never more.
func TestVoiceReservationsNeverExceedAllowance(t *testing.T) {
	t.Parallel()
	svcs := replicas(t, onePlan(config.Plan{VoiceSecondsPerMonth: 100, MaxSessionSeconds: 30}), newClock(t0))
	ctx := context.Background()
	for round := range rounds {
		p := user(t)
		var total atomic.Int64
		got := race(t, svcs, 30, apierr.QuotaExceeded, func(s *Service, i int) (bool, error) {
			r, err := s.ReserveVoice(ctx, p, fmt.Sprintf("%s-%d", p.UserID, i))
			if err != nil {
				return false, err
			}
			if r.Seconds < MinVoiceS || r.Seconds > 30 {
				return true, fmt.Errorf("granted %d s, want 10..30", r.Seconds)
			}
			total.Add(r.Seconds)
			return true, nil
		})
		if total.Load() != 100 || got != 4 {
			t.Fatalf("round %d: got %d s in %d sessions, want 100 s in 4 (30+30+30+10)", round, total.Load(), got)
		}
	}
}

// TestSettlementsSumExactly: turns admitted and settled concurrently on
// three replicas leave daily totals equal to the sum of their usages.
func TestSettlementsSumExactly(t *testing.T) {
	t.Parallel()
	svcs := replicas(t, onePlan(config.Plan{TokensPerDay: 1_000_000, CostPerDayMicros: 1_000_000, CallsPerDay: 1_000_000}), newClock(t0))
	ctx := context.Background()
	p := user(t)
	var want atomic.Int64
	got := race(t, svcs, 90, "", func(s *Service, i int) (bool, error) {
		tk, err := s.Admit(ctx, p, Estimate{Tokens: 500, CostMicros: 500, Calls: 5})
		if err != nil {
			return false, err
		}
		use := int64(i*37%1000 + 1) // some above, some below the estimate
		want.Add(use)
		_, err = tk.Settle(ctx, Usage{Tokens: use, CostMicros: use, Calls: use})
		return err == nil, err
	})
	if got != 90 {
		t.Fatalf("got %d settled, want 90", got)
	}
	r, err := svcs[0].Report(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{ReasonTokens, ReasonCost, ReasonCalls} {
		if r.Usage[k].Used != want.Load() {
			t.Errorf("%s: got %d used, want %d (the sum of settlements)", k, r.Usage[k].Used, want.Load())
		}
	}
	if r.Usage[ReasonConcurrent].Used != 0 {
		t.Errorf("got %d leases left, want 0", r.Usage[ReasonConcurrent].Used)
	}
}
