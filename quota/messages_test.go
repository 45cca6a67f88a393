package quota

import (
	"context"
	"errors"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/config"
)

// TestPlanRefusalMessages: a plan's message for a limit is the message
// of that limit's refusal, for chat and voice alike, with the refusal's
// code, wait and resets_at kept; a limit the plan has no message for, and
// another plan, keep the code's default.
func TestPlanRefusalMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const daily, active = "That's today's free calls. Pro has no daily limit.", "You're already on a call."
	free := config.Plan{RequestsPerDay: 1, RequestsPerHour: 5, MaxSessionSeconds: 60, VoiceSessions: 1,
		Messages: map[string]string{"requests_per_day": daily, "voice_sessions": active}}
	other := config.Plan{RequestsPerDay: 1}
	s := mustService(t, testPool(t), config.Quota{DefaultPlan: "free", Plans: map[string]config.Plan{"free": free, "other": other}}, newClock(t0))
	message := func(err error) string {
		t.Helper()
		var e *apierr.Error
		if !errors.As(err, &e) {
			t.Fatalf("got %v, want a refusal", err)
		}
		return e.Message
	}

	p := user(t)
	mustAdmit(t, s, p, Estimate{})
	_, err := s.Admit(ctx, p, Estimate{})
	wantDenied(t, err, apierr.RateLimited, ReasonDay, 50380) // t0 is 10:00:20.5; midnight is 50,379.5 s on
	var e *apierr.Error
	if errors.As(err, &e); e.Message != daily || e.Fields["resets_at"] != "2030-05-16T00:00:00Z" {
		t.Errorf("chat refusal: message %q, resets_at %v; want the plan's message and the next midnight", e.Message, e.Fields["resets_at"])
	}

	// Voice: the active session is the answer (docs/quota.md), with the
	// plan's message for it.
	v := user(t)
	if _, err := s.ReserveVoice(ctx, v, v.UserID+"-a"); err != nil {
		t.Fatal(err)
	}
	if got := message(func() error { _, err := s.ReserveVoice(ctx, v, v.UserID+"-b"); return err }()); got != active {
		t.Errorf("voice refused with a session active: message %q, want the plan's %q", got, active)
	}

	// A plan without messages, and a limit without one, keep the default.
	o := user(t)
	o.Plan = "other"
	mustAdmit(t, s, o, Estimate{})
	if got := message(func() error { _, err := s.Admit(ctx, o, Estimate{}); return err }()); got != apierr.DefaultMessage(apierr.RateLimited) {
		t.Errorf("plan without messages: %q, want the default", got)
	}
	h := user(t)
	s2 := mustService(t, testPool(t), onePlan(config.Plan{RequestsPerHour: 1, Messages: map[string]string{"requests_per_day": daily}}), newClock(t0))
	mustAdmit(t, s2, h, Estimate{})
	if got := message(func() error { _, err := s2.Admit(ctx, h, Estimate{}); return err }()); got != apierr.DefaultMessage(apierr.RateLimited) {
		t.Errorf("the hour refused, the plan has a message for the day only: %q, want the default", got)
	}
}

// TestInflightRefusalIsNotUsedUp: a daily quota that refuses only for
// what a request in flight reserved gets the code's default message and
// no resets_at (it frees when that request settles), not the plan's
// "used up" words; once the quota is spent, the plan's message and the
// reset time come back.
func TestInflightRefusalIsNotUsedUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const used = "You've used today's tokens."
	s := mustService(t, testPool(t), onePlan(config.Plan{TokensPerDay: 10, Messages: map[string]string{"tokens_per_day": used}}), newClock(t0))
	p := user(t)
	a := mustAdmit(t, s, p, Estimate{Tokens: 10})
	_, err := s.Admit(ctx, p, Estimate{Tokens: 1})
	wantDenied(t, err, apierr.QuotaExceeded, ReasonTokens, inflightRetry)
	var e *apierr.Error
	if errors.As(err, &e); e.Message == used || e.Fields["resets_at"] != nil {
		t.Errorf("refused in flight: message %q, resets_at %v; want the default and none", e.Message, e.Fields["resets_at"])
	}
	if _, err := a.Settle(ctx, Usage{Tokens: 10}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Admit(ctx, p, Estimate{Tokens: 1})
	if errors.As(err, &e); e == nil || e.Message != used || e.Fields["resets_at"] == nil {
		t.Errorf("refused once spent: %v; want the plan's message and resets_at", err)
	}
}
