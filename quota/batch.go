package quota

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// Admissions are batched per replica, "group commit" style. Each admission
// is a small write transaction, and at thousands a second its fixed costs
// (a round trip, a function call, a commit) are most of the work. So
// concurrent Admit calls on one replica share one statement,
// quota_admit_requests: a call sends at once when fewer than maxInFlight
// batches are in flight, taking whatever else is queued along; otherwise it
// queues, and the queue goes as the next batch as soon as a batch returns.
// Nothing waits on a timer: at low load every call is a batch of one, and
// under load batches grow with the queue. Each caller still makes one round
// trip's worth of waiting and gets its own result.
//
// A batch holds at most one request per user, and a user with a request in
// flight gets no other until it returns: the user's next request waits for
// the next batch, so a user's requests are still decided one after another,
// each seeing the last, and one replica's batches never wait for each other.
//
// A caller whose context ends while its request is in flight returns at
// once. If the request is then admitted, the batcher releases the ticket (a
// settlement with no usage, in the background): the slot and the
// reservation come back at once, and the request stays counted, as any
// request that reached the database is. Should the release fail, the lease
// TTL reclaims the ticket.
type admitBatcher struct {
	s           *Service
	maxBatch    int // requests per statement
	maxInFlight int // statements in flight at once

	mu       sync.Mutex
	queue    []*admitCall
	busy     map[string]struct{} // users with a request in flight
	inFlight int

	// abandoned counts the background releases of tickets whose caller
	// went away; tests wait on it.
	abandoned sync.WaitGroup
	// afterQuery, when set (tests), runs between a batch's answer and its
	// delivery to the callers.
	afterQuery func()
}

// Batching limits. Two statements in flight let the database work on one
// batch while the other travels or is being answered; on the two-core
// machine of docs/quota.md one did worse and three or four no better. 256
// requests are a few milliseconds of database work, the most a caller
// waits behind.
const (
	defaultMaxBatch    = 256
	defaultMaxInFlight = 2
	// admitTimeout bounds one batch's statement; callers' own contexts
	// bound how long they wait for it.
	admitTimeout = 10 * time.Second
)

func newAdmitBatcher(s *Service) *admitBatcher {
	return &admitBatcher{
		s: s, maxBatch: defaultMaxBatch, maxInFlight: defaultMaxInFlight,
		busy: make(map[string]struct{}),
	}
}

// A call's state moves from waiting to delivered (the batcher answered
// first) or to abandoned (its caller gave up first), never both.
const (
	callWaiting int32 = iota
	callDelivered
	callAbandoned
)

// admitCall is one Admit waiting for its batch.
type admitCall struct {
	userID   string
	fallback string
	est      Estimate // est.Key: the request's admission key, "" for none
	riders   []Rider
	state    atomic.Int32
	done     chan struct{} // closed once the result below is set

	w        windows // the batch's clock, as the database read it
	err      error
	plan     string
	reasons  []string
	ticketID int64 // 0: refused
	gen      int32 // the keyed ticket's generation, which the take names (key.go)
	daily    Daily
}

// admit queues c and waits for its result or for ctx to end. It reports
// whether c holds a result; if not, c is abandoned to the batcher.
func (b *admitBatcher) admit(ctx context.Context, c *admitCall) bool {
	c.done = make(chan struct{})
	b.mu.Lock()
	b.queue = append(b.queue, c)
	var batch []*admitCall
	if b.inFlight < b.maxInFlight {
		if batch = b.takeLocked(); batch != nil {
			b.inFlight++
		}
	}
	b.mu.Unlock()
	if batch != nil {
		go b.run(batch)
	}
	select {
	case <-c.done:
		return true
	case <-ctx.Done():
		if c.state.CompareAndSwap(callWaiting, callAbandoned) {
			return false
		}
		<-c.done // delivered just now
		return true
	}
}

// takeLocked removes the next batch from the queue: the oldest request of
// each user with none in flight, skipping abandoned ones, at most maxBatch.
// It returns nil when there is nothing to send. b.mu is held.
func (b *admitBatcher) takeLocked() []*admitCall {
	var batch []*admitCall
	rest := b.queue[:0]
	for _, c := range b.queue {
		if c.state.Load() == callAbandoned {
			continue
		}
		if _, busy := b.busy[c.userID]; busy || len(batch) == b.maxBatch {
			rest = append(rest, c)
			continue
		}
		b.busy[c.userID] = struct{}{}
		batch = append(batch, c)
	}
	clear(b.queue[len(rest):])
	b.queue = rest
	return batch
}

// run sends batch, then whatever queued meanwhile, until the queue has
// nothing to send.
func (b *admitBatcher) run(batch []*admitCall) {
	for batch != nil {
		b.send(batch)
		b.mu.Lock()
		for _, c := range batch {
			delete(b.busy, c.userID)
		}
		if batch = b.takeLocked(); batch == nil {
			b.inFlight--
		}
		b.mu.Unlock()
	}
}

