package quota

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/testkit"
)

// TestLeaseTTL: a lease never released is reclaimed after its TTL, with its
// reservation; a renewed one is not.
func TestLeaseTTL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
	plan := onePlan(config.Plan{ConcurrentTurns: 1, TokensPerDay: 100})

	t.Run("never released is reclaimed", func(t *testing.T) {
		t.Parallel()
		clk := newClock(t0)
		s := mustService(t, pool, plan, clk)
		p := user(t)
		mustAdmit(t, s, p, Estimate{Tokens: 100}) // the "crashed replica"
		clk.Add(LeaseTTL - time.Second)
		_, err := s.Admit(ctx, p, Estimate{})
		wantDenied(t, err, apierr.ConcurrentLimit, ReasonConcurrent, inflightRetry)
		clk.Add(time.Second)
		tk := mustAdmit(t, s, p, Estimate{Tokens: 100}) // slot and reservation are back
		if tk.Daily.ReservedTokens != 100 {
			t.Errorf("got %d tokens reserved, want 100 (the dead lease's reservation dropped)", tk.Daily.ReservedTokens)
		}
	})
	t.Run("renewed is kept", func(t *testing.T) {
		t.Parallel()
		clk := newClock(t0)
		s := mustService(t, pool, plan, clk)
		p := user(t)
		tk := mustAdmit(t, s, p, Estimate{})
		clk.Add(40 * time.Second)
		if err := tk.Renew(ctx); err != nil {
			t.Fatal(err)
		}
		clk.Add(40 * time.Second) // 80 s after admission, 40 s after renewal
		_, err := s.Admit(ctx, p, Estimate{})
		wantDenied(t, err, apierr.ConcurrentLimit, ReasonConcurrent, inflightRetry)
		if got, want := tk.ExpiresAt(), t0.Add(40*time.Second+LeaseTTL); !got.Equal(want) {
			t.Errorf("got expiry %v, want %v", got, want)
		}
	})
	t.Run("renew after expiry is lost", func(t *testing.T) {
		t.Parallel()
		clk := newClock(t0)
		s := mustService(t, pool, plan, clk)
		tk := mustAdmit(t, s, user(t), Estimate{})
		clk.Add(LeaseTTL)
		if err := tk.Renew(ctx); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("got %v, want ErrLeaseLost", err)
		}
	})
	t.Run("keep alive renews", func(t *testing.T) {
		t.Parallel()
		clk := newClock(t0)
		s := mustService(t, pool, plan, clk)
		s.renewEvery = 5 * time.Millisecond
		p := user(t)
		tk := mustAdmit(t, s, p, Estimate{})
		stop := tk.KeepAlive(ctx)
		clk.Add(50 * time.Second)
		want := t0.Add(50*time.Second + LeaseTTL)
		testkit.Eventually(t, ctx, fmt.Sprintf("a renewal to %v", want), func() bool { return tk.ExpiresAt().Equal(want) })
		stop()
		clk.Add(50 * time.Second) // 100 s after admission; renewed at 50 s
		_, err := s.Admit(ctx, p, Estimate{})
		wantDenied(t, err, apierr.ConcurrentLimit, ReasonConcurrent, inflightRetry)
	})
	t.Run("settling a reclaimed ticket still counts usage", func(t *testing.T) {
		t.Parallel()
		clk := newClock(t0)
		s := mustService(t, pool, plan, clk)
		p := user(t)
		old := mustAdmit(t, s, p, Estimate{Tokens: 50})
		clk.Add(LeaseTTL + time.Second)
		mustAdmit(t, s, p, Estimate{Tokens: 10}) // reclaims old
		d, err := old.Settle(ctx, Usage{Tokens: 30})
		if err != nil {
			t.Fatal(err)
		}
		if d.Tokens != 30 || d.ReservedTokens != 10 {
			t.Errorf("got %d used, %d reserved; want 30 used, 10 reserved", d.Tokens, d.ReservedTokens)
		}
	})
}

// TestSettle covers settlement's own guarantees.
func TestSettle(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	plan := onePlan(config.Plan{ConcurrentTurns: 1, TokensPerDay: 1000})

	t.Run("cancelled context still settles", func(t *testing.T) {
		t.Parallel()
		s := mustService(t, pool, plan, newClock(t0))
		tk := mustAdmit(t, s, user(t), Estimate{Tokens: 100})
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // the client went away
		d, err := tk.Settle(ctx, Usage{Tokens: 42})
		if err != nil {
			t.Fatalf("Settle with a cancelled context: %v", err)
		}
		if d.Tokens != 42 || d.ReservedTokens != 0 {
			t.Errorf("got %d used, %d reserved; want 42, 0", d.Tokens, d.ReservedTokens)
		}
	})
	t.Run("twice is refused", func(t *testing.T) {
		t.Parallel()
		s := mustService(t, pool, plan, newClock(t0))
		tk := mustAdmit(t, s, user(t), Estimate{})
		ctx := context.Background()
		if _, err := tk.Settle(ctx, Usage{Tokens: 5}); err != nil {
			t.Fatal(err)
		}
		if _, err := tk.Settle(ctx, Usage{Tokens: 5}); !errors.Is(err, ErrTicketDone) {
			t.Errorf("got %v, want ErrTicketDone", err)
		}
		if err := tk.Release(ctx); !errors.Is(err, ErrTicketDone) {
			t.Errorf("got %v, want ErrTicketDone", err)
		}
	})
	t.Run("day rolls between admit and settle", func(t *testing.T) {
		t.Parallel()
		clk := newClock(time.Date(2030, 5, 15, 23, 59, 50, 0, time.UTC))
		s := mustService(t, pool, plan, clk)
		p := user(t)
		tk := mustAdmit(t, s, p, Estimate{Tokens: 100})
		clk.Add(20 * time.Second)
		d, err := tk.Settle(context.Background(), Usage{Tokens: 70})
		if err != nil {
			t.Fatal(err)
		}
		if d.Tokens != 70 || d.Requests != 0 {
			t.Errorf("got %d tokens, %d requests on the new day; want 70, 0", d.Tokens, d.Requests)
		}
	})
}
