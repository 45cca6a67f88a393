package quota

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
)

// Seconds from t0 to the end of its day and month.
const (
	toMidnight  = 13*3600 + 59*60 + 40 // ceil(13:59:39.5)
	toNextMonth = 16*86400 + toMidnight
)

// TestLimitKinds takes each limit kind under, at and past its limit, then
// rolls the window with the clock and expects admission again.
func TestLimitKinds(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	ctx := context.Background()
	nextDay := time.Date(2030, 5, 16, 0, 0, 0, 0, time.UTC)

	// chatWindow admits n turns (settling each with use), expects the next
	// to be refused, moves the clock to roll and expects admission.
	chatWindow := func(n int, est Estimate, use Usage, code apierr.Code, limit string, retry int, roll time.Time) func(*testing.T, *Service, *clock, auth.Principal) {
		return func(t *testing.T, s *Service, clk *clock, p auth.Principal) {
			for i := range n {
				tk := mustAdmit(t, s, p, est)
				if _, err := tk.Settle(ctx, use); err != nil {
					t.Fatalf("settle %d: %v", i, err)
				}
			}
			_, err := s.Admit(ctx, p, est)
			wantDenied(t, err, code, limit, retry)
			clk.Set(roll)
			mustAdmit(t, s, p, est)
		}
	}
	one := Estimate{Tokens: 1, CostMicros: 1, Calls: 1}
	tests := []struct {
		name   string
		plan   config.Plan
		global int64
		start  time.Time
		run    func(*testing.T, *Service, *clock, auth.Principal)
	}{
		{name: "requests per minute", plan: config.Plan{RequestsPerMinute: 2},
			run: chatWindow(2, one, Usage{}, apierr.RateLimited, ReasonMinute, 40, t0.Truncate(time.Minute).Add(time.Minute))},
		{name: "requests per hour", plan: config.Plan{RequestsPerHour: 2},
			run: chatWindow(2, one, Usage{}, apierr.RateLimited, ReasonHour, 3580, t0.Truncate(time.Hour).Add(time.Hour))},
		{name: "requests per day", plan: config.Plan{RequestsPerDay: 2},
			run: chatWindow(2, one, Usage{}, apierr.RateLimited, ReasonDay, toMidnight, nextDay)},
		{name: "tokens per day", plan: config.Plan{TokensPerDay: 100},
			run: chatWindow(2, Estimate{Tokens: 50}, Usage{Tokens: 50}, apierr.QuotaExceeded, ReasonTokens, toMidnight, nextDay)},
		{name: "cost per day", plan: config.Plan{CostPerDayMicros: 100},
			run: chatWindow(2, Estimate{CostMicros: 50}, Usage{CostMicros: 50}, apierr.QuotaExceeded, ReasonCost, toMidnight, nextDay)},
		{name: "calls per day", plan: config.Plan{CallsPerDay: 4},
			run: chatWindow(2, Estimate{Calls: 2}, Usage{Calls: 2}, apierr.QuotaExceeded, ReasonCalls, toMidnight, nextDay)},
		{name: "global requests per minute", plan: config.Plan{}, global: 2,
			// Its own minute: the global window is shared by every user of
			// the database.
			start: t0.AddDate(1, 0, 0),
			run: func(t *testing.T, s *Service, clk *clock, _ auth.Principal) {
				mustAdmit(t, s, user(t), one)
				mustAdmit(t, s, user(t), one)
				_, err := s.Admit(ctx, user(t), one)
				wantDenied(t, err, apierr.Unavailable, ReasonGlobal, 40)
				clk.Add(40 * time.Second)
				mustAdmit(t, s, user(t), one)
			}},
		{name: "concurrent turns", plan: config.Plan{ConcurrentTurns: 1},
			run: func(t *testing.T, s *Service, _ *clock, p auth.Principal) {
				tk := mustAdmit(t, s, p, one)
				_, err := s.Admit(ctx, p, one)
				wantDenied(t, err, apierr.ConcurrentLimit, ReasonConcurrent, inflightRetry)
				if err := tk.Release(ctx); err != nil {
					t.Fatal(err)
				}
				mustAdmit(t, s, p, one)
			}},
		{name: "voice seconds per month", plan: config.Plan{VoiceSecondsPerMonth: 100, MaxSessionSeconds: 60},
			run: func(t *testing.T, s *Service, clk *clock, p auth.Principal) {
				for i, want := range []int64{60, 40} {
					r, err := s.ReserveVoice(ctx, p, p.UserID+"-s"+string(rune('a'+i)))
					if err != nil {
						t.Fatalf("reserve %d: %v", i, err)
					}
					if r.Seconds != want {
						t.Errorf("reserve %d: got %d s, want %d", i, r.Seconds, want)
					}
				}
				_, err := s.ReserveVoice(ctx, p, p.UserID+"-sc")
				wantDenied(t, err, apierr.QuotaExceeded, ReasonVoiceSeconds, toNextMonth)
				clk.Set(time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC))
				r, err := s.ReserveVoice(ctx, p, p.UserID+"-sd")
				if err != nil || r.Seconds != 60 {
					t.Fatalf("next month: got %+v, %v; want 60 s", r, err)
				}
			}},
		{name: "voice below the 10 s minimum", plan: config.Plan{VoiceSecondsPerMonth: 69, MaxSessionSeconds: 60},
			run: func(t *testing.T, s *Service, _ *clock, p auth.Principal) {
				if _, err := s.ReserveVoice(ctx, p, p.UserID+"-a"); err != nil {
					t.Fatal(err)
				}
				_, err := s.ReserveVoice(ctx, p, p.UserID+"-b") // 9 s left
				wantDenied(t, err, apierr.QuotaExceeded, ReasonVoiceSeconds, toNextMonth)
				if _, err := s.SettleVoice(ctx, p.UserID, p.UserID+"-a", 59); err != nil {
					t.Fatal(err)
				}
				r, err := s.ReserveVoice(ctx, p, p.UserID+"-c") // 10 s left
				if err != nil || r.Seconds != 10 {
					t.Fatalf("got %+v, %v; want 10 s", r, err)
				}
			}},
		{name: "voice sessions", plan: config.Plan{MaxSessionSeconds: 60, VoiceSessions: 1},
			run: func(t *testing.T, s *Service, _ *clock, p auth.Principal) {
				if _, err := s.ReserveVoice(ctx, p, p.UserID+"-a"); err != nil {
					t.Fatal(err)
				}
				_, err := s.ReserveVoice(ctx, p, p.UserID+"-b")
				wantDenied(t, err, apierr.ConcurrentLimit, ReasonVoiceActive, inflightRetry)
				var active *ActiveSessionError
				if !errors.As(err, &active) || active.SessionID != p.UserID+"-a" {
					t.Errorf("got %v, want an ActiveSessionError naming %s-a", err, p.UserID)
				}
				if got := apierr.From(err).Fields["session_id"]; got != p.UserID+"-a" {
					t.Errorf("got session_id %v, want the active session %s-a", got, p.UserID)
				}
				if _, err := s.SettleVoice(ctx, p.UserID, p.UserID+"-a", 5); err != nil {
					t.Fatal(err)
				}
				if _, err := s.ReserveVoice(ctx, p, p.UserID+"-b"); err != nil {
					t.Fatalf("after the first ended: %v", err)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := tc.start
			if start.IsZero() {
				start = t0
			}
			clk := newClock(start)
			cfg := onePlan(tc.plan)
			cfg.GlobalRequestsPerMinute = tc.global
			tc.run(t, mustService(t, pool, cfg, clk), clk, user(t))
		})
	}
}

