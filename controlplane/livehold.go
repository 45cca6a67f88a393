package controlplane

import (
	"context"
	"math"
	"time"

	"github.com/voxgate/voxgate/realtime"
)

// liveCall is one held GPT-Live session's state. Only its holder
// goroutine touches it.
type liveCall struct {
	s  *Service
	id string
	heldSession
	sb *realtime.LiveSideband
	// voiceMS is the highest cumulative usage.seconds seen, in ms: the
	// provider's figure is cumulative, never summed.
	voiceMS      int64
	lastActivity time.Time // transcript or delegation activity only
	notices      int
	ending       string // the gateway's end reason, once it asked for the close
	drainUntil   time.Time
	closed       string // session.closed's reason, once it came
	// How far the input transcript reaches (the transcript itself and how
	// far it is screened are heldSession's, kept with the usage), and the
	// delegations claimed here and not yet finished.
	heardMS      int64
	delegations  map[string]*delegation
	seq          int // delegations created
	answeredSeq  int // the newest delegation answered
	running      int // delegation loops started and not yet returned
	out          chan delegationOut
	instructions string // the session's, with the profile: the backend's context
}

// liveReader reads one sideband into events until it fails or is
// stopped.
type liveReader struct {
	sb     *realtime.LiveSideband
	events chan realtime.LiveEvent
	done   chan struct{}
	cancel context.CancelFunc
	err    error
}

