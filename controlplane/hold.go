package controlplane

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// drainFor bounds how long a holder that hung up keeps reading the call's
// last events before it ends the session without the provider's close.
const drainFor = 2 * time.Second

// held is what a held call keeps whatever its mode: its row, and what the
// loop (runHeld) decides on its clock. Only its holder goroutine touches
// it.
type held struct {
	s  *Service
	id string
	heldSession
	lastActivity time.Time // the last event that counts as activity for the idle limit (each mode says which do)
	idleSince    time.Time // the last activity of a call ended for silence
	notices      int       // cap notices given: at 80 % then 95 %
	ending       string    // the gateway's end reason, once it asked the provider to end the call
	drainUntil   time.Time // how long the call's last events are read after that
	// quietCharged says an idle end is charged up to the last activity,
	// not up to the end: DESIGN §6's rule for a silent Realtime call. A
	// live session is charged to its close, as the provider bills every
	// second it is up.
	quietCharged bool
}

// driver is what one mode does in a held call: the sideband and relayed
// call (call, sideband.go) and the GPT-Live session (liveCall,
// livehold.go). Everything else (the attach and its record, the reader,
// the cap and idle clock, the drain, the end, a shutdown) is runHeld's,
// the same for every mode. E is the mode's event.
type driver[E any] interface {
	// attach opens the call's events; again says the events dropped and
	// this attaches once more.
	attach(ctx context.Context, again bool) (source[E], error)
	// handle acts on one event. closed is the provider's end reason once
	// it has closed the session (nothing more comes), else "".
	handle(ctx context.Context, ev E) (closed string)
	// dropped reads the error the events stopped with: the provider's end
	// reason, or again when the call may be up and is attached again.
	dropped(err error) (why string, again bool)
	callMode
}

// callMode is what a mode does to its call whatever its events are.
type callMode interface {
	// hangup asks the provider to end the call; its last events follow.
	hangup(ctx context.Context)
	// notify asks the model to speak cap notice i.
	notify(ctx context.Context, i int)
	// beforeEnd is the mode's last act before the session ends for
	// reason; flush saves what the call holds (usage, transcript) so
	// whoever ends the session, on any replica, records it.
	beforeEnd(ctx context.Context, reason string)
	flush(ctx context.Context)
	sideWork
}

// sideWork is what a mode runs beside its call, on the holder's goroutine
// and clock: a live session's delegations. A sideband call has none
// (noWork).
type sideWork interface {
	results() <-chan delegationOut
	deliver(ctx context.Context, o delegationOut)
	// due acts on the work's own times; wake is the earliest of next and
	// them.
	due(ctx context.Context, now time.Time)
	wake(next time.Time) time.Time
	// release lets the work go as the holder stops, whoever ends the
	// session.
	release()
}

// source is one attach's events: Next blocks for the next one and fails
// once the socket is gone or ctx ends; Close ends a Next in progress.
type source[E any] interface {
	Next(ctx context.Context) (E, error)
	Close() error
}

// runCall holds session id's call until the session ends, the call is no
// longer this replica's, or ctx ends (the replica closing: see shutdown).
func (s *Service) runCall(ctx context.Context, id string, h *holder) {
	row, err := s.loadHeld(ctx, id)
	if err != nil {
		if !errors.Is(err, pgx.ErrNoRows) && ctx.Err() == nil {
			s.log.Warn("voice: a held session not loaded", "session_id", id, "err", err)
		}
		return
	}
	ctx = inSession(ctx, row.traceParent) // the call's tool calls, delegations and end join the start's trace
	c := &held{s: s, id: id, heldSession: row, lastActivity: s.clock.Now(), quietCharged: row.mode != ModeLive}
	for c.notices < len(noticeAt) && !c.lastActivity.Before(c.noticeTime(c.notices)) {
		c.notices++ // an adopted call: its holder gave the notices already due
	}
	if c.mode == ModeLive {
		runHeld(ctx, c, h, newLiveCall(c))
		return
	}
	runHeld(ctx, c, h, newCall(c, h.link))
}

