//go:build unix

package sim_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// BenchmarkRealtimeCalls holds N WebRTC calls open at once, each caller
// sending 50 Opus packets a second that the simulator echoes, with the
// pion callers in the same process. One iteration is one second of all N
// calls streaming. It reports CPU (user+sys, both sides) and memory (heap +
// stacks, both sides) per call, beside a baseline measured in the same run:
// the same callers against a bare pion peer that only echoes (no session,
// no events, no script).
//
//	go test ./sim -run '^$' -bench BenchmarkRealtimeCalls -benchtime 10x
func BenchmarkRealtimeCalls(b *testing.B) {
	const calls = 100
	b.Run(fmt.Sprintf("baseline/calls=%d", calls), func(b *testing.B) {
		_, ts := simtest.NewBareEcho(b)
		streamCalls(b, ts.URL, calls)
	})
	b.Run(fmt.Sprintf("sim/calls=%d", calls), func(b *testing.B) {
		s, err := sim.New(sim.Config{Latency: simtest.ZeroLatency()})
		if err != nil {
			b.Fatal(err)
		}
		ts := httptest.NewServer(s)
		defer ts.Close()
		defer s.Close()
		streamCalls(b, ts.URL, calls)
		if live := len(s.Calls()); live < calls {
			b.Errorf("sim lists %d calls, want %d", live, calls)
		}
	})
}

// streamCalls dials n calls, then streams for b.N seconds and reports.
func streamCalls(b *testing.B, base string, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	memBefore := memInUse()
	callers := make([]*simtest.Caller, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	errs := make(chan error, n)
	for i := range callers {
		callers[i] = simtest.NewCaller(b)
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, err := callers[i].DialMultipart(ctx, base, simtest.TestKey, recipeSession); err != nil {
				errs <- err
				return
			}
			// The events channel opens over the connected peer's DTLS: a
			// signal, where polling the connection state guessed a pause.
			if err := callers[i].WaitOpen(ctx); err != nil {
				errs <- err
				return
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}

	var sent int64
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	stream := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); {
			<-tick.C
			for _, c := range callers {
				if c.SendPacket() == nil {
					sent++
				}
			}
		}
	}
	stream(time.Second) // warm up: jitter in the first second is setup, not steady state
	memDuring := memInUse()
	recvBefore, sentBefore := received(callers), sent
	cpuBefore := cpuTime()
	b.ResetTimer()
	start := time.Now()
	stream(time.Duration(b.N) * time.Second)
	wall := time.Since(start)
	cpu := cpuTime() - cpuBefore
	b.StopTimer()
	// measurement window: the echoes' tail; a lost echo never lands, so no
	// count signals the last one, and the ratio is taken after this grace.
	time.Sleep(100 * time.Millisecond)
	echoed := float64(received(callers)-recvBefore) / float64(sent-sentBefore)

	callSeconds := float64(n) * wall.Seconds()
	b.ReportMetric(float64(n), "calls")
	b.ReportMetric(100*cpu.Seconds()/callSeconds, "%cpu/call")
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "%cpu-total")
	b.ReportMetric(float64(memDuring-memBefore)/float64(n)/1024, "KiB/call")
	b.ReportMetric(100*echoed, "%echoed")
	b.ReportMetric(0, "ns/op") // one op is one wall-clock second: not a useful figure
	for _, c := range callers {
		c.Close()
	}
}

func received(cs []*simtest.Caller) int64 {
	var n int64
	for _, c := range cs {
		n += c.PacketsReceived()
	}
	return n
}

// cpuTime is this process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
