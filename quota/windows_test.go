package quota

import (
	"context"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
)

// TestWindowsOnlyMoveForward: a statement whose clock reading is older than
// the window its user's row is already in (it read the clock, then waited
// for the row while another statement moved the row into the next minute)
// counts in the newer window instead of resetting the row to its own.
func TestWindowsOnlyMoveForward(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
	plan := onePlan(config.Plan{RequestsPerMinute: 2, RequestsPerDay: 3})
	next := time.Date(2030, 5, 16, 0, 0, 0, 0, time.UTC) // a new minute and a new day
	ahead := mustService(t, pool, plan, newClock(next.Add(500*time.Millisecond)))
	behind := mustService(t, pool, plan, newClock(next.Add(-100*time.Millisecond)))
	later := mustService(t, pool, plan, newClock(next.Add(time.Second)))

	t.Run("one admission", func(t *testing.T) {
		t.Parallel()
		p := user(t)
		mustAdmit(t, ahead, p, Estimate{})
		mustAdmit(t, behind, p, Estimate{}) // counts in 00:00, the row's minute
		_, err := later.Admit(ctx, p, Estimate{})
		wantDenied(t, err, apierr.RateLimited, ReasonMinute, 59)
	})
	t.Run("a batch", func(t *testing.T) {
		t.Parallel()
		p, q := user(t), user(t)
		mustAdmit(t, ahead, p, Estimate{})
		mustAdmit(t, ahead, q, Estimate{})
		rows, err := pool.Query(ctx, admitBatchSQL, behind.clockArg(), behind.plans,
			[]string{p.UserID, q.UserID}, []string{"p", "p"}, []string{"", ""}, []int64{0, 0}, []int64{0, 0}, []int64{0, 0},
			LeaseTTL.Seconds(), int64(0))
		if err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		for _, u := range []auth.Principal{p, q} {
			_, err := later.Admit(ctx, u, Estimate{})
			wantDenied(t, err, apierr.RateLimited, ReasonMinute, 59)
		}
	})
	t.Run("a report", func(t *testing.T) {
		t.Parallel()
		p := user(t)
		mustAdmit(t, ahead, p, Estimate{})
		r, err := behind.Report(ctx, p) // the row's minute and day are newer than its clock
		if err != nil {
			t.Fatal(err)
		}
		for _, limit := range []string{ReasonMinute, ReasonDay} {
			if got := r.Usage[limit].Used; got != 1 {
				t.Errorf("%s: got %d used, want 1 (the row's window is the current one)", limit, got)
			}
		}
	})
	t.Run("a settlement", func(t *testing.T) {
		t.Parallel()
		p := user(t)
		mustAdmit(t, ahead, p, Estimate{})
		tk := mustAdmit(t, ahead, p, Estimate{})
		tk.svc = behind // settles with the older clock: yesterday, by its reading
		if _, err := tk.Settle(ctx, Usage{Tokens: 5}); err != nil {
			t.Fatal(err)
		}
		r, err := later.Report(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if u := r.Usage[ReasonDay]; u.Used != 2 {
			t.Errorf("got %d requests today, want 2 (the day kept)", u.Used)
		}
		if u := r.Usage[ReasonTokens]; u.Used != 5 {
			t.Errorf("got %d tokens today, want 5", u.Used)
		}
	})
}
