package quota

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/config"
)

// A keyed voice start (ReserveVoiceKeyed) whose reservation committed and
// whose reply was lost (its reservation untaken, as the caller never got
// it) is answered on retry with that reservation: the first attempt's
// session, counted once. While a start holds its key the key is CONFLICT;
// once the session ends the key is free. Starts raced with one key give
// one reservation.
func TestKeyedVoiceStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := newClock(t0)
	svcs := replicas(t, onePlan(config.Plan{VoiceSessions: 1, VoiceSecondsPerMonth: 3600, MaxSessionSeconds: 600}), clk)
	s := svcs[0]
	p := user(t)
	counted := func() (requests, reservations int64) {
		t.Helper()
		if err := s.pool.QueryRow(ctx, `SELECT (SELECT day_requests FROM quota_users WHERE user_id = $1),
			(SELECT count(*) FROM quota_voice WHERE user_id = $1)`, p.UserID).Scan(&requests, &reservations); err != nil {
			t.Fatal(err)
		}
		return requests, reservations
	}

	first, err := s.ReserveVoiceKeyed(ctx, p, "vs_first", "start-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReserveVoiceKeyed(ctx, p, "vs_second", "start-1"); !errors.Is(err, ErrKeyInUse) || apierr.CodeOf(err) != apierr.Conflict {
		t.Fatalf("the key while its start holds it: got %v, want CONFLICT (ErrKeyInUse)", err)
	}
	// The reply lost: nobody took the reservation.
	if _, err := s.pool.Exec(ctx, `UPDATE quota_voice SET admit_taken = false WHERE session_id = 'vs_first'`); err != nil {
		t.Fatal(err)
	}
	again, err := s.ReserveVoiceKeyed(ctx, p, "vs_retry", "start-1")
	if err != nil {
		t.Fatalf("the retry: got %v, want the first start's reservation", err)
	}
	if again.SessionID != "vs_first" || again.Seconds != first.Seconds {
		t.Fatalf("the retry: got session %s, %d s; want vs_first, %d s", again.SessionID, again.Seconds, first.Seconds)
	}
	if r, n := counted(); r != 1 || n != 1 {
		t.Fatalf("after the retry: got %d requests, %d reservations; want 1 and 1", r, n)
	}
	if _, err := s.SettleVoice(ctx, p.UserID, "vs_first", 30); err != nil {
		t.Fatal(err)
	}
	next, err := s.ReserveVoiceKeyed(ctx, p, "vs_next", "start-1")
	if err != nil || next.SessionID != "vs_next" {
		t.Fatalf("the key after its session ended: got %v, %v; want a new start, vs_next", next, err)
	}
	if r, _ := counted(); r != 2 {
		t.Fatalf("after a new start with the key: got %d requests, want 2", r)
	}
	if _, err := s.SettleVoice(ctx, p.UserID, "vs_next", 0); err != nil {
		t.Fatal(err)
	}

	for round := range rounds {
		key := fmt.Sprintf("race-%d", round)
		got := race(t, svcs, 6, apierr.Conflict, func(s *Service, i int) (bool, error) {
			r, err := s.ReserveVoiceKeyed(ctx, p, fmt.Sprintf("vs_r%d_%d", round, i), key)
			return err == nil && r != nil, err
		})
		if got != 1 {
			t.Fatalf("round %d: %d starts with one key admitted, want 1", round, got)
		}
		var id string
		if err := s.pool.QueryRow(ctx, `SELECT session_id FROM quota_voice WHERE user_id = $1`, p.UserID).Scan(&id); err != nil {
			t.Fatalf("round %d: want one reservation: %v", round, err)
		}
		if _, err := s.SettleVoice(ctx, p.UserID, id, 0); err != nil {
			t.Fatal(err)
		}
	}
}
