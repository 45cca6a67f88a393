package quota

import (
	"context"
	"errors"
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

// positional is plans in the layout the previous release's replicas send:
// the names, and 10 limits per plan in their order (quota_plan, 0010).
func positional(q config.Quota) ([]string, []int64) {
	var names []string
	var limits []int64
	for _, name := range q.PlanNames() {
		p := q.Plans[name]
		names = append(names, name)
		limits = append(limits, p.RequestsPerMinute, p.RequestsPerHour, p.RequestsPerDay,
			p.TokensPerDay, p.CostPerDayMicros, p.CallsPerDay, p.ConcurrentTurns,
			p.VoiceSecondsPerMonth, p.MaxSessionSeconds, p.VoiceSessions)
	}
	return names, limits
}

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
		names, limits := positional(s.cfg)
		if err := pool.QueryRow(ctx, oldAdmitSQL, s.clockArg(), p.UserID, "p",
			names, limits, int64(0), tokens, int64(0), int64(0)).Scan(&reasons, &ticket); err != nil {
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

// oldVoiceSQL is the previous release's voice start, positional plans.
const oldVoiceSQL = `SELECT r.reasons, r.granted FROM quota_clock($1) c,
	LATERAL quota_voice_reserve($2, $3, $4, $5, c.now, c.minute, c.hour, c.day, c.month,
		$6, $7, $8, $9, $10) r`

// TestRolloutOldVoiceReplicas: an old replica's voice start goes through
// the same rule as this release's: the limits read by name, one active
// session between them, and the month's seconds shared.
func TestRolloutOldVoiceReplicas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
	plan := config.Plan{VoiceSessions: 1, VoiceSecondsPerMonth: 600, MaxSessionSeconds: 400}
	s := mustService(t, pool, onePlan(plan), newClock(t0))
	p := user(t)
	names, limits := positional(s.cfg)
	old := func(session string) ([]string, int64) {
		t.Helper()
		var reasons []string
		var granted int64
		if err := pool.QueryRow(ctx, oldVoiceSQL, s.clockArg(), p.UserID, "p", names, limits,
			session, int64(MinVoiceS), int64(noCapVoiceS), int64(voiceGraceS), int64(0)).Scan(&reasons, &granted); err != nil {
			t.Fatal(err)
		}
		return reasons, granted
	}
	if reasons, granted := old("vs_old1"); len(reasons) != 0 || granted != 400 {
		t.Fatalf("old replica's start: got %v, %d s; want admitted for the session cap, 400 s", reasons, granted)
	}
	_, err := s.ReserveVoice(ctx, p, "vs_new1")
	var active *ActiveSessionError
	if !errors.As(err, &active) || active.SessionID != "vs_old1" {
		t.Fatalf("this release's start beside the old one's session: got %v, want the active session vs_old1", err)
	}
	if _, err := s.SettleVoice(ctx, p.UserID, "vs_old1", 100); err != nil {
		t.Fatal(err)
	}
	r, err := s.ReserveVoice(ctx, p, "vs_new2")
	if err != nil {
		t.Fatal(err)
	}
	if r.Seconds != 400 || r.Quota.SecondsUsed != 500 {
		t.Fatalf("after the old session charged 100 s: got %d s granted, %d used; want 400, 500", r.Seconds, r.Quota.SecondsUsed)
	}
	if reasons, _ := old("vs_old2"); !slices.Equal(reasons, []string{"voice_sessions"}) {
		t.Fatalf("old replica beside this release's session: got %v, want voice_sessions", reasons)
	}
}
