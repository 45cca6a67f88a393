package quota

import (
	"context"
	"errors"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/config"
)

func TestVoiceSettlement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testPool(t)
	plan := onePlan(config.Plan{VoiceSecondsPerMonth: 1000, MaxSessionSeconds: 300, VoiceSessions: 1})

	tests := []struct {
		name        string
		used        int64
		wantCharged int64
	}{
		{"shorter than the reservation", 120, 120},
		{"longer is capped at the reservation", 500, 300},
		{"zero", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := mustService(t, pool, plan, newClock(t0))
			p := user(t)
			r, err := s.ReserveVoice(ctx, p, p.UserID+"-a")
			if err != nil {
				t.Fatal(err)
			}
			if r.Seconds != 300 || r.Quota.SecondsUsed != 300 || *r.Quota.SecondsRemaining != 700 {
				t.Errorf("got %+v, want 300 s reserved, 300 used, 700 remaining", r)
			}
			got, err := s.SettleVoice(ctx, p.UserID, r.SessionID, tc.used)
			if err != nil {
				t.Fatal(err)
			}
			if got.Charged != tc.wantCharged || got.Released != 300-tc.wantCharged || got.MonthUsed != tc.wantCharged {
				t.Errorf("got %+v, want %d charged", got, tc.wantCharged)
			}
			again, err := s.SettleVoice(ctx, p.UserID, r.SessionID, tc.used+1)
			if err != nil {
				t.Fatal(err)
			}
			if want := got; !again.Replayed || again.Charged != want.Charged || again.MonthUsed != want.MonthUsed {
				t.Errorf("second end: got %+v, want the first end's figures %+v, replayed", again, want)
			}
			rep, err := s.Report(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if u := rep.Usage[ReasonVoiceSeconds]; u.Used != tc.wantCharged || *u.Remaining != 1000-tc.wantCharged {
				t.Errorf("got report %+v, want %d used", u, tc.wantCharged)
			}
		})
	}

	t.Run("never ended is charged in full after expiry", func(t *testing.T) {
		t.Parallel()
		clk := newClock(t0)
		s := mustService(t, pool, plan, clk)
		p := user(t)
		r, err := s.ReserveVoice(ctx, p, p.UserID+"-a")
		if err != nil {
			t.Fatal(err)
		}
		clk.Set(r.ExpiresAt)
		r2, err := s.ReserveVoice(ctx, p, p.UserID+"-b") // the slot is free again
		if err != nil {
			t.Fatal(err)
		}
		if r2.Quota.SecondsUsed != 600 {
			t.Errorf("got %d s used, want 600 (300 charged in full + 300 reserved)", r2.Quota.SecondsUsed)
		}
		got, err := s.SettleVoice(ctx, p.UserID, r.SessionID, 10)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Reclaimed || got.Charged != 300 || got.MonthUsed != 300 {
			t.Errorf("ending the reclaimed session: got %+v, want reclaimed, 300 s charged, 300 this month", got)
		}
		if _, err := s.SettleVoice(ctx, p.UserID, p.UserID+"-never", 10); !errors.Is(err, ErrNoReservation) ||
			apierr.CodeOf(err) != apierr.SessionEnded {
			t.Errorf("ending an unknown session: got %v, want SESSION_ENDED / ErrNoReservation", err)
		}
	})
	t.Run("a session id is reserved once", func(t *testing.T) {
		t.Parallel()
		s := mustService(t, pool, onePlan(config.Plan{MaxSessionSeconds: 60}), newClock(t0))
		p := user(t)
		if _, err := s.ReserveVoice(ctx, p, p.UserID+"-a"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ReserveVoice(ctx, p, p.UserID+"-a"); apierr.CodeOf(err) != apierr.Conflict {
			t.Errorf("got %v, want CONFLICT", err)
		}
	})
}
