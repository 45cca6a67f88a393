package heartbeat_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/heartbeat"
	"github.com/voxgate/voxgate/internal/testkit"
)

func TestBeatsUntilStopped(t *testing.T) {
	var n atomic.Int64
	stop := heartbeat.Start(context.Background(), time.Millisecond, func(context.Context) bool {
		n.Add(1)
		return true
	})
	testkit.Eventually(t, context.Background(), "3 beats", func() bool { return n.Load() >= 3 })
	stop()
	stop() // a second stop is harmless
	after := n.Load()
	// measurement window: a wrong stop would let beats run on at 1 ms each;
	// a correct one shows none however long or short the pause.
	time.Sleep(20 * time.Millisecond)
	if got := n.Load(); got != after {
		t.Fatalf("%d beats after stop returned", got-after)
	}
}

// stop cancels the ctx of a beat in progress and returns only after it.
func TestStopWaitsForABeat(t *testing.T) {
	entered := make(chan struct{})
	var finished atomic.Bool
	stop := heartbeat.Start(context.Background(), time.Millisecond, func(ctx context.Context) bool {
		close(entered)
		<-ctx.Done()
		// measurement window: the beat outlives its ctx by this long, the time
		// in which a stop that did not wait for it would return.
		time.Sleep(10 * time.Millisecond)
		finished.Store(true)
		return true
	})
	<-entered
	stop()
	if !finished.Load() {
		t.Fatal("stop returned while a beat was still running")
	}
}

// A beat that returns false, or the ctx ending, ends the beats. The
// tests wait on the first beat, not on a guess at how soon it runs; the
// pauses after it only give a wrong implementation time to beat again, so
// a loaded machine can make them miss a defect but never fail a correct
// implementation.
func TestFalseOrCancelEndsTheBeats(t *testing.T) {
	var n atomic.Int64
	first := make(chan struct{})
	stop := heartbeat.Start(context.Background(), time.Millisecond, func(context.Context) bool {
		if n.Add(1) == 1 {
			close(first)
		}
		return false
	})
	<-first
	// measurement window: time for a wrong implementation to beat again
	// after a beat returned false (see above).
	time.Sleep(30 * time.Millisecond)
	stop()
	if got := n.Load(); got != 1 {
		t.Fatalf("%d beats, want 1 (the beat returned false)", got)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var m atomic.Int64
	began := make(chan struct{})
	stop2 := heartbeat.Start(ctx, time.Millisecond, func(context.Context) bool {
		if m.Add(1) == 1 {
			close(began)
		}
		return true
	})
	defer stop2()
	<-began
	cancel()
	was := m.Load()
	// measurement window: time for a wrong implementation to keep beating
	// after its ctx ended (see above).
	time.Sleep(30 * time.Millisecond)
	if got := m.Load(); got > was+1 { // a beat already due may still run once
		t.Fatalf("%d beats after ctx ended, want at most 1", got-was)
	}
}
