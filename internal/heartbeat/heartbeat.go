// Package heartbeat runs periodic work: for long-held requests (a chat
// stream's pings, a quota lease's renewals) on runtime timers instead of a
// goroutine each, since a replica may hold thousands of turns waiting on a
// model and a parked goroutine's stack costs kilobytes where a timer costs
// a few words until it fires; and the replica's background loops (sweeps,
// purges, refreshes, the voice lease), which hold a goroutine each anyway.
package heartbeat

import (
	"context"
	"sync"
	"time"
)

// Start calls beat every period, each period counted from the end of the
// previous beat, until beat returns false, ctx ends, or stop is called.
// The ctx a beat gets ends when stop is called. stop waits for a beat in
// progress, so none runs after it returns; it is safe to call more than
// once.
func Start(ctx context.Context, every time.Duration, beat func(context.Context) bool) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex // held by a beat, and by stop to wait for one
	mu.Lock()
	defer mu.Unlock()
	var timer *time.Timer
	timer = time.AfterFunc(every, func() {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() == nil && beat(ctx) && ctx.Err() == nil {
			timer.Reset(every)
		}
	})
	return func() {
		cancel()
		timer.Stop()
		mu.Lock()
		defer mu.Unlock()
	}
}

// Every calls tick every period until ctx ends, and returns once no tick
// is running: the body of a background loop's Run. A loop that also works
// at once calls tick itself first. Periods are counted from the start of
// the previous period, as a lease's renewals must be, and a tick that runs
// long makes the next one come at once instead of queueing more; none
// starts after ctx has ended. A period that is not positive panics, as in
// time.NewTicker.
func Every(ctx context.Context, every time.Duration, tick func(context.Context)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if ctx.Err() != nil {
				return
			}
			tick(ctx)
		}
	}
}
