package llm

import (
	"sync"
	"testing"
	"time"
)

func TestBreaker(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }

	t.Run("three failures within five minutes open it", func(t *testing.T) {
		b := newBreaker()
		b.failure(at(0))
		b.failure(at(time.Minute))
		if ok, _ := b.allow(at(2 * time.Minute)); !ok {
			t.Fatal("closed after two failures: got refused")
		}
		b.failure(at(4 * time.Minute))
		if ok, _ := b.allow(at(4*time.Minute + time.Second)); ok {
			t.Fatal("three failures in 4 min: got allowed, want open")
		}
	})
	t.Run("failures older than five minutes do not count", func(t *testing.T) {
		b := newBreaker()
		b.failure(at(0))
		b.failure(at(time.Minute))
		b.failure(at(5*time.Minute + 30*time.Second))
		if state, n, _ := b.snapshot(); state != BreakerClosed || n != 2 {
			t.Fatalf("got %s with %d failures, want closed with 2", state, n)
		}
	})
	t.Run("a success between failures resets the count", func(t *testing.T) {
		b := newBreaker()
		b.failure(at(0))
		b.failure(at(time.Second))
		b.success()
		b.failure(at(2 * time.Second))
		if state, n, _ := b.snapshot(); state != BreakerClosed || n != 1 {
			t.Fatalf("got %s with %d failures, want closed with 1", state, n)
		}
	})
	t.Run("open for 60 s, then exactly one probe among many", func(t *testing.T) {
		b := newBreaker()
		for i := range 3 {
			b.failure(at(time.Duration(i) * time.Second))
		}
		if ok, _ := b.allow(at(61 * time.Second)); ok {
			t.Fatal("59 s after opening: got allowed")
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		probes := 0
		for range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if ok, probe := b.allow(at(62 * time.Second)); ok {
					mu.Lock()
					probes++
					mu.Unlock()
					if !probe {
						t.Error("allowed while half-open without being the probe")
					}
				}
			}()
		}
		wg.Wait()
		if probes != 1 {
			t.Fatalf("probes: got %d, want 1", probes)
		}
		b.failure(at(63 * time.Second)) // the probe fails: open again
		if ok, _ := b.allow(at(122 * time.Second)); ok {
			t.Fatal("59 s after the failed probe: got allowed")
		}
		if ok, probe := b.allow(at(123 * time.Second)); !ok || !probe {
			t.Fatal("60 s after the failed probe: want the next probe")
		}
		b.success()
		if state, _, _ := b.snapshot(); state != BreakerClosed {
			t.Fatalf("after a good probe: got %s, want closed", state)
		}
	})
	t.Run("a probe released without a verdict lets the next one through", func(t *testing.T) {
		b := newBreaker()
		for i := range 3 {
			b.failure(at(time.Duration(i) * time.Second))
		}
		_, probe := b.allow(at(2 * time.Minute))
		b.release(probe)
		if ok, probe := b.allow(at(2 * time.Minute)); !ok || !probe {
			t.Fatal("after a released probe: want another probe")
		}
	})
}
