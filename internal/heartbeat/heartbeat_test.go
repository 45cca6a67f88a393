package heartbeat_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/heartbeat"
)

func TestBeatsUntilStopped(t *testing.T) {
	var n atomic.Int64
	stop := heartbeat.Start(context.Background(), time.Millisecond, func(context.Context) bool {
		n.Add(1)
		return true
	})
	deadline := time.Now().Add(5 * time.Second)
	for n.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d beats in 5 s, want at least 3", n.Load())
		}
		time.Sleep(time.Millisecond)
	}
	stop()
	stop() // a second stop is harmless
	after := n.Load()
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

func TestFalseOrCancelEndsTheBeats(t *testing.T) {
	var n atomic.Int64
	stop := heartbeat.Start(context.Background(), time.Millisecond, func(context.Context) bool {
		n.Add(1)
		return false
	})
	defer stop()
	time.Sleep(30 * time.Millisecond)
	if got := n.Load(); got != 1 {
		t.Fatalf("%d beats, want 1 (the beat returned false)", got)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var m atomic.Int64
	stop2 := heartbeat.Start(ctx, time.Millisecond, func(context.Context) bool {
		m.Add(1)
		return true
	})
	defer stop2()
	for m.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	time.Sleep(5 * time.Millisecond) // a beat already due may still run once
	was := m.Load()
	time.Sleep(30 * time.Millisecond)
	if got := m.Load(); got != was {
		t.Fatalf("%d beats after ctx ended", got-was)
	}
}
