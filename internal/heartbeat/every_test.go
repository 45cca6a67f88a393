package heartbeat_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/heartbeat"
)

// Every ticks until its ctx ends and returns only once the tick running
// then has returned; none starts after.
func TestEveryTicksUntilCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	third := make(chan struct{})
	var n, running atomic.Int64
	var overlapped, late atomic.Bool
	returned := make(chan struct{})
	var done atomic.Bool
	go func() {
		defer close(returned)
		heartbeat.Every(ctx, time.Millisecond, func(tctx context.Context) {
			if running.Add(1) > 1 {
				overlapped.Store(true)
			}
			defer running.Add(-1)
			if done.Load() {
				late.Store(true)
			}
			if n.Add(1) == 3 {
				close(third)
				<-tctx.Done() // the third tick is in progress when ctx ends
			}
		})
		done.Store(true)
	}()
	<-third
	cancel()
	<-returned
	if got := running.Load(); got != 0 {
		t.Fatalf("got %d ticks running after Every returned, want 0", got)
	}
	if got := n.Load(); got != 3 {
		t.Fatalf("got %d ticks, want 3 (none after the cancelled one)", got)
	}
	if overlapped.Load() || late.Load() {
		t.Fatalf("got overlapping %v, after return %v; want neither", overlapped.Load(), late.Load())
	}
}

func TestEveryRefusesAZeroPeriod(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Fatal("got no panic for a zero period, want one (it would spin)")
		}
	}()
	heartbeat.Every(context.Background(), 0, func(context.Context) {})
}
