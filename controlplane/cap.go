package controlplane

import (
	"context"
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
// cap, the idle limit, the end of a drain, or the mode's side work.
func (c *held) nextWake(d callMode) time.Time {
	next := d.wake(c.lastActivity.Add(c.s.cfg.IdleTimeout))
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

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// noticeTime is when notice i is due, in every mode.
func (c *heldSession) noticeTime(i int) time.Time {
	return c.deadline.Add(-time.Duration((1 - noticeAt[i]) * float64(c.max)))
}

// tick acts on the clock: the mode's side work, notices, then the cap,
// then idleness. It reports that the session must end now (a drain that
// ran out without the provider's close).
func (c *held) tick(ctx context.Context, d callMode, now time.Time) bool {
	if c.ending != "" {
		return !now.Before(c.drainUntil)
	}
	d.due(ctx, now)
	for c.notices < len(noticeAt) && !now.Before(c.noticeTime(c.notices)) {
		c.s.metrics.notices.Inc()
		d.notify(ctx, c.notices)
		c.notices++
	}
	switch {
	case !now.Before(c.deadline):
		c.hangup(ctx, d, ReasonQuota)
	case now.Sub(c.lastActivity) >= c.s.cfg.IdleTimeout:
		c.idleSince = c.lastActivity
		c.hangup(ctx, d, ReasonIdle)
	}
	return false
}
