package controlplane

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/realtime"
)

// drainFor bounds how long a holder that hung up keeps reading the call's
// last events before it ends the session without the socket's close.
const drainFor = 2 * time.Second

// eventConn is what a holder reads a call's server events from and sends
// its client events on: a sideband socket (*realtime.Sideband), or a
// relayed call's provider channel (relayLink).
type eventConn interface {
	Read() ([]byte, error)
	Send(event []byte) error
	Close() error
}

// call is one held sideband or relayed call's state. Only its holder goroutine
// touches it.
type call struct {
	s  *Service
	id string
	heldSession
	sb           eventConn
	answered     map[string]bool     // function calls run or cut short, by call_id
	written      map[string]fnCall   // calls whose arguments are done, waiting for their item or response
	outputs      map[string]*answers // outputs waiting for their response's response.done, by response id
	unsent       [][]byte            // events a dropped socket did not take, sent after re-attaching
	lastActivity time.Time
	idleSince    time.Time // the last activity of a call ended for silence
	notices      int       // cap notices sent: at 80% then 95%
	ending       string    // the end reason, once the gateway decided to end
	drainUntil   time.Time
	expired      bool // the provider said session_expired
}

// fnCall is a function call whose arguments the model has written.
type fnCall struct{ response, name, args string }

// answers are the outputs of one response's calls, and the gateway's own
// time spent on them, for the round-trip metric.
type answers struct {
	items    [][]byte
	overhead time.Duration
}

// reader reads one socket into events until it fails or is stopped.
type reader struct {
	sb     eventConn
	events chan []byte
	done   chan struct{}
	quit   chan struct{}
	err    error
}

func startReader(sb eventConn) *reader {
	r := &reader{sb: sb, events: make(chan []byte, 16), done: make(chan struct{}), quit: make(chan struct{})}
	go func() {
		defer close(r.done)
		for {
			data, err := sb.Read()
			if err != nil {
				r.err = err
				return
			}
			select {
			case r.events <- data:
			case <-r.quit:
				return
			}
		}
	}()
	return r
}

// stop closes the socket and waits for the read goroutine to end.
func (r *reader) stop() {
	close(r.quit)
	_ = r.sb.Close()
	<-r.done
}

// runCall holds session id's call until the session ends or ctx does
// (the replica closing: the session stays open for another to adopt).
func (s *Service) runCall(ctx context.Context, id string, h *holder) {
	held, err := s.loadHeld(ctx, id)
	if err != nil {
		if !errors.Is(err, pgx.ErrNoRows) && ctx.Err() == nil {
			s.log.Warn("voice sideband: session not loaded", "session_id", id, "err", err)
		}
		return
	}
	if held.mode == ModeLive {
		s.runLive(ctx, id, h, held)
		return
	}
	c := &call{s: s, id: id, heldSession: held, answered: map[string]bool{}, written: map[string]fnCall{},
		outputs: map[string]*answers{}, lastActivity: s.clock.Now()}
	for c.notices < len(noticeAt) && !c.lastActivity.Before(c.noticeTime(c.notices)) {
		c.notices++ // an adopted call: its holder gave the notices already due
	}
	if c.sb, err = s.attach(ctx, c.callID, h); err != nil {
		if ctx.Err() == nil {
			s.log.Warn("voice sideband: attach failed; ending the session", "session_id", id, "err", err)
			c.finish(ctx, ReasonError)
		}
		return
	}
	if _, err := s.pool.Exec(ctx, `UPDATE voice_sessions SET attached_at = now() WHERE id = $1 AND holder = $2`, id, s.replica); err != nil {
		s.log.Warn("voice sideband: attach not recorded", "session_id", id, "err", err)
	}
	rd := startReader(c.sb)
	if h.link == nil {
		c.sendConfig() // a relayed phone cannot change the config the call was placed with
	}
	defer func() { rd.stop() }()
	for {
		select {
		case data := <-rd.events:
			c.handle(ctx, data)
		case <-rd.done:
			c.drain(ctx, rd)
			if why := relayEndReason(rd.err); why != "" && c.ending == "" && !c.expired {
				c.ending = why // a relayed call cannot be attached again
			} else if c.ending == "" && !c.expired && realtime.CloseCode(rd.err) != 1000 {
				// Dropped, not closed: the call may well be up. Attach again.
				if sb, err := s.rt.AttachRetry(ctx, c.callID, s.cfg.AttachWithin); err == nil {
					c.sb, rd = sb, startReader(sb)
					c.sendConfig()
					c.resend()
					continue
				} else if ctx.Err() != nil {
					return
				}
				c.ending = ReasonError
			}
			c.finish(ctx, c.endReason())
			return
		case reason := <-h.ends:
			if c.ending == "" {
				c.hangup(ctx, reason)
			}
		case <-s.clock.At(c.nextWake()):
			if c.tick(ctx, s.clock.Now()) {
				c.drain(ctx, rd)
				c.finish(ctx, c.endReason())
				return
			}
		case <-ctx.Done():
			if h.link != nil {
				c.finish(ctx, ReasonError) // the media goes with this replica
				return
			}
			c.flush(context.WithoutCancel(ctx))
			return
		case <-h.quit:
			return
		}
	}
}