func startLiveReader(ctx context.Context, sb *realtime.LiveSideband) *liveReader {
	ctx, cancel := context.WithCancel(ctx)
	r := &liveReader{sb: sb, events: make(chan realtime.LiveEvent, 16), done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(r.done)
		for {
			ev, err := sb.Next(ctx)
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

func (r *liveReader) stop() {
	r.cancel()
	_ = r.sb.Close()
	<-r.done
}

// runLive holds live session id until it closes or ctx ends (the replica
// closing: the session stays open for another replica to adopt).
func (s *Service) runLive(ctx context.Context, id string, h *holder, held heldSession) {
	c := &liveCall{s: s, id: id, heldSession: held, lastActivity: s.clock.Now(), delegations: map[string]*delegation{},
		out: make(chan delegationOut, 16), instructions: held.live.Instructions}
	c.voiceMS = held.observed.Session.AudioMillis
	defer func() {
		for _, d := range c.delegations {
			if d.cancel != nil {
				d.cancel() // the session is over, or another replica holds it
			}
		}
	}()
	for c.notices < len(noticeAt) && !c.lastActivity.Before(c.noticeTime(c.notices)) {
		c.notices++ // adopted: its holder gave the notices already due
	}
	var err error
	if c.sb, err = s.rt.AttachLiveRetry(ctx, c.callID, s.cfg.AttachWithin); err != nil {
		if ctx.Err() == nil {
			s.log.Warn("live sideband: attach failed; ending the session", "session_id", id, "err", err)
			c.finish(ctx, ReasonError)
		}
		return
	}
	if _, err := s.pool.Exec(ctx, `UPDATE voice_sessions SET attached_at = now() WHERE id = $1 AND holder = $2`, id, s.replica); err != nil {
		s.log.Warn("live sideband: attach not recorded", "session_id", id, "err", err)
	}
	rd := startLiveReader(ctx, c.sb)
	defer func() { rd.stop() }()
	for {
		select {
		case ev := <-rd.events:
			c.handle(ctx, ev)
			if c.closed != "" {
				c.finish(ctx, c.endReason())
				return
			}
		case <-rd.done:
			c.drain(ctx, rd)
			if c.closed != "" {
				c.finish(ctx, c.endReason())
				return
			}
			if ctx.Err() != nil {
				c.flush(context.WithoutCancel(ctx))
				return
			}
			if c.ending == "" {
				// Dropped: the session goes on. Attach again; what was said
				// in the gap is lost (nothing is replayed) and counted.
				if sb, err := s.rt.AttachLiveRetry(ctx, c.callID, s.cfg.AttachWithin); err == nil {
					s.metrics.live.reattaches.Inc()
					c.sb, rd = sb, startLiveReader(ctx, sb)
					continue
				}
				c.ending = ReasonError
			}
			c.finish(ctx, c.ending)
			return
		case o := <-c.out:
			c.delivered(ctx, o)
		case reason := <-h.ends:
			if c.ending == "" {
				c.close(ctx, reason)
			}
		case <-s.clock.At(c.nextWake()):
			if c.tick(ctx, s.clock.Now()) {
				c.drain(ctx, rd)
				c.finish(ctx, c.endReason())
				return
			}
		case <-ctx.Done():
			c.flush(context.WithoutCancel(ctx))
			return
		case <-h.quit:
			return
		}
	}
}

func (c *liveCall) drain(ctx context.Context, rd *liveReader) {
	for {
		select {
		case ev := <-rd.events:
			c.handle(ctx, ev)
		default:
			return
		}
	}
}

// handle acts on one session event. Types the gateway has no use for,
// and unknown ones, are ignored.
func (c *liveCall) handle(ctx context.Context, ev realtime.LiveEvent) {
	switch ev.Type {
	case "session.input_transcript.delta":
		e, ok := ev.AsInputTranscriptDeltaEvent()
		if !c.decoded(ev, ok) {
			return
		}
		c.heard(ctx, "user", e.Delta, e.StartMs, e.EndMs)
		c.heardMS = max(c.heardMS, e.EndMs)
		c.startReady(ctx, c.lastActivity)
	case "session.output_transcript.delta":
		e, ok := ev.AsOutputTranscriptDeltaEvent()
		if c.decoded(ev, ok) {
			c.heard(ctx, "assistant", e.Delta, e.StartMs, e.EndMs)
		}
	case "session.delegation.created":
		c.lastActivity = c.s.clock.Now()
		e, ok := ev.AsDelegationCreatedEvent()
		if c.decoded(ev, ok) {
			c.delegated(ctx, e.Delegation.ID, e.OffsetMs)
		}
	case "error":
		// An append the provider refused (an error naming a client event
		// of ours); the phone's own errors never reach the sideband.
		c.s.metrics.live.refused.Inc()
	case "session.usage.updated":
		if e, ok := ev.AsSessionUsageUpdatedEvent(); c.decoded(ev, ok) {
			c.noteSeconds(e.Usage.Seconds)
		}
	case "session.closed":
		// A closed event that does not decode is not the final usage: the
		// record stays unconfirmed, with the highest seconds seen.
		e, ok := ev.AsSessionClosedEvent()
		if ok {
			c.observed.Final = true
			c.noteSeconds(e.Usage.Seconds)
		}
		c.decoded(ev, ok)
		c.closed = string(e.Reason)
		if c.closed == "" {
			c.closed = "unknown"
		}
	}
}

// decoded reports ok, logging an event of a known type that did not
// decode as that type (nothing of it is acted on).
func (c *liveCall) decoded(ev realtime.LiveEvent, ok bool) bool {
	if !ok {
		c.s.log.Warn("live: an event that does not decode as its type; ignored", "session_id", c.id, "type", ev.Type)
	}
	return ok
}

// noteSeconds keeps the highest cumulative voice time seen.
func (c *liveCall) noteSeconds(sec float64) {
	if math.IsNaN(sec) || sec < 0 || sec > 1e7 {
		return
	}
	if ms := int64(math.Round(sec * 1000)); ms > c.voiceMS {
		c.voiceMS = ms
		c.s.noteUsage(c.id, c.usage())
	}
}

// liveObserved is what a live session saves as it goes: the usage, and
// the transcript an adopter reads delegations' tasks from.
type liveObserved struct {
	ReportedUsage
	Transcript []LiveLine `json:",omitempty"`
	ScreenedMS int64      `json:",omitempty"`
}

func (c *liveCall) usage() liveObserved {
	u := liveObserved{ReportedUsage: c.observed, Transcript: c.transcript, ScreenedMS: c.screenedMS}
	u.Session.AudioMillis = c.voiceMS
	return u
}

// heard keeps one transcript delta; it is activity for the idle limit. A
// new line ends the one before it, which is screened if it was the voice's.
func (c *liveCall) heard(ctx context.Context, speaker, delta string, startMS, endMS int64) {
	c.lastActivity = c.s.clock.Now()
	turned := len(c.transcript) > 0 && c.transcript[len(c.transcript)-1].Speaker != speaker
	c.transcript = addDelta(c.transcript, speaker, delta, startMS, endMS)
	if turned {
		c.screenSpoken(ctx, false)
	}
	c.s.noteUsage(c.id, c.usage())
}

// Close reasons the provider gives, as end reasons. close_requested is
// whoever asked: the gateway's own reason, else the app's leaving.
var liveCloseReasons = map[string]string{
	"expired":         ReasonUpstreamExpired,
	"content":         ReasonSafety,
	"remote_hangup":   ReasonAppClosed,
	"connection_lost": ReasonError,
}

func (c *liveCall) endReason() string {
	if c.ending != "" {
		return c.ending
	}
	if r, ok := liveCloseReasons[c.closed]; ok {
		return r
	}
	return ReasonAppClosed
}

// close asks the provider to end the session for reason; its
// session.closed, with the final usage, is read for at most drainFor.
func (c *liveCall) close(ctx context.Context, reason string) {
	c.ending = reason
	c.s.metrics.hangups.WithLabelValues(reason).Inc()
	if err := c.sb.CloseSession(ctx); err != nil {
		c.s.log.Warn("live sideband: close not sent", "session_id", c.id, "err", err)
	}
	c.drainUntil = c.s.clock.Now().Add(drainFor)
}

// finish ends the session with the usage observed.
func (c *liveCall) finish(ctx context.Context, reason string) {
	ctx = context.WithoutCancel(ctx)
	if reason == ReasonError && c.closed == "" {
		c.s.closeLive(ctx, c.callID) // it may be up with nobody holding it
	}
	c.screenSpoken(ctx, true)
	c.flush(ctx)
	if _, _, err := c.s.end(ctx, c.userID, c.id, EndRequest{Reason: reason, byHolder: true}); err != nil {
		c.s.log.Warn("live sideband: end failed; the sweeper will close the session", "session_id", c.id, "err", err)
	}
}

func (c *liveCall) flush(ctx context.Context) {
	c.stopLoops(ctx)
	c.s.noteUsage(c.id, c.usage())
	c.s.saveUsage(ctx, c.id)
}

// nextWake: a notice, the cap, the idle limit, or the end of a drain.
func (c *liveCall) nextWake() time.Time {
	next := c.nextDelegationWake(c.lastActivity.Add(c.s.cfg.IdleTimeout))
	switch {
	case c.ending != "":
		next = c.drainUntil
	case c.notices < len(noticeAt):
		next = earliest(next, c.noticeTime(c.notices))
	default:
		next = earliest(next, c.deadline)
	}
	return next
}

// tick: notices (trusted instructions, session-wide), then the cap, then
// idleness. It reports a drain that ran out without session.closed.
func (c *liveCall) tick(ctx context.Context, now time.Time) bool {
	if c.ending != "" {
		return !now.Before(c.drainUntil)
	}
	c.startReady(ctx, now)
	c.expire(ctx, now)
	for c.notices < len(noticeAt) && !now.Before(c.noticeTime(c.notices)) {
		c.s.metrics.notices.Inc()
		if err := c.sb.Instruct(ctx, "", noticeText[c.notices], ""); err != nil {
			c.s.log.Warn("live sideband: notice not sent", "session_id", c.id, "err", err)
		}
		c.notices++
	}
	switch {
	case !now.Before(c.deadline):
		c.close(ctx, ReasonQuota)
	case now.Sub(c.lastActivity) >= c.s.cfg.IdleTimeout:
		c.close(ctx, ReasonIdle)
	}
	return false
}