// admitBatchSQL is one batch of admissions: one statement, one round trip.
// Every row also carries the batch's clock.
const admitBatchSQL = `SELECT ` + clockCols + `, a.ord, a.plan, a.reasons, a.ticket_id,
	a.day_requests, a.day_calls, a.day_tokens, a.day_cost, a.res_calls, a.res_tokens, a.res_cost, a.ticket_gen
FROM quota_clock($1) c, LATERAL quota_admit_requests($2::jsonb, $3, $4, $5::text[], $6, $7, $8,
	c.now, c.minute, c.hour, c.day, c.now + make_interval(secs => $9), $10) a`

// send runs one batch and delivers every result.
func (b *admitBatcher) send(batch []*admitCall) {
	n := len(batch)
	users := make([]string, n)
	fallbacks := make([]string, n)
	keys := make([]string, n) // "": unkeyed
	calls := make([]int64, n)
	tokens := make([]int64, n)
	costs := make([]int64, n)
	for i, c := range batch {
		users[i], fallbacks[i], keys[i] = c.userID, c.fallback, c.est.Key
		calls[i], tokens[i], costs[i] = c.est.Calls, c.est.Tokens, c.est.CostMicros
	}
	// Not the callers' contexts: one caller going away must not cancel the
	// others' admissions.
	ctx, cancel := context.WithTimeout(context.Background(), admitTimeout)
	defer cancel()
	w, err := b.query(ctx, batch, users, fallbacks, keys, calls, tokens, costs)
	if b.afterQuery != nil {
		b.afterQuery()
	}
	for _, c := range batch {
		c.w = w
		if err != nil {
			c.err, c.ticketID = err, 0
		}
		if c.state.CompareAndSwap(callWaiting, callDelivered) {
			close(c.done)
			continue
		}
		if c.ticketID != 0 {
			b.releaseAbandoned(c)
		}
	}
}

// query runs the batch's statement and sets each call's result. It returns
// the clock the batch was decided at.
func (b *admitBatcher) query(ctx context.Context, batch []*admitCall,
	users, fallbacks, keys []string, calls, tokens, costs []int64) (windows, error) {
	s := b.s
	var w windows
	args := []any{s.clockArg(), s.plans, users, fallbacks, keys, calls, tokens, costs, LeaseTTL.Seconds(), s.cfg.GlobalRequestsPerMinute}
	var riders pgx.Batch
	if queueRiders(&riders, batch) {
		// The admission first, then the riders, one round trip and one
		// implicit transaction: the riders see its tickets.
		b := &pgx.Batch{QueuedQueries: append([]*pgx.QueuedQuery{{SQL: admitBatchSQL, Arguments: args}}, riders.QueuedQueries...)}
		res := s.pool.SendBatch(ctx, b)
		rows, err := res.Query()
		if err != nil {
			res.Close()
			return w, err
		}
		w, err = scanAdmissions(rows, batch)
		if err != nil {
			res.Close()
			return w, err
		}
		// Close reads the riders' results: the batch's error, if any.
		return w, res.Close()
	}
	rows, err := s.pool.Query(ctx, admitBatchSQL, args...)
	if err != nil {
		return w, err
	}
	return scanAdmissions(rows, batch)
}

// scanAdmissions reads the batch statement's rows into its calls.
func scanAdmissions(rows pgx.Rows, batch []*admitCall) (windows, error) {
	var w windows
	defer rows.Close()
	got := 0
	for rows.Next() {
		var ord int32
		var r admitCall
		var ticket *int64
		var gen *int32
		d := &r.daily
		if err := rows.Scan(append(w.dest(), &ord, &r.plan, &r.reasons, &ticket, &d.Requests, &d.Calls, &d.Tokens,
			&d.CostMicros, &d.ReservedCalls, &d.ReservedTokens, &d.ReservedCost, &gen)...); err != nil {
			return w, err
		}
		if ord < 1 || int(ord) > len(batch) {
			return w, fmt.Errorf("quota_admit_requests answered for request %d of %d", ord, len(batch))
		}
		c := batch[ord-1]
		c.plan, c.reasons, c.daily = r.plan, r.reasons, r.daily
		if ticket != nil {
			c.ticketID = *ticket
		}
		if gen != nil {
			c.gen = *gen
		}
		got++
	}
	if err := rows.Err(); err != nil {
		return w, err
	}
	if got != len(batch) {
		return w, fmt.Errorf("quota_admit_requests answered %d of %d requests", got, len(batch))
	}
	w.utc()
	return w, nil
}

// releaseAbandoned frees the ticket of a caller that went away before its
// admission came back.
func (b *admitBatcher) releaseAbandoned(c *admitCall) {
	b.abandoned.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
		defer cancel()
		if err := b.s.releaseWithRiders(ctx, c); err != nil {
			b.s.log.Warn("quota: releasing the ticket of a cancelled admission failed; its lease will expire",
				"user_id", c.userID, "ticket", c.ticketID, "err", err)
		}
	})
}
