package quota

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/logbuf"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/internal/testkit"
)

// TestDatabaseUnavailable: with the pool closed or the server refusing
// connections, every call answers 503 UNAVAILABLE with Retry-After, the
// batched admission included, never a 500.
func TestDatabaseUnavailable(t *testing.T) {
	t.Parallel()
	pools := []struct {
		name string
		open func(t *testing.T) *pgxpool.Pool
	}{
		{"closed pool", func(t *testing.T) *pgxpool.Pool {
			p := pgtest.NewPool(t, pgtest.URL(t), 1)
			p.Close()
			return p
		}},
		{"refused connection", func(t *testing.T) *pgxpool.Pool {
			// Port 1 on the loopback: nothing listens, the kernel refuses.
			p, err := pgxpool.New(context.Background(), "postgres://voxgate@127.0.0.1:1/voxgate?connect_timeout=5")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Close)
			return p
		}},
	}
	for _, pc := range pools {
		t.Run(pc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := mustService(t, pc.open(t), config.DefaultQuota(), newClock(t0))
			p := user(t)
			tk := &Ticket{svc: s, ID: 1, UserID: p.UserID}
			calls := []struct {
				name string
				call func() error
			}{
				{"Admit", func() error { _, err := s.Admit(ctx, p, Estimate{}); return err }},
				{"Settle", func() error { _, err := tk.Settle(ctx, Usage{}); return err }},
				{"Renew", func() error { return tk.Renew(ctx) }},
				{"ReserveVoice", func() error { _, err := s.ReserveVoice(ctx, p, "v"); return err }},
				{"SettleVoice", func() error { _, err := s.SettleVoice(ctx, p.UserID, "v", 1); return err }},
				{"Report", func() error { _, err := s.Report(ctx, p); return err }},
				{"PlanFor", func() error { _, _, err := s.PlanFor(ctx, p); return err }},
				{"SetPlan", func() error { _, err := s.SetPlan(ctx, p.UserID, "pro"); return err }},
				{"Sweep", func() error { return s.Sweep(ctx) }},
			}
			for _, c := range calls {
				err := c.call()
				e := apierr.From(err)
				if err == nil || e.Code != apierr.Unavailable || e.RetryAfter < 1 {
					t.Errorf("%s: got %v, want UNAVAILABLE with Retry-After", c.name, err)
				}
			}
		})
	}
}

// TestBackgroundWorkIsBounded: a sweep or a lease renewal stuck behind a
// database that does not answer (here: rows another transaction holds) is
// given up after its bound, not held forever.
func TestBackgroundWorkIsBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
	var logs logbuf.Buffer
	s, err := New(Params{Pool: pool, Config: onePlan(config.Plan{}), Now: newClock(t0).Now,
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s.sweepTimeout, s.renewEvery, s.renewTimeout = 300*time.Millisecond, 50*time.Millisecond, 300*time.Millisecond
	tk := mustAdmit(t, s, auth.Principal{UserID: "u-stuck"}, Estimate{})

	// Another transaction holds every quota table the two touch.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE quota_tickets, quota_voice, quota_users, quota_global IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	err = s.Sweep(ctx)
	if took := time.Since(start); took > 5*time.Second || apierr.CodeOf(err) != apierr.Unavailable {
		t.Errorf("sweep: got %v after %v, want UNAVAILABLE after about 300ms", err, took)
	}

	stop := tk.KeepAlive(ctx)
	defer stop()
	testkit.Eventually(t, context.Background(), "a renewal given up (\"lease renewal failed\" logged)", func() bool {
		return strings.Contains(logs.String(), "lease renewal failed")
	})
}
