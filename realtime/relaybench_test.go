package realtime_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/realtime"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// benchCalls is the concurrent call counts a benchmark runs:
// VOXGATE_RELAY_CALLS ("1,100"), else 1 (and 1 under -short).
func benchCalls() []int {
	v := os.Getenv("VOXGATE_RELAY_CALLS")
	if v == "" || testing.Short() {
		return []int{1}
	}
	var out []int
	for _, f := range splitComma(v) {
		if n, err := strconv.Atoi(f); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

// dialDirect connects a phone straight to the simulator, as sideband mode
// does: the relay's baseline.
func dialDirect(ctx context.Context, b *testing.B, c *realtime.Client, p *phone) string {
	call, err := c.CreateCall(ctx, p.offer(b), session())
	if err != nil {
		b.Fatal(err)
	}
	p.accept(b, call.Answer, false)
	select {
	case <-p.open:
	case <-ctx.Done():
		b.Fatal("direct call did not open")
	}
	return call.ID
}

// phase streams b.N packets (20 ms apart) on every phone at once and
// returns the round trips of the packets after the first 10 of each, and
// the process CPU it took.
func phase(ctx context.Context, b *testing.B, phones []*phone) ([]time.Duration, time.Duration) {
	before := make([]int, len(phones))
	for i, p := range phones {
		before[i] = len(p.heard())
	}
	cpu := cpuTime()
	var wg sync.WaitGroup
	for _, p := range phones {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for range b.N + 10 {
				<-tick.C
				_ = p.send()
			}
		}()
	}
	wg.Wait()
	var rtts []time.Duration
	for i, p := range phones {
		// Every echo is back, or the call lost packets: a bound, not a guess.
		h := p.waitHeard(ctx, b, before[i]+b.N+10)
		for _, x := range h[before[i]+10:] {
			rtts = append(rtts, x.rtt)
		}
	}
	return rtts, cpuTime() - cpu
}

// The added forwarding latency: phones send Opus packets carrying their
// send time to the simulator's echo, first straight (as sideband mode
// does), then through the relay, in one run; the figures are the round
// trips' p50 and p99 and the process's CPU per call-second of each.
//
//	VOXGATE_RELAY_CALLS=1,100 go test ./realtime -run '^$' -bench 'RelayLatency' -benchtime 500x
func BenchmarkRelayLatency(b *testing.B) {
	for _, n := range benchCalls() {
		b.Run(fmt.Sprintf("calls=%d", n), func(b *testing.B) {
			s, ts := simtest.NewServer(b, sim.Config{Latency: simtest.ZeroLatency()})
			noRetry := 0
			c, err := realtime.New(realtime.Params{BaseURL: ts.URL + "/v1", APIKey: simtest.TestKey, Timeout: 30 * time.Second, MaxRetries: &noRetry})
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			// Relayed twice: through the shared UDP port (one reader for
			// every packet of every call), and with a port per leg.
			direct, relayed, ported := make([]*phone, n), make([]*phone, n), make([]*phone, n)
			for i := range n {
				direct[i] = newPhone(b, phoneOpts{})
				dialDirect(ctx, b, c, direct[i])
				relayed[i] = newPhone(b, phoneOpts{})
				newRelayEnvWith(b, s, c, relayOpts{reports: realtime.DefaultReportInterval}).connect(ctx, b, relayed[i], false)
				ported[i] = newPhone(b, phoneOpts{})
				newRelayEnvWith(b, s, c, relayOpts{reports: realtime.DefaultReportInterval, noMux: true}).connect(ctx, b, ported[i], false)
			}
			b.ResetTimer()
			dRTT, dCPU := phase(ctx, b, direct)
			rRTT, rCPU := phase(ctx, b, relayed)
			pRTT, _ := phase(ctx, b, ported)
			b.StopTimer()
			callSeconds := float64(n) * float64(b.N+10) * 0.02
			d50, d99, r50, r99 := pct(dRTT, 0.5), pct(dRTT, 0.99), pct(rRTT, 0.5), pct(rRTT, 0.99)
			p50, p99 := pct(pRTT, 0.5), pct(pRTT, 0.99)
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(d50), "direct-p50-ms")
			b.ReportMetric(ms(d99), "direct-p99-ms")
			b.ReportMetric(ms(r50), "relay-p50-ms")
			b.ReportMetric(ms(r99), "relay-p99-ms")
			b.ReportMetric(ms(r50-d50), "added-p50-ms")
			b.ReportMetric(ms(r99-d99), "added-p99-ms")
			b.ReportMetric(ms(p50-d50), "ports-added-p50-ms")
			b.ReportMetric(ms(p99-d99), "ports-added-p99-ms")
			b.ReportMetric(dCPU.Seconds()/callSeconds*100, "direct-cpu-%/call")
			b.ReportMetric(rCPU.Seconds()/callSeconds*100, "relay-cpu-%/call")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// Connected calls carrying no media: what holding them costs, the relayed
// ones against the same number straight to the simulator, each measured
// over the same wall time in one run (process CPU; heap and stacks added
// by each set).
//
//	VOXGATE_RELAY_CALLS=1000 go test ./realtime -run '^$' -bench 'RelayIdle' -benchtime 1x
func BenchmarkRelayIdle(b *testing.B) {
	window := 10 * time.Second
	if testing.Short() {
		window = time.Second
	}
	for _, n := range benchCalls() {
		b.Run(fmt.Sprintf("calls=%d", n), func(b *testing.B) {
			s, ts := simtest.NewServer(b, sim.Config{Latency: simtest.ZeroLatency()})
			noRetry := 0
			c, err := realtime.New(realtime.Params{BaseURL: ts.URL + "/v1", APIKey: simtest.TestKey, Timeout: 30 * time.Second, MaxRetries: &noRetry})
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			defer cancel()
			measure := func(connect func(*phone)) (cpu time.Duration, mem uint64, phones []*phone) {
				var m0, m1 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m0)
				for range n {
					p := newPhone(b, phoneOpts{})
					connect(p)
					phones = append(phones, p)
				}
				runtime.GC()
				runtime.ReadMemStats(&m1)
				c0 := cpuTime()
				time.Sleep(window) // the measured window itself, not a wait for a condition
				return cpuTime() - c0, (m1.HeapInuse + m1.StackInuse) - (m0.HeapInuse + m0.StackInuse), phones
			}
			b.ResetTimer()
			var ids []string
			dCPU, dMem, direct := measure(func(p *phone) { ids = append(ids, dialDirect(ctx, b, c, p)) })
			// The straight calls end before the relayed window, so each
			// window holds one set.
			for _, p := range direct {
				_ = p.pc.Close()
			}
			testkit.Eventually(b, ctx, "the straight calls ended", func() bool {
				for _, id := range ids {
					if st, ok := s.Call(id); ok && st.Status != "ended" {
						return false
					}
				}
				return true
			})
			rCPU, rMem, _ := measure(func(p *phone) {
				newRelayEnvWith(b, s, c, relayOpts{reports: realtime.DefaultReportInterval}).connect(ctx, b, p, false)
			})
			b.StopTimer()
			per := func(cpu time.Duration) float64 { return cpu.Seconds() / window.Seconds() / float64(n) * 100 }
			b.ReportMetric(per(dCPU), "direct-cpu-%/call")
			b.ReportMetric(per(rCPU), "relay-cpu-%/call")
			b.ReportMetric(per(rCPU-dCPU)*float64(n), "relay-added-cpu-%")
			b.ReportMetric(float64(dMem)/float64(n)/1024, "direct-KB/call")
			b.ReportMetric(float64(rMem)/float64(n)/1024, "relay-KB/call")
			b.ReportMetric(0, "ns/op")
		})
	}
}
