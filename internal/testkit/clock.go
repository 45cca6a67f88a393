package testkit

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// Clock is a clock the test moves on by hand, for the code that takes one
// (controlplane.Params.Clock) in place of waiting for real time to pass.
// At's channels receive once the clock reaches their instant.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
	added   chan struct{} // closed, and replaced, when a waiter is added
}

type waiter struct {
	at time.Time
	c  chan time.Time
}

// NewClock is a clock that reads t0 until it is moved.
func NewClock(t0 time.Time) *Clock { return &Clock{now: t0, added: make(chan struct{})} }

// Now is the time the clock reads.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// At returns a channel that receives once the clock reads t or later.
func (c *Clock) At(t time.Time) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if !t.After(c.now) {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, waiter{t, ch})
	close(c.added)
	c.added = make(chan struct{})
	return ch
}

// Set moves the clock on to t (never back) and wakes the waiters due.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
	c.waiters = slices.DeleteFunc(c.waiters, func(w waiter) bool {
		if w.at.After(c.now) {
			return false
		}
		w.c <- c.now
		return true
	})
}

// Next waits until something waits on the clock and returns the earliest
// instant waited for: where the code under test next acts.
func (c *Clock) Next(tb testing.TB, ctx context.Context) time.Time {
	tb.Helper()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, Wait)
		defer cancel()
	}
	for {
		c.mu.Lock()
		added := c.added
		var next time.Time
		for _, w := range c.waiters {
			if next.IsZero() || w.at.Before(next) {
				next = w.at
			}
		}
		c.mu.Unlock()
		if !next.IsZero() {
			return next
		}
		select {
		case <-added:
		case <-ctx.Done():
			tb.Fatal("timed out waiting for something to wait on the clock")
		}
	}
}