// attach opens the call's events: the sideband socket, or a relayed
// call's channel, already open.
func (s *Service) attach(ctx context.Context, callID string, h *holder) (eventConn, error) {
	if h.link != nil {
		return h.link, nil
	}
	return s.rt.AttachRetry(ctx, callID, s.cfg.AttachWithin)
}

// drain handles the events the reader had already taken.
func (c *call) drain(ctx context.Context, rd *reader) {
	for {
		select {
		case data := <-rd.events:
			c.handle(ctx, data)
		default:
			return
		}
	}
}

// endReason is why the call ended: the gateway's own reason, the
// provider's maximum length, or the call closed under it (the app left).
func (c *call) endReason() string {
	switch {
	case c.ending != "":
		return c.ending
	case c.expired:
		return ReasonUpstreamExpired
	}
	return ReasonAppClosed
}

// hangup ends the call for reason: the provider closes the sideband
// after the call's last events, which the holder still reads (for at
// most drainFor).
func (c *call) hangup(ctx context.Context, reason string) {
	c.ending = reason
	c.s.metrics.hangups.WithLabelValues(reason).Inc()
	c.s.hangup(ctx, c.callID)
	c.drainUntil = c.s.clock.Now().Add(drainFor)
}

// finish ends the session with the usage observed.
func (c *call) finish(ctx context.Context, reason string) {
	ctx = context.WithoutCancel(ctx)
	if reason == ReasonError || c.mode == ModeRelay {
		c.s.hangup(ctx, c.callID) // the call may be up with nobody holding it
	}
	c.flush(ctx)
	req := EndRequest{Reason: reason, byHolder: true}
	if reason == ReasonIdle {
		req.quietFor = c.s.clock.Now().Sub(c.idleSince) // charged up to the last event
	}
	if _, _, err := c.s.end(ctx, c.userID, c.id, req); err != nil {
		c.s.log.Warn("voice sideband: end failed; the sweeper will close the session", "session_id", c.id, "err", err)
	}
}

// flush saves the usage observed so far now, so whoever ends the
// session, on any replica, records it.
func (c *call) flush(ctx context.Context) {
	c.s.noteUsage(c.id, c.observed)
	c.s.saveUsage(ctx, c.id)
}

// send writes client events; one the socket did not take is kept for
// after the re-attach.
func (c *call) send(events ...[]byte) {
	for i, e := range events {
		if err := c.sb.Send(e); err != nil {
			c.unsent = append(c.unsent, events[i:]...)
			return
		}
	}
}

func (c *call) resend() {
	pending := c.unsent
	c.unsent = nil
	c.send(pending...)
}
