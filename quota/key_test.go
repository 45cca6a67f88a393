package quota

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
)

// dayOf is what the database holds for p: requests counted today, tickets
// held, leases and reserved tokens.
func dayOf(t *testing.T, s *Service, p auth.Principal) (requests, tickets, leases, resTokens int64) {
	t.Helper()
	if err := s.pool.QueryRow(context.Background(), `SELECT
		(SELECT coalesce(sum(day_requests), 0) FROM quota_users WHERE user_id = $1),
		(SELECT count(*) FROM quota_tickets WHERE user_id = $1),
		(SELECT coalesce(sum(leases), 0) FROM quota_users WHERE user_id = $1),
		(SELECT coalesce(sum(res_tokens), 0) FROM quota_users WHERE user_id = $1)`, p.UserID).
		Scan(&requests, &tickets, &leases, &resTokens); err != nil {
		t.Fatal(err)
	}
	return requests, tickets, leases, resTokens
}

// TestOneKeyRacedGivesOneTicket: requests sent at once by one user with
// one key, over three replicas, are one request: exactly one is admitted,
// the others are refused with CONFLICT (the key is in use), and the user
// has one ticket, one lease and one request counted. Another user's
// identical key is another request.
func TestOneKeyRacedGivesOneTicket(t *testing.T) {
	t.Parallel()
	clk := newClock(t0)
	svcs := replicas(t, onePlan(config.Plan{RequestsPerDay: 1000, ConcurrentTurns: 5}), clk)
	ctx := context.Background()
	for round := range rounds {
		alice, bob := user(t), user(t)
		est := Estimate{Tokens: 100, Calls: 1, Key: "same-key"}
		tickets := make([]*Ticket, 8)
		got := race(t, svcs, len(tickets), apierr.Conflict, func(s *Service, i int) (bool, error) {
			tk, err := s.Admit(ctx, alice, est)
			if err != nil && !errors.Is(err, ErrKeyInUse) && apierr.CodeOf(err) == apierr.Conflict {
				t.Errorf("attempt %d: CONFLICT without ErrKeyInUse: %v", i, err)
			}
			tickets[i] = tk
			return err == nil, err
		})
		if got != 1 {
			t.Fatalf("round %d: %d attempts with one key admitted, want 1", round, got)
		}
		if r, tk, l, res := dayOf(t, svcs[0], alice); r != 1 || tk != 1 || l != 1 || res != 100 {
			t.Fatalf("round %d: got %d requests, %d tickets, %d leases, %d tokens reserved; want 1, 1, 1, 100", round, r, tk, l, res)
		}
		other := mustAdmit(t, svcs[1], bob, est)
		if r, tk, _, _ := dayOf(t, svcs[0], bob); r != 1 || tk != 1 {
			t.Fatalf("round %d: bob with alice's key: got %d requests, %d tickets; want 1 and 1", round, r, tk)
		}
		for _, tk := range tickets {
			if tk != nil && tk.ID == other.ID {
				t.Fatalf("round %d: bob's key gave alice's ticket %d", round, tk.ID)
			}
		}
	}
}

// TestKeyLivesAsLongAsItsTicket: a key in use is refused (CONFLICT,
// counting nothing) while its ticket runs; once the ticket is settled, or
// its lease lapses unrenewed and is reclaimed, the key is free and a
// request with it is a new one, counted (docs/quota.md).
func TestKeyLivesAsLongAsItsTicket(t *testing.T) {
	t.Parallel()
	clk := newClock(t0)
	s := mustService(t, testPool(t), onePlan(config.Plan{RequestsPerDay: 10, ConcurrentTurns: 2}), clk)
	ctx := context.Background()
	p := user(t)
	est := Estimate{Tokens: 10, Calls: 1, Key: "k1"}

	first := mustAdmit(t, s, p, est)
	if _, err := s.Admit(ctx, p, est); !errors.Is(err, ErrKeyInUse) || apierr.CodeOf(err) != apierr.Conflict {
		t.Fatalf("the key while its ticket runs: got %v, want CONFLICT (ErrKeyInUse)", err)
	}
	if waiting, err := s.KeyAwaitsRetry(ctx, p.UserID, "k1"); err != nil || waiting {
		t.Fatalf("KeyAwaitsRetry on a taken ticket: got %v, %v; want false", waiting, err)
	}
	if r, tk, _, _ := dayOf(t, s, p); r != 1 || tk != 1 {
		t.Fatalf("after the refusal: got %d requests, %d tickets; want 1 and 1", r, tk)
	}
	if _, err := first.Settle(ctx, Usage{Tokens: 5, Calls: 1}); err != nil {
		t.Fatal(err)
	}
	second := mustAdmit(t, s, p, est)
	if second.ID == first.ID || second.Daily.Requests != 2 {
		t.Fatalf("the key after its ticket settled: got ticket %d (first %d), %d requests; want a new ticket, 2 requests",
			second.ID, first.ID, second.Daily.Requests)
	}
	clk.Add(LeaseTTL + 1)
	third := mustAdmit(t, s, p, est)
	if third.ID == second.ID || third.Daily.Requests != 3 || third.Daily.ReservedTokens != 10 {
		t.Fatalf("the key after its lease lapsed: got ticket %d (before %d), day %+v; want a new ticket, 3 requests, 10 reserved",
			third.ID, second.ID, third.Daily)
	}
	// Unkeyed requests beside it are not touched by the key.
	if tk := mustAdmit(t, s, p, Estimate{}); tk.ID == third.ID {
		t.Fatal("an unkeyed request got the keyed ticket")
	}
}

