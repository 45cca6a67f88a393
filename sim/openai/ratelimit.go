package openai

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// rateBook keeps what each API key has used of its per-minute limits, for
// the x-ratelimit-* headers. Usage drains continuously at the limit's rate,
// so remaining climbs back and reset is the time until the key is back to
// its full limit, as the real headers describe.
type rateBook struct {
	requests, tokens float64 // limits per minute

	mu   sync.Mutex
	keys map[string]*keyUsage
}

type keyUsage struct {
	requests, tokens float64
	at               time.Time
}

// maxRateKeys bounds the book: any non-empty key is accepted by default, so
// a client inventing keys must not grow it without end.
const maxRateKeys = 4096

func newRateBook(l RateLimits) *rateBook {
	b := &rateBook{requests: defaultRequestsPerMinute, tokens: defaultTokensPerMinute, keys: map[string]*keyUsage{}}
	if l.RequestsPerMinute > 0 {
		b.requests = float64(l.RequestsPerMinute)
	}
	if l.TokensPerMinute > 0 {
		b.tokens = float64(l.TokensPerMinute)
	}
	return b
}

// rateState is what the headers of one answer say.
type rateState struct {
	limitRequests, limitTokens         int
	remainingRequests, remainingTokens int
	resetRequests, resetTokens         time.Duration
}

// charge records one request of the given tokens for key and returns the
// state after it.
func (b *rateBook) charge(now time.Time, key string, tokens int) rateState {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.usage(now, key)
	u.requests++
	u.tokens += float64(tokens)
	return b.state(u)
}

// exhausted returns the state a 429 for too many requests reports: no
// request left, the key's tokens as they stand.
func (b *rateBook) exhausted(now time.Time, key string) rateState {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.state(b.usage(now, key))
	st.remainingRequests = 0
	st.resetRequests = max(st.resetRequests, drainTime(1, b.requests))
	return st
}

// usage returns key's usage drained up to now, adding it if new.
func (b *rateBook) usage(now time.Time, key string) *keyUsage {
	u, ok := b.keys[key]
	if !ok {
		if len(b.keys) >= maxRateKeys {
			b.evict(now)
		}
		u = &keyUsage{at: now}
		b.keys[key] = u
	}
	if elapsed := now.Sub(u.at).Minutes(); elapsed > 0 {
		u.requests = max(0, u.requests-elapsed*b.requests)
		u.tokens = max(0, u.tokens-elapsed*b.tokens)
		u.at = now
	}
	return u
}

// evict drops the keys that are back to their full limits, or, if none
// are, an arbitrary one: a key that comes back starts afresh.
func (b *rateBook) evict(now time.Time) {
	for k, u := range b.keys {
		elapsed := now.Sub(u.at).Minutes()
		if u.requests <= elapsed*b.requests && u.tokens <= elapsed*b.tokens {
			delete(b.keys, k)
		}
	}
	for k := range b.keys {
		if len(b.keys) < maxRateKeys {
			break
		}
		delete(b.keys, k)
	}
}

func (b *rateBook) state(u *keyUsage) rateState {
	return rateState{
		limitRequests:     int(b.requests),
		limitTokens:       int(b.tokens),
		remainingRequests: max(0, int(b.requests-math.Ceil(u.requests))),
		remainingTokens:   max(0, int(b.tokens-math.Ceil(u.tokens))),
		resetRequests:     drainTime(u.requests, b.requests),
		resetTokens:       drainTime(u.tokens, b.tokens),
	}
}

// drainTime is how long used units take to drain at perMinute, to the
// millisecond.
func drainTime(used, perMinute float64) time.Duration {
	return time.Duration(used / perMinute * float64(time.Minute)).Round(time.Millisecond)
}

// set writes the headers, durations in Go's notation ("6ms", "1m0s") as
// the real API writes them.
func (st rateState) set(h http.Header) {
	h.Set("X-Ratelimit-Limit-Requests", strconv.Itoa(st.limitRequests))
	h.Set("X-Ratelimit-Limit-Tokens", strconv.Itoa(st.limitTokens))
	h.Set("X-Ratelimit-Remaining-Requests", strconv.Itoa(st.remainingRequests))
	h.Set("X-Ratelimit-Remaining-Tokens", strconv.Itoa(st.remainingTokens))
	h.Set("X-Ratelimit-Reset-Requests", st.resetRequests.String())
	h.Set("X-Ratelimit-Reset-Tokens", st.resetTokens.String())
}