// runHeld is the one loop of a held call, in every mode: attach, then the
// events, the cap and idle clock and the mode's side work, until the call
// ends (read to its last event, then the session ended with its reason),
// the replica shuts down, or the call is no longer this replica's
// (h.quit: stop, end nothing).
func runHeld[E any](ctx context.Context, c *held, h *holder, d driver[E]) {
	defer d.release()
	rd, err := attach(ctx, c, d, false)
	if err != nil {
		if ctx.Err() != nil {
			c.shutdown(ctx, d)
			return
		}
		c.s.log.Warn("voice: attach failed; ending the session", "session_id", c.id, "mode", c.mode, "err", err)
		c.finish(ctx, d, ReasonError)
		return
	}
	defer func() { rd.stop() }()
	for {
		select {
		case ev := <-rd.events:
			if why := d.handle(ctx, ev); why != "" {
				c.finish(ctx, d, c.reason(why))
				return
			}
		case <-rd.done:
			if why := drain(ctx, d, rd); why != "" {
				c.finish(ctx, d, c.reason(why))
				return
			}
			if ctx.Err() != nil {
				c.shutdown(ctx, d) // the reader stops with the replica
				return
			}
			why, again := d.dropped(rd.err)
			if c.ending == "" && again {
				rd.stop()
				if next, err := attach(ctx, c, d, true); err == nil {
					rd = next
					continue
				}
				if ctx.Err() != nil {
					// The shutdown came during the attach: not the
					// provider refusing the call, which may well be up.
					c.shutdown(ctx, d)
					return
				}
				why = ReasonError
			}
			c.finish(ctx, d, c.reason(why))
			return
		case o := <-d.results():
			d.deliver(ctx, o)
		case reason := <-h.ends:
			if c.ending == "" {
				c.hangup(ctx, d, reason)
			}
		case <-c.s.clock.At(c.nextWake(d)):
			if c.tick(ctx, d, c.s.clock.Now()) {
				drain(ctx, d, rd)
				c.finish(ctx, d, c.reason(""))
				return
			}
		case <-ctx.Done():
			c.shutdown(ctx, d)
			return
		case <-h.quit:
			return
		}
	}
}

// attach opens the call's events and starts reading them; the first
// attach is recorded, so a replica handing the call over sees its
// adopter's is on.
func attach[E any](ctx context.Context, c *held, d driver[E], again bool) (*reader[E], error) {
	sctx, span := c.startAttach(ctx, again)
	src, err := d.attach(sctx, again)
	endSpan(span, err)
	if err != nil {
		return nil, err
	}
	if !again {
		if _, err := c.s.pool.Exec(ctx, `UPDATE voice_sessions SET attached_at = now() WHERE id = $1 AND holder = $2`, c.id, c.s.replica); err != nil {
			c.s.log.Warn("voice: attach not recorded", "session_id", c.id, "err", err)
		}
	}
	return startReader(ctx, src), nil
}

// drain handles the events the reader had already taken, and returns the
// provider's end reason if one of them closed the session.
func drain[E any](ctx context.Context, d driver[E], rd *reader[E]) (closed string) {
	for {
		select {
		case ev := <-rd.events:
			if why := d.handle(ctx, ev); why != "" {
				closed = why
			}
		default:
			return closed
		}
	}
}

// reason is why the call ended: the gateway's own reason first, then the
// provider's, else the call closed under the holder (the app left).
func (c *held) reason(provider string) string {
	switch {
	case c.ending != "":
		return c.ending
	case provider != "":
		return provider
	}
	return ReasonAppClosed
}

// hangup ends the call for reason: the provider ends it after its last
// events, which the holder still reads (for at most drainFor).
func (c *held) hangup(ctx context.Context, d callMode, reason string) {
	c.ending = reason
	c.s.metrics.hangups.WithLabelValues(reason).Inc()
	d.hangup(ctx)
	c.drainUntil = c.s.clock.Now().Add(drainFor)
}

// finish ends the session with reason and what the call observed.
func (c *held) finish(ctx context.Context, d callMode, reason string) {
	ctx = context.WithoutCancel(ctx)
	d.beforeEnd(ctx, reason)
	d.flush(ctx)
	req := EndRequest{Reason: reason, byHolder: true}
	if reason == ReasonIdle && c.quietCharged {
		req.quietFor = c.s.clock.Now().Sub(c.idleSince) // charged up to the last activity
	}
	if _, _, err := c.s.end(ctx, c.userID, c.id, req); err != nil {
		c.s.log.Warn("voice: end failed; the sweeper will close the session", "session_id", c.id, "mode", c.mode, "err", err)
	}
}

// shutdown is the replica closing under the call, at any point of it (an
// attach included): what the call holds is saved and the session stays
// open, for another replica to adopt (Close hands it over). A relayed
// call's media goes with this replica, so it ends.
func (c *held) shutdown(ctx context.Context, d callMode) {
	if c.mode == ModeRelay {
		c.finish(ctx, d, ReasonError)
		return
	}
	d.flush(context.WithoutCancel(ctx))
}

// reader reads one attach's events until they fail, ctx ends or it is
// stopped.
type reader[E any] struct {
	src    source[E]
	events chan E
	done   chan struct{}
	cancel context.CancelFunc
	once   sync.Once
	err    error // why the events stopped; read once done is closed
}

func startReader[E any](ctx context.Context, src source[E]) *reader[E] {
	ctx, cancel := context.WithCancel(ctx)
	r := &reader[E]{src: src, events: make(chan E, 16), done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(r.done)
		for {
			ev, err := src.Next(ctx)
			if err != nil {
				r.err = err
				return
			}
			select {
			case r.events <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return r
}

// stop closes the events and waits for the read goroutine to end.
func (r *reader[E]) stop() {
	r.once.Do(func() {
		r.cancel()
		_ = r.src.Close()
		<-r.done
	})
}
