package quota

import (
	"context"
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

// admitSQL is one admission: one statement, one round trip.
const admitSQL = `SELECT plan, reasons, ticket_id, day_requests, day_calls, day_tokens, day_cost,
	res_calls, res_tokens, res_cost
FROM quota_admit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`

// Admit admits one chat turn for p, or refuses it with a DESIGN §5 error:
// RATE_LIMITED (a request window), CONCURRENT_LIMIT (turns in flight),
// QUOTA_EXCEEDED (daily tokens, cost or calls) or UNAVAILABLE (the global
// cap), each with RetryAfter. A refusal counts nothing. The returned ticket
// holds a concurrency lease and the reservation of est: keep it alive with
// KeepAlive and end it with Settle (or Release).
func (s *Service) Admit(ctx context.Context, p auth.Principal, est Estimate) (*Ticket, error) {
	if p.UserID == "" {
		return nil, apierr.New(apierr.Unauthorized, "")
	}
	if err := checkAmounts("estimate", est.Tokens, est.CostMicros, est.Calls); err != nil {
		return nil, err
	}
	start := time.Now()
	w := windowsAt(s.now())
	t := &Ticket{svc: s, UserID: p.UserID, Reserved: est, expiresAt: w.now.Add(LeaseTTL)}
	var reasons []string
	var id *int64
	d := &t.Daily
	err := s.pool.QueryRow(ctx, admitSQL,
		p.UserID, s.fallbackPlan(p), s.names, s.limits,
		w.now, w.minute, w.hour, w.day, w.month,
		t.expiresAt, est.Calls, est.Tokens, est.CostMicros, s.cfg.GlobalRequestsPerMinute,
	).Scan(&t.Plan, &reasons, &id, &d.Requests, &d.Calls, &d.Tokens, &d.CostMicros,
		&d.ReservedCalls, &d.ReservedTokens, &d.ReservedCost)
	s.metrics.latency.WithLabelValues("chat").Observe(time.Since(start).Seconds())
	if err != nil {
		s.metrics.admissions.WithLabelValues("chat", "error").Inc()
		return nil, dbError("admit", err)
	}
	if len(reasons) > 0 || id == nil {
		s.metrics.admissions.WithLabelValues("chat", "denied").Inc()
		return nil, s.refuse(w, "chat", reasons)
	}
	s.metrics.admissions.WithLabelValues("chat", "admitted").Inc()
	t.ID = *id
	t.Limits = s.cfg.Plans[t.Plan]
	return t, nil
}
