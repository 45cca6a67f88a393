package quota

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// clock is a settable clock shared by the services of one test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock(t time.Time) *clock { return &clock{t: t} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// t0 is 10:00:20.5 UTC on 15 May: the minute ends in 39.5 s, the hour in
// 3579.5 s, the day at midnight, the month on 1 June.
var t0 = time.Date(2030, 5, 15, 10, 0, 20, 500_000_000, time.UTC)

// onePlan is a config with one plan, "p", as the default.
func onePlan(p config.Plan) config.Quota {
	return config.Quota{DefaultPlan: "p", Plans: map[string]config.Plan{"p": p}}
}

func mustService(t testing.TB, pool *pgxpool.Pool, cfg config.Quota, clk *clock) *Service {
	t.Helper()
	p := Params{Pool: pool, Config: cfg}
	if clk != nil {
		p.Now = clk.Now
	}
	s, err := New(p)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// user is a principal with a fresh random id, so tests sharing a database
// never share counters.
func user(t testing.TB) auth.Principal {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return auth.Principal{UserID: "u-" + hex.EncodeToString(b)}
}

func mustAdmit(t testing.TB, s *Service, p auth.Principal, est Estimate) *Ticket {
	t.Helper()
	tk, err := s.Admit(context.Background(), p, est)
	if err != nil {
		t.Fatalf("Admit(%s, %+v): %v", p.UserID, est, err)
	}
	return tk
}

// wantDenied checks err is a refusal with code, limit and retry seconds.
func wantDenied(t testing.TB, err error, code apierr.Code, limit string, retry int) {
	t.Helper()
	var e *apierr.Error
	if !errors.As(err, &e) {
		t.Fatalf("got error %v, want %s", err, code)
	}
	if e.Code != code {
		t.Errorf("got code %s, want %s (%v)", e.Code, code, err)
	}
	if got := e.Fields["limit"]; got != limit {
		t.Errorf("got limit %v, want %s", got, limit)
	}
	if e.RetryAfter != retry {
		t.Errorf("got retry_after_s %d, want %d", e.RetryAfter, retry)
	}
}

func testPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return pgtest.Pool(t)
}
