package quota

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
)

// TestBadAmounts: negative or absurd estimates, usages and seconds are
// refused before any database work.
func TestBadAmounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustService(t, testPool(t), onePlan(config.Plan{}), newClock(t0))
	p := user(t)
	tk := mustAdmit(t, s, p, Estimate{})
	tests := []struct {
		name string
		call func() error
	}{
		{"negative tokens", func() error { _, err := s.Admit(ctx, p, Estimate{Tokens: -1}); return err }},
		{"negative cost", func() error { _, err := s.Admit(ctx, p, Estimate{CostMicros: -5}); return err }},
		{"negative calls", func() error { _, err := s.Admit(ctx, p, Estimate{Calls: math.MinInt64}); return err }},
		{"absurd tokens", func() error { _, err := s.Admit(ctx, p, Estimate{Tokens: MaxAmount + 1}); return err }},
		{"max int64", func() error { _, err := s.Admit(ctx, p, Estimate{CostMicros: math.MaxInt64}); return err }},
		{"negative usage", func() error { _, err := tk.Settle(ctx, Usage{Tokens: -1}); return err }},
		{"absurd usage", func() error { _, err := tk.Settle(ctx, Usage{Calls: math.MaxInt64}); return err }},
		{"negative voice seconds", func() error { _, err := s.SettleVoice(ctx, p.UserID, "x", -1); return err }},
	}
	for _, tc := range tests {
		err := tc.call()
		if !errors.Is(err, ErrInvalidAmount) {
			t.Errorf("%s: got %v, want ErrInvalidAmount", tc.name, err)
		}
	}
	// The refused settlements left the ticket open.
	if _, err := tk.Settle(ctx, Usage{Tokens: 1}); err != nil {
		t.Errorf("a valid settlement after refused ones: %v", err)
	}
	if _, err := s.Admit(ctx, auth.Principal{}, Estimate{}); apierr.CodeOf(err) != apierr.Unauthorized {
		t.Errorf("no user: got %v, want UNAUTHORIZED", err)
	}
}

// TestNearInt64Limits: counters already near the int64 maximum neither
// overflow nor fail: checks compare in numeric, settlements saturate.
func TestNearInt64Limits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
	s := mustService(t, pool, onePlan(config.Plan{TokensPerDay: MaxAmount}), newClock(t0))
	unlimited := mustService(t, pool, onePlan(config.Plan{}), newClock(t0))
	p := user(t)
	mustAdmit(t, s, p, Estimate{}) // creates the row for today
	if _, err := pool.Exec(ctx, `UPDATE quota_users SET day_tokens = $2, day_cost = $2 WHERE user_id = $1`,
		p.UserID, int64(math.MaxInt64-5)); err != nil {
		t.Fatal(err)
	}
	_, err := s.Admit(ctx, p, Estimate{Tokens: MaxAmount})
	wantDenied(t, err, apierr.QuotaExceeded, ReasonTokens, toMidnight)

	tk := mustAdmit(t, unlimited, p, Estimate{Tokens: MaxAmount, CostMicros: MaxAmount})
	d, err := tk.Settle(ctx, Usage{Tokens: MaxAmount, CostMicros: MaxAmount})
	if err != nil {
		t.Fatalf("settle near the int64 maximum: %v", err)
	}
	if d.Tokens != math.MaxInt64 || d.CostMicros != math.MaxInt64 {
		t.Errorf("got %d tokens, %d cost; want both saturated at MaxInt64", d.Tokens, d.CostMicros)
	}
	if _, err := unlimited.Report(ctx, p); err != nil {
		t.Errorf("report of saturated counters: %v", err)
	}
}

// TestNewChecksParams: a bad quota config fails at startup.
func TestNewChecksParams(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	tests := []struct {
		name string
		cfg  config.Quota
		want string
	}{
		{"unknown default plan", config.Quota{DefaultPlan: "gold", Plans: map[string]config.Plan{"free": {}}}, `"gold" is not a configured plan`},
		{"no plans", config.Quota{DefaultPlan: "free"}, "at least one plan"},
		{"bad plan name", config.Quota{DefaultPlan: "free", Plans: map[string]config.Plan{"free": {}, "Pro Plan": {}}}, "plan name"},
		{"negative limit", onePlan(config.Plan{TokensPerDay: -1}), "tokens_per_day"},
		{"absurd limit", onePlan(config.Plan{RequestsPerMinute: math.MaxInt64}), "requests_per_minute"},
		{"negative global cap", config.Quota{DefaultPlan: "p", Plans: map[string]config.Plan{"p": {}}, GlobalRequestsPerMinute: -1}, "global_requests_per_minute"},
	}
	for _, tc := range tests {
		_, err := New(Params{Pool: pool, Config: tc.cfg})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error mentioning %q", tc.name, err, tc.want)
		}
	}
	if _, err := New(Params{Config: config.DefaultQuota()}); err == nil {
		t.Error("no pool: got nil error")
	}
	cfg := config.DefaultQuota()
	cfg.Plans["bench"] = config.BenchPlan()
	if _, err := New(Params{Pool: pool, Config: cfg}); err != nil {
		t.Errorf("defaults with bench: %v", err)
	}
}
