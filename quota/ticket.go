package quota

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/heartbeat"
)

// Ticket is one admitted chat turn: a concurrency lease and a reservation.
// It belongs to the replica running the turn.
type Ticket struct {
	ID       int64
	UserID   string
	Plan     string
	Limits   config.Plan // the plan's limits, for the turn's usage block
	Reserved Estimate
	Daily    Daily // the user's day right after admission

	svc       *Service
	mu        sync.Mutex
	expiresAt time.Time
	done      bool
}

// settleTimeout bounds a settlement that runs on after its request's
// context is gone.
const settleTimeout = 10 * time.Second

// ExpiresAt is when the lease lapses unless renewed.
func (t *Ticket) ExpiresAt() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.expiresAt
}

// Renew extends the lease to LeaseTTL from now. ErrLeaseLost means it had
// already expired: the slot may have been reclaimed and taken.
func (t *Ticket) Renew(ctx context.Context) error {
	var until time.Time
	err := t.svc.pool.QueryRow(ctx, `UPDATE quota_tickets SET expires_at = c.now + make_interval(secs => $3)
		FROM quota_clock($4) c WHERE id = $1 AND user_id = $2 AND expires_at > c.now
		RETURNING expires_at`, t.ID, t.UserID, LeaseTTL.Seconds(), t.svc.clockArg()).Scan(&until)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrLeaseLost
	}
	if err != nil {
		return dbError("renew", err)
	}
	t.mu.Lock()
	t.expiresAt = until.UTC()
	t.mu.Unlock()
	return nil
}

// KeepAlive renews the lease every RenewEvery until stop is called or ctx
// is done. A lost lease is logged once and ends the renewing; the turn
// itself goes on (it is admitted; only the slot count is at stake). Each
// renewal is bounded (by RenewEvery): one stuck behind a database that
// stops answering is given up, logged, and the next one tried. The
// renewals run on a timer (package heartbeat), not a goroutine of their
// own; stop cancels one in flight and waits for it.
func (t *Ticket) KeepAlive(ctx context.Context) (stop func()) {
	return heartbeat.Start(ctx, t.svc.renewEvery, func(ctx context.Context) bool {
		rctx, cancel := context.WithTimeout(ctx, t.svc.renewTimeout)
		err := t.Renew(rctx)
		cancel()
		if err == nil || ctx.Err() != nil {
			return true
		}
		t.svc.log.WarnContext(ctx, "quota: lease renewal failed", "user_id", t.UserID, "ticket", t.ID, "err", err)
		return !errors.Is(err, ErrLeaseLost)
	})
}

const settleSQL = `SELECT s.replayed, s.released, s.day_requests, s.day_calls, s.day_tokens, s.day_cost,
	s.res_calls, s.res_tokens, s.res_cost
FROM quota_clock($3) c, LATERAL quota_settle_ticket($1, $2, c.now, c.minute, c.hour, c.day, c.month, $4, $5, $6) s`

// Settle ends the turn in one round trip: it releases the lease, drops the
// reservation and adds u to the user's UTC day. It runs even when ctx is
// cancelled (a client that disconnects still used what it used), bounded by
// settleTimeout or ctx's deadline. A failed settlement may be retried: a
// ticket is settled once in the database, so a retry after a lost reply
// changes nothing and returns the day as it stands. A second Settle after a
// successful one is ErrTicketDone.
func (t *Ticket) Settle(ctx context.Context, u Usage) (Daily, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return Daily{}, ErrTicketDone
	}
	ctx, cancel := detach(ctx, settleTimeout)
	defer cancel()
	d, err := t.svc.SettleTicket(ctx, t.UserID, t.ID, u)
	if err != nil {
		return Daily{}, err
	}
	t.done = true
	return d, nil
}

// SettleTicket is Settle by the ticket's ids, for a settlement completed
// away from its turn: from the durable path (package spool) after a
// database outage, on any replica, after a restart. It is idempotent in
// the same way, for as long as the settlement is remembered (a day), and
// honours ctx.
func (s *Service) SettleTicket(ctx context.Context, userID string, ticketID int64, u Usage) (Daily, error) {
	st, args, err := s.prepareSettle(userID, ticketID, u)
	if err != nil {
		return Daily{}, err
	}
	st.scan(s.pool.QueryRow(ctx, settleSQL, args...))
	return st.Daily(ctx)
}

// Settling is a ticket's settlement queued on a batch by QueueSettle.
type Settling struct {
	s                  *Service
	userID             string
	ticketID           int64
	d                  Daily
	replayed, released bool
	err                error
}

// QueueSettle queues SettleTicket's statement on b, so that a unit's
// settlement, its records and its audit row reach PostgreSQL in one round
// trip and commit together. Once b is sent, Daily gives what SettleTicket
// would have.
func (s *Service) QueueSettle(b *pgx.Batch, userID string, ticketID int64, u Usage) (*Settling, error) {
	st, args, err := s.prepareSettle(userID, ticketID, u)
	if err != nil {
		return nil, err
	}
	b.Queue(settleSQL, args...).QueryRow(func(row pgx.Row) error {
		st.scan(row)
		return nil
	})
	return st, nil
}

func (s *Service) prepareSettle(userID string, ticketID int64, u Usage) (*Settling, []any, error) {
	if err := checkAmounts("usage", u.Tokens, u.CostMicros, u.Calls); err != nil {
		return nil, nil, err
	}
	return &Settling{s: s, userID: userID, ticketID: ticketID},
		[]any{userID, ticketID, s.clockArg(), u.Calls, u.Tokens, u.CostMicros}, nil
}

func (st *Settling) scan(row pgx.Row) {
	d := &st.d
	if err := row.Scan(&st.replayed, &st.released, &d.Requests, &d.Calls, &d.Tokens, &d.CostMicros,
		&d.ReservedCalls, &d.ReservedTokens, &d.ReservedCost); err != nil {
		st.err = dbError("settle", err)
	}
}

// Daily is the user's day as the settlement left it, once its statement
// has run and its transaction committed.
func (st *Settling) Daily(ctx context.Context) (Daily, error) {
	if st.err != nil {
		return Daily{}, st.err
	}
	if !st.released && !st.replayed {
		st.s.log.WarnContext(ctx, "quota: settled a ticket whose lease had expired", "user_id", st.userID, "ticket", st.ticketID)
	}
	return st.d, nil
}

// detach is ctx without its cancellation, bounded by limit, or by ctx's
// own deadline when that is still ahead and sooner: a settlement outlives
// a client that left, but not the bound of an attempt that carries one
// (the durable path's, package spool).
func detach(ctx context.Context, limit time.Duration) (context.Context, context.CancelFunc) {
	deadline := time.Now().Add(limit)
	if d, ok := ctx.Deadline(); ok && ctx.Err() == nil && d.Before(deadline) {
		deadline = d
	}
	return context.WithDeadline(context.WithoutCancel(ctx), deadline)
}

// Release ends a turn that used nothing (it failed before any provider
// call): the lease and reservation are freed.
func (t *Ticket) Release(ctx context.Context) error {
	_, err := t.Settle(ctx, Usage{})
	return err
}
