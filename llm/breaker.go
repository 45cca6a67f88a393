package llm

import (
	"sync"
	"time"
)

// Breaker states, as Status and the metrics name them.
const (
	BreakerClosed   = "closed"
	BreakerOpen     = "open"
	BreakerHalfOpen = "half_open"
)

// The breaker's rule (DESIGN §11): three failures within five minutes, with
// no success between them, open it for a minute; then one request, and
// only one, probes the target.
const (
	breakerFailures = 3
	breakerWindow   = 5 * time.Minute
	breakerOpenFor  = 60 * time.Second
)

// breaker guards one target in one process. Its clock is the router's, so
// tests step through the open minute without waiting it out.
type breaker struct {
	mu       sync.Mutex
	state    string
	failures []time.Time // since the last success, oldest first
	openedAt time.Time
	probing  bool // the half-open probe is out
}

func newBreaker() *breaker { return &breaker{state: BreakerClosed} }

// allow reports whether a request may go to the target now, and whether it
// is the half-open probe (whose verdict must come back through success,
// failure or release).
func (b *breaker) allow(now time.Time) (ok, probe bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case BreakerClosed:
		return true, false
	case BreakerOpen:
		if now.Sub(b.openedAt) < breakerOpenFor {
			return false, false
		}
		b.state = BreakerHalfOpen
	}
	if b.probing {
		return false, false
	}
	b.probing = true
	return true, true
}

// success closes the breaker and forgets the failures before it.
func (b *breaker) success() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state, b.failures, b.probing = BreakerClosed, b.failures[:0], false
}

// failure counts a failure at now; a failed probe opens the breaker again
// at once.
func (b *breaker) failure(now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == BreakerHalfOpen {
		b.state, b.openedAt, b.probing = BreakerOpen, now, false
		return
	}
	if b.state == BreakerOpen {
		return // a request let through before it opened
	}
	keep := b.failures[:0]
	for _, t := range b.failures {
		if now.Sub(t) < breakerWindow {
			keep = append(keep, t)
		}
	}
	b.failures = append(keep, now)
	if len(b.failures) >= breakerFailures {
		b.state, b.openedAt, b.failures = BreakerOpen, now, b.failures[:0]
	}
}

// release hands the probe back when its request ended without a verdict
// on the target (the caller left, or refused the request itself), so the
// next request probes instead.
func (b *breaker) release(probe bool) {
	if !probe {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probing = false
}

// snapshot is the breaker's state and the failures it is counting.
func (b *breaker) snapshot() (state string, failures int, openedAt time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state, len(b.failures), b.openedAt
}
