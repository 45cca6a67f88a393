package controlplane

import (
	"context"
	"encoding/json"
	"time"
)

// Cap notices: the share of the reservation after which the user hears
// that the session is nearly over.
var noticeAt = [...]float64{0.80, 0.95}

// notice is what the model is asked to say at each notice.
var noticeText = [...]string{
	"Tell the user briefly, in their language, that this voice session is nearly out of time.",
	"Tell the user in a few words, in their language, that this voice session ends in a moment.",
}

// nextWake is when the holder must next look at the clock: a notice, the
// cap, the idle limit, or the end of a drain.
func (c *call) nextWake() time.Time {
	next := c.lastActivity.Add(c.s.cfg.IdleTimeout)
	if c.ending != "" {
		next = c.drainUntil
	} else if c.notices < len(noticeAt) {
		next = earliest(next, c.noticeTime(c.notices))
	} else {
		next = earliest(next, c.deadline)
	}
	return next
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// noticeTime is when notice i is due: sideband, relay and live alike.
func (c *heldSession) noticeTime(i int) time.Time {
	return c.deadline.Add(-time.Duration((1 - noticeAt[i]) * float64(c.max)))
}

// tick acts on the clock: notices, then the cap, then idleness. It
// reports that the session must end now (a drain that ran out).
func (c *call) tick(ctx context.Context, now time.Time) bool {
	if c.ending != "" {
		return !now.Before(c.drainUntil)
	}
	for c.notices < len(noticeAt) && !now.Before(c.noticeTime(c.notices)) {
		c.notify(c.notices)
		c.notices++
	}
	switch {
	case !now.Before(c.deadline):
		c.hangup(ctx, ReasonQuota)
	case now.Sub(c.lastActivity) >= c.s.cfg.IdleTimeout:
		c.idleSince = c.lastActivity
		c.hangup(ctx, ReasonIdle)
	}
	return false
}

// notify asks the model to speak notice i. A response already under way
// refuses it (the provider answers with an error event); the user hears
// the next one.
func (c *call) notify(i int) {
	ev, _ := json.Marshal(map[string]any{"type": "response.create", "response": map[string]any{"instructions": noticeText[i]}})
	c.s.metrics.notices.Inc()
	c.send(ev)
}