// TestCheckKey: a key is 1–255 printable ASCII characters without spaces;
// anything else is the client's 400 before it reaches a batch.
func TestCheckKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, key string
		ok        bool
	}{
		{"uuid", "4f0c8a1e-2b7d-4c9a-9e3f-0a1b2c3d4e5f", true},
		{"one", "x", true},
		{"longest", strings.Repeat("k", 255), true},
		{"empty", "", false},
		{"too long", strings.Repeat("k", 256), false},
		{"space", "a b", false},
		{"nul", "a\x00b", false},
		{"non-ASCII", "clé", false},
		{"tab", "a\tb", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckKey(tc.key)
			if (err == nil) != tc.ok {
				t.Fatalf("CheckKey(%q): got %v, want ok=%v", tc.key, err, tc.ok)
			}
			if err != nil && apierr.CodeOf(err) != apierr.InvalidRequest {
				t.Fatalf("CheckKey(%q): got %v, want INVALID_REQUEST", tc.key, err)
			}
		})
	}
	s := mustService(t, testPool(t), onePlan(config.Plan{}), newClock(t0))
	if _, err := s.Admit(context.Background(), user(t), Estimate{Key: "a\x00b"}); apierr.CodeOf(err) != apierr.InvalidRequest {
		t.Fatalf("Admit with an unusable key: got %v, want INVALID_REQUEST", err)
	}
}

// prevAdmitSQL is the previous release's admission statement (before keys).
const prevAdmitSQL = `SELECT a.reasons, a.ticket_id FROM quota_clock($1) c,
	LATERAL quota_admit_requests($2::jsonb, ARRAY[$3::text], ARRAY['p'], ARRAY[0::bigint], ARRAY[$4::bigint],
		ARRAY[0::bigint], c.now, c.minute, c.hour, c.day, c.now + interval '60 seconds', 0) a`

// TestRolloutUnkeyedReplicas: replicas of the release before keys call
// quota_admit_requests without them, beside this release: one rule, one
// set of counters, and their requests are unkeyed.
func TestRolloutUnkeyedReplicas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustService(t, testPool(t), onePlan(config.Plan{RequestsPerMinute: 2}), newClock(t0))
	p := user(t)
	old := func() []string {
		t.Helper()
		var reasons []string
		var ticket *int64
		if err := s.pool.QueryRow(ctx, prevAdmitSQL, s.clockArg(), s.plans, p.UserID, int64(7)).Scan(&reasons, &ticket); err != nil {
			t.Fatal(err)
		}
		return reasons
	}
	if got := old(); len(got) != 0 {
		t.Fatalf("the previous release's admission: got refused %v, want admitted", got)
	}
	mustAdmit(t, s, p, Estimate{Key: "k"})
	if got := old(); len(got) != 1 || got[0] != "requests_per_minute" {
		t.Fatalf("the previous release's third request in the minute: got %v, want requests_per_minute", got)
	}
	if r, tk, _, res := dayOf(t, s, p); r != 2 || tk != 2 || res != 7 {
		t.Fatalf("got %d requests, %d tickets, %d tokens reserved; want 2, 2, 7", r, tk, res)
	}
}

// FuzzCheckKey: whatever the header holds, CheckKey refuses it with the
// client's 400, or the key keys an admission PostgreSQL takes (a key it
// refused would fail every admission of the batch it rides) and a second
// request with it is refused as in use.
func FuzzCheckKey(f *testing.F) {
	for _, k := range []string{"k", "4f0c8a1e-2b7d", strings.Repeat("z", 255), "a b", "\x00", "é", "~!"} {
		f.Add(k)
	}
	s := mustService(f, testPool(f), onePlan(config.Plan{}), newClock(t0))
	f.Fuzz(func(t *testing.T, key string) {
		err := CheckKey(key)
		if err != nil {
			if apierr.CodeOf(err) != apierr.InvalidRequest {
				t.Fatalf("CheckKey(%q): got %v, want INVALID_REQUEST", key, err)
			}
			return
		}
		p := user(t)
		tk, err := s.Admit(context.Background(), p, Estimate{Key: key})
		if err != nil {
			t.Fatalf("Admit with the accepted key %q: %v", key, err)
		}
		if _, err := s.Admit(context.Background(), p, Estimate{Key: key}); !errors.Is(err, ErrKeyInUse) {
			t.Fatalf("a second request with key %q: got %v, want ErrKeyInUse", key, err)
		}
		if err := tk.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}
