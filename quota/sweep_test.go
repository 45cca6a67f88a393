package quota

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/voxgate/voxgate/internal/config"
)

func count(t *testing.T, s *Service, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := s.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSweep: the cleanup reclaims expired leases and voice reservations,
// drops past global windows and idle user rows, and leaves live ones.
func TestSweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := newClock(t0)
	cfg := onePlan(config.Plan{ConcurrentTurns: 5, TokensPerDay: 1000, MaxSessionSeconds: 60, VoiceSecondsPerMonth: 1000})
	cfg.GlobalRequestsPerMinute = 1000
	s := mustService(t, testPool(t), cfg, clk)
	gone, live, idle := user(t), user(t), user(t)
	for range 3 {
		mustAdmit(t, s, gone, Estimate{Tokens: 10})
	}
	if _, err := s.ReserveVoice(ctx, gone, "v-gone"); err != nil {
		t.Fatal(err)
	}
	clk.Add(LeaseTTL + voiceGraceS*time.Second + time.Minute)
	keep := mustAdmit(t, s, live, Estimate{Tokens: 10})
	if err := s.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, `SELECT count(*) FROM quota_tickets WHERE user_id = $1`, gone.UserID); n != 0 {
		t.Errorf("got %d expired tickets left, want 0", n)
	}
	if n := count(t, s, `SELECT leases + res_tokens FROM quota_users WHERE user_id = $1`, gone.UserID); n != 0 {
		t.Errorf("got %d leases+reserved left, want 0", n)
	}
	if n := count(t, s, `SELECT voice_used FROM quota_users WHERE user_id = $1`, gone.UserID); n != 60 {
		t.Errorf("got %d voice seconds charged, want 60 (the expired reservation in full)", n)
	}
	if n := count(t, s, `SELECT count(*) FROM quota_tickets WHERE id = $1`, keep.ID); n != 1 {
		t.Errorf("got %d live tickets, want 1", n)
	}
	if n := count(t, s, `SELECT count(*) FROM quota_global WHERE window_start < $1`, clk.Now().Truncate(time.Minute)); n != 0 {
		t.Errorf("got %d past global windows, want 0", n)
	}

	// A user idle since last month is deleted; one with a live lease is not.
	tk := mustAdmit(t, s, idle, Estimate{})
	if err := tk.Release(ctx); err != nil {
		t.Fatal(err)
	}
	clk.Add(31 * 24 * time.Hour)
	mustAdmit(t, s, live, Estimate{}) // keeps the live user's row current
	if err := s.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, `SELECT count(*) FROM quota_users WHERE user_id = $1`, idle.UserID); n != 0 {
		t.Errorf("got %d rows for the idle user, want 0", n)
	}
	if n := count(t, s, `SELECT count(*) FROM quota_users WHERE user_id = $1`, live.UserID); n != 1 {
		t.Errorf("got %d rows for the live user, want 1", n)
	}
}

// TestRunStops: Run returns once its context is done.
func TestRunStops(t *testing.T) {
	t.Parallel()
	s := mustService(t, testPool(t), config.DefaultQuota(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

// TestMetrics: admissions by outcome, denials by reason, latency.
func TestMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	s, err := New(Params{Pool: testPool(t), Config: onePlan(config.Plan{RequestsPerMinute: 1}), Now: newClock(t0).Now, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	p := user(t)
	mustAdmit(t, s, p, Estimate{})
	if _, err := s.Admit(context.Background(), p, Estimate{}); err == nil {
		t.Fatal("second admission: got nil error")
	}
	if got := testutil.ToFloat64(s.metrics.admissions.WithLabelValues("chat", "admitted")); got != 1 {
		t.Errorf("got %v admitted, want 1", got)
	}
	if got := testutil.ToFloat64(s.metrics.denials.WithLabelValues("chat", ReasonMinute)); got != 1 {
		t.Errorf("got %v denials, want 1", got)
	}
	n, err := testutil.GatherAndCount(reg, "voxgate_quota_admission_duration_seconds")
	if err != nil || n != 1 {
		t.Errorf("got %d latency series (%v), want 1", n, err)
	}
	// A second Service on the same registry shares the collectors.
	if _, err := New(Params{Pool: s.pool, Config: s.cfg, Registerer: reg}); err != nil {
		t.Errorf("second service on one registry: %v", err)
	}
}
