package testkit_test

import (
	"context"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/testkit"
)

func fired(c <-chan time.Time) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// A waiter fires once the clock is set to its instant or later, not
// before; one already due fires at once; Next names the earliest waiter.
func TestClock(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := testkit.NewClock(t0)
	if !fired(c.At(t0)) {
		t.Fatal("a waiter for now did not fire at once")
	}
	late, early := c.At(t0.Add(2*time.Second)), c.At(t0.Add(time.Second))
	if got := c.Next(t, t.Context()); !got.Equal(t0.Add(time.Second)) {
		t.Fatalf("Next: got %v, want t0+1s", got)
	}
	c.Set(t0.Add(999 * time.Millisecond))
	if fired(early) || fired(late) {
		t.Fatal("a waiter fired before its instant")
	}
	c.Set(t0.Add(time.Second))
	if !fired(early) || fired(late) {
		t.Fatal("at t0+1s: want the early waiter fired, the late one not")
	}
	c.Set(t0) // never back
	if got := c.Now(); !got.Equal(t0.Add(time.Second)) {
		t.Fatalf("Now after setting back: got %v, want t0+1s", got)
	}
	if got := c.Next(t, t.Context()); !got.Equal(t0.Add(2 * time.Second)) {
		t.Fatalf("Next: got %v, want t0+2s", got)
	}
}

// Next waits for a waiter that comes later.
func TestClockNextWaits(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	c := testkit.NewClock(t0)
	go c.At(t0.Add(time.Minute))
	if got := c.Next(t, t.Context()); !got.Equal(t0.Add(time.Minute)) {
		t.Fatalf("Next: got %v, want t0+1m", got)
	}
}

// Eventually returns once its condition holds, however many looks that
// takes.
func TestEventually(t *testing.T) {
	t.Parallel()
	n := 0
	testkit.Eventually(t, context.Background(), "the third look", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("looked %d times, want 3", n)
	}
}
