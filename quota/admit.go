package quota

import (
	"context"
	"fmt"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
)

// Estimate is what a chat turn is expected to use at most; it is reserved
// against the daily limits until the turn settles.
type Estimate struct {
	Tokens     int64
	CostMicros int64
	Calls      int64 // provider calls; a tool loop makes several
	// Key, when set, keys the reservation (key.go): the client's
	// Idempotency-Key. "" is an unkeyed request.
	Key string
}

// Usage is what a turn actually used.
type Usage struct {
	Tokens     int64
	CostMicros int64
	Calls      int64
}

// Daily is a user's UTC-day counters as one admission or settlement left
// them: settled usage and the reservations of turns still in flight.
type Daily struct {
	Requests       int64
	Calls          int64
	Tokens         int64
	CostMicros     int64
	ReservedCalls  int64
	ReservedTokens int64
	ReservedCost   int64
}

// Admit admits one chat turn for p, or refuses it with a DESIGN §5 error:
// RATE_LIMITED (a request window), CONCURRENT_LIMIT (turns in flight),
// QUOTA_EXCEEDED (daily tokens, cost or calls) or UNAVAILABLE (the global
// cap), each with RetryAfter. A refusal counts nothing. The returned ticket
// holds a concurrency lease and the reservation of est: keep it alive with
// KeepAlive and end it with Settle (or Release).
//
// Concurrent calls share one statement (see batch.go); each is decided on
// its own, in one round trip's time.
//
// Riders queue statements that travel with this admission and run only if
// it admits (rider.go).
//
// With est.Key set, a retry of a request whose admission committed but
// whose answer was lost gets that admission's ticket, counted once; while
// another attempt with the key holds its ticket, the request is refused
// with CONFLICT wrapping ErrKeyInUse (key.go).
func (s *Service) Admit(ctx context.Context, p auth.Principal, est Estimate, riders ...Rider) (*Ticket, error) {
	if p.UserID == "" {
		return nil, apierr.New(apierr.Unauthorized, "")
	}
	if err := checkUserID(p.UserID); err != nil {
		return nil, err
	}
	if err := checkAmounts("estimate", est.Tokens, est.CostMicros, est.Calls); err != nil {
		return nil, err
	}
	if est.Key != "" {
		if err := CheckKey(est.Key); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil { // gone already: do not start a batch for it
		s.metrics.admissions.WithLabelValues("chat", "error").Inc()
		return nil, dbError("admit", err)
	}
	start := time.Now()
	ctx, span := tracer.Start(ctx, "quota admit")
	defer span.End()
	c := &admitCall{userID: p.UserID, fallback: s.fallbackPlan(p), est: est, riders: riders}
	ok := s.admits.admit(ctx, c)
	s.metrics.latency.WithLabelValues("chat").Observe(time.Since(start).Seconds())
	defer func() { traceAdmission(span, c, ok) }()
	if !ok {
		s.metrics.admissions.WithLabelValues("chat", "error").Inc()
		return nil, dbError("admit", ctx.Err())
	}
	if c.err != nil {
		s.metrics.admissions.WithLabelValues("chat", "error").Inc()
		return nil, dbError("admit", c.err)
	}
	if len(c.reasons) == 1 && c.reasons[0] == reasonKeyInUse {
		s.metrics.admissions.WithLabelValues("chat", "denied").Inc()
		return nil, errKeyInUse()
	}
	if len(c.reasons) > 0 || c.ticketID == 0 {
		s.metrics.admissions.WithLabelValues("chat", "denied").Inc()
		return nil, s.refuse(c.w, c.plan, "chat", c.reasons)
	}
	if est.Key != "" {
		if err := s.take(ctx, c); err != nil {
			s.metrics.admissions.WithLabelValues("chat", "error").Inc()
			return nil, err
		}
	}
	s.metrics.admissions.WithLabelValues("chat", "admitted").Inc()
	return &Ticket{
		svc: s, ID: c.ticketID, UserID: p.UserID, Plan: c.plan, Limits: s.cfg.Plans[c.plan],
		Reserved: est, Daily: c.daily, expiresAt: c.w.now.Add(LeaseTTL),
	}, nil
}

// checkUserID refuses an id that is not a valid token subject (auth's one
// rule): ids are index keys, and one PostgreSQL refuses would fail the
// whole batch it travels in. Such an id is a caller's bug.
func checkUserID(id string) error {
	if !auth.ValidSubject(id) {
		return apierr.Wrap(apierr.Internal, "", fmt.Errorf("quota: user id of %d bytes is not a usable key", len(id)))
	}
	return nil
}
