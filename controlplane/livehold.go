package controlplane

import (
	"context"
	"math"
	"time"

	"github.com/voxgate/voxgate/realtime"
)

// liveCall is the driver (hold.go) of a held GPT-Live session: its events
// are the Live sideband's, and its side work the delegations the voice
// hands the gateway (livedelegate.go). Only its holder goroutine touches
// it.
type liveCall struct {
	*held
	sb *realtime.LiveSideband
	// voiceMS is the highest cumulative usage.seconds seen, in ms: the
	// provider's figure is cumulative, never summed.
	voiceMS int64
	closed  string // session.closed's reason, once it came
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

// newLiveCall is h's live driver. Only transcript and delegation events
// are activity for the idle limit: usage updates and reflected audio come
// whether anyone speaks or not.
func newLiveCall(h *held) *liveCall {
	return &liveCall{held: h, voiceMS: h.observed.Session.AudioMillis, delegations: map[string]*delegation{},
		out: make(chan delegationOut, 16), instructions: h.live.Instructions}
}

// attach opens the session's sideband. After a drop nothing is replayed:
// what was said in the gap is lost, and counted.
func (c *liveCall) attach(ctx context.Context, again bool) (source[realtime.LiveEvent], error) {
	sb, err := c.s.rt.AttachLiveRetry(ctx, c.callID, c.s.cfg.AttachWithin)
	if err != nil {
		return nil, err
	}
	if again {
		c.s.metrics.live.reattaches.Inc()
	}
	c.sb = sb
	return sb, nil
}

// dropped: the provider ends a live session with session.closed (handle),
// so a sideband that stops without it dropped, and the session goes on.
func (c *liveCall) dropped(error) (string, bool) { return "", true }

// handle acts on one session event. Types the gateway has no use for,
// and unknown ones, are ignored.
func (c *liveCall) handle(ctx context.Context, ev realtime.LiveEvent) (closed string) {
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
		if r, ok := liveCloseReasons[c.closed]; ok {
			return r
		}
		return ReasonAppClosed
	}
	return ""
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

// hangup asks the provider to end the session; its session.closed, with
// the final usage, follows.
func (c *liveCall) hangup(ctx context.Context) {
	if err := c.sb.CloseSession(ctx); err != nil {
		c.s.log.Warn("live sideband: close not sent", "session_id", c.id, "err", err)
	}
}

// notify: notices are trusted instructions, session-wide.
func (c *liveCall) notify(ctx context.Context, i int) {
	if err := c.sb.Instruct(ctx, "", noticeText[i], ""); err != nil {
		c.s.log.Warn("live sideband: notice not sent", "session_id", c.id, "err", err)
	}
}

// beforeEnd closes a session that may be up with nobody holding it (one
// ended in error before the provider closed it) and screens the voice's
// last line, which is over now.
func (c *liveCall) beforeEnd(ctx context.Context, reason string) {
	if reason == ReasonError && c.closed == "" {
		c.s.closeLive(ctx, c.callID)
	}
	c.screenSpoken(ctx, true)
}

// flush stops the delegations first, so what their loops used is in the
// usage saved.
func (c *liveCall) flush(ctx context.Context) {
	c.stopLoops(ctx)
	c.s.noteUsage(c.id, c.usage())
	c.s.saveUsage(ctx, c.id)
}

// results are the delegations' progress and ends.
func (c *liveCall) results() <-chan delegationOut { return c.out }

// due starts the delegations the transcript now covers (or whose wait ran
// out) and tells the voice of those past their deadline.
func (c *liveCall) due(ctx context.Context, now time.Time) {
	c.startReady(ctx, now)
	c.expire(ctx, now)
}

// release cancels the delegations still running: the session is over, or
// another replica holds it.
func (c *liveCall) release() {
	for _, d := range c.delegations {
		if d.cancel != nil {
			d.cancel()
		}
		endDelegation(d, "released")
	}
}