// TestRefusalCountsNothing: a request refused by one limit leaves every
// other counter as it was.
func TestRefusalCountsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustService(t, testPool(t), onePlan(config.Plan{RequestsPerMinute: 100, TokensPerDay: 10}), newClock(t0))
	p := user(t)
	mustAdmit(t, s, p, Estimate{Tokens: 10})
	for range 5 {
		_, err := s.Admit(ctx, p, Estimate{Tokens: 1})
		wantDenied(t, err, apierr.QuotaExceeded, ReasonTokens, inflightRetry)
	}
	r, err := s.Report(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Usage[ReasonMinute].Used; got != 1 {
		t.Errorf("got %d requests this minute, want 1 (refusals count nothing)", got)
	}
	if got := r.Usage[ReasonTokens].Used; got != 10 {
		t.Errorf("got %d tokens used (reserved), want 10", got)
	}
}

// TestLongestWaitWins: when several limits refuse, the error names the
// one that frees up last.
func TestLongestWaitWins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustService(t, testPool(t), onePlan(config.Plan{RequestsPerMinute: 1, RequestsPerHour: 1, ConcurrentTurns: 1}), newClock(t0))
	p := user(t)
	mustAdmit(t, s, p, Estimate{})
	_, err := s.Admit(ctx, p, Estimate{})
	wantDenied(t, err, apierr.RateLimited, ReasonHour, 3580)
}
