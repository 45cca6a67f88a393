package quota

import (
	"context"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
)

// TestSettleOnce: a ticket is settled once in the database. A retry after a
// lost reply (the settlement committed, the caller never heard) adds
// nothing, whether the lease was live or already reclaimed, and replicas of
// the previous release, calling quota_settle, settle once too.
func TestSettleOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
	plan := onePlan(config.Plan{ConcurrentTurns: 2, TokensPerDay: 1000})
	// retry is the caller's second attempt after a lost reply: a ticket
	// that does not know its first settlement committed.
	retry := func(tk *Ticket) *Ticket { return &Ticket{svc: tk.svc, ID: tk.ID, UserID: tk.UserID} }

	t.Run("live lease", func(t *testing.T) {
		t.Parallel()
		s := mustService(t, pool, plan, newClock(t0))
		p := user(t)
		tk := mustAdmit(t, s, p, Estimate{Tokens: 100})
		if _, err := tk.Settle(ctx, Usage{Tokens: 70, Calls: 1}); err != nil {
			t.Fatal(err)
		}
		d, err := retry(tk).Settle(ctx, Usage{Tokens: 70, Calls: 1})
		if err != nil {
			t.Fatal(err)
		}
		if d.Tokens != 70 || d.Calls != 1 || d.ReservedTokens != 0 {
			t.Errorf("after the retry: got %+v, want 70 tokens and 1 call, nothing reserved", d)
		}
	})
	t.Run("remembered a day", func(t *testing.T) {
		t.Parallel()
		clk := newClock(t0)
		s := mustService(t, pool, plan, clk)
		tk := mustAdmit(t, s, user(t), Estimate{})
		if err := tk.Release(ctx); err != nil {
			t.Fatal(err)
		}
		p := user(t)
		r, err := s.ReserveVoice(ctx, p, p.UserID+"-v")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SettleVoice(ctx, p.UserID, r.SessionID, 1); err != nil {
			t.Fatal(err)
		}
		const q = `SELECT (SELECT count(*) FROM quota_settlements WHERE ticket_id = $1)
			+ (SELECT count(*) FROM quota_voice_ended WHERE session_id = $2)`
		for _, step := range []struct {
			after time.Duration
			want  int
		}{{settledKeep - time.Second, 2}, {2 * time.Second, 0}} {
			clk.Add(step.after)
			if err := s.Sweep(ctx); err != nil {
				t.Fatal(err)
			}
			if n := count(t, s, q, tk.ID, r.SessionID); n != step.want {
				t.Errorf("%v after settling: got %d settlement and voice end rows, want %d", clk.Now().Sub(t0), n, step.want)
			}
		}
	})
	t.Run("reclaimed lease", func(t *testing.T) {
		t.Parallel()
		clk := newClock(t0)
		s := mustService(t, pool, plan, clk)
		p := user(t)
		tk := mustAdmit(t, s, p, Estimate{Tokens: 100})
		clk.Add(LeaseTTL + time.Second)
		if err := s.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, `SELECT count(*) FROM quota_tickets WHERE id = $1`, tk.ID); n != 0 {
			t.Fatalf("got %d tickets, want the expired one reclaimed", n)
		}
		d, err := tk.Settle(ctx, Usage{Tokens: 40})
		if err != nil {
			t.Fatal(err)
		}
		if d.Tokens != 40 {
			t.Errorf("late settlement: got %d tokens, want 40 (a turn that outlived its lease is counted)", d.Tokens)
		}
		d, err = retry(tk).Settle(ctx, Usage{Tokens: 40})
		if err != nil {
			t.Fatal(err)
		}
		if d.Tokens != 40 {
			t.Errorf("after the retry: got %d tokens, want 40", d.Tokens)
		}
	})
	t.Run("previous release's function", func(t *testing.T) {
		t.Parallel()
		s := mustService(t, pool, plan, newClock(t0))
		p := user(t)
		tk := mustAdmit(t, s, p, Estimate{Tokens: 100})
		var tokens [2]int64
		for i := range tokens {
			err := pool.QueryRow(ctx, `SELECT s.day_tokens FROM quota_clock($3) c,
				LATERAL quota_settle($1, $2, c.now, c.minute, c.hour, c.day, c.month, 0, 25, 0) s`,
				p.UserID, tk.ID, t0).Scan(&tokens[i])
			if err != nil {
				t.Fatal(err)
			}
		}
		if tokens != [2]int64{25, 25} {
			t.Errorf("got day tokens %v after two calls, want [25 25]", tokens)
		}
	})
}
