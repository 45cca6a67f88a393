package quota

import (
	"context"
	"slices"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/config"
)

// oldAdmitSQL is the previous release's admission statement as its
// replicas send it: plans as a positional array (quota_plan's layout).
const oldAdmitSQL = `SELECT a.reasons, a.ticket_id FROM quota_clock($1) c,
	LATERAL quota_admit_batch(ARRAY[$2::text], ARRAY[$3::text], $4, $5, c.now, c.minute, c.hour, c.day,
		c.now + interval '60 seconds', ARRAY[$6::bigint], ARRAY[$7::bigint], ARRAY[$8::bigint], $9) a`

// TestRolloutOldReplicas: during a rollout, replicas of the previous
// release admit through quota_admit_batch beside this release's statement.
// They share one rule and one set of counters: each admission counts for
// the other, the limits are the plan's by name, and a refusal counts
// nothing.
func TestRolloutOldReplicas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
	plan := config.Plan{RequestsPerMinute: 3, TokensPerDay: 1_000, ConcurrentTurns: 2}
	s := mustService(t, pool, onePlan(plan), newClock(t0))
	p := user(t)
	old := func(tokens int64) []string {
		t.Helper()
		var reasons []string
		var ticket *int64
		if err := pool.QueryRow(ctx, oldAdmitSQL, s.clockArg(), p.UserID, "p",
			s.names, s.limits, int64(0), tokens, int64(0), int64(0)).Scan(&reasons, &ticket); err != nil {
			t.Fatal(err)
		}
		if (ticket != nil) != (len(reasons) == 0) {
			t.Fatalf("got ticket %v with reasons %v", ticket, reasons)
		}
		return reasons
	}

	if got := old(900); len(got) != 0 {
		t.Fatalf("old replica's first admission: got refused %v, want admitted", got)
	}
	_, err := s.Admit(ctx, p, Estimate{Tokens: 200}) // 900 reserved by the old replica
	wantDenied(t, err, apierr.QuotaExceeded, ReasonTokens, inflightRetry)
	tk := mustAdmit(t, s, p, Estimate{Tokens: 100})
	if got, want := old(0), []string{"concurrent_turns"}; !slices.Equal(got, want) {
		t.Fatalf("old replica, 2 turns in flight: got %v, want %v", got, want)
	}
	_, err = s.Admit(ctx, p, Estimate{})
	wantDenied(t, err, apierr.ConcurrentLimit, ReasonConcurrent, inflightRetry)
	r, err := s.Report(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Usage[ReasonMinute].Used; got != 2 {
		t.Fatalf("got %d requests this minute, want 2 (refusals count nothing)", got)
	}
	if err := tk.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if got := old(0); len(got) != 0 {
		t.Fatalf("old replica, a turn released: got refused %v, want admitted", got)
	}
	if got, want := old(0), []string{"requests_per_minute", "concurrent_turns"}; !slices.Equal(got, want) {
		t.Fatalf("old replica after 3 requests: got %v, want %v", got, want)
	}
	_, err = s.Admit(ctx, p, Estimate{})
	wantDenied(t, err, apierr.RateLimited, ReasonMinute, 40)
}
