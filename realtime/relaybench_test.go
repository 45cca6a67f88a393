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

// latencyRow is one way of carrying the benchmark's calls: its phones and
// what they measured.
type latencyRow struct {
	name       string
	phones     []*phone
	rtts       []time.Duration
	cpu        time.Duration
	sent, lost int
}

// echoWait bounds the wait for a phase's last echoes: a packet not back by
// then is counted lost (a socket's buffer overflowing drops packets).
const echoWait = 3 * time.Second

// phase streams k packets (20 ms apart) on every phone of r at once and
// adds the round trips of those that came back, the packets lost and the
// process CPU it took to r. The phones' send times are spread evenly over
// the 20 ms: independent calls do not send in step (aligned, every call's
// packet leaves in the same instant).
func (r *latencyRow) phase(ctx context.Context, k int, aligned bool) {
	before := make([]int, len(r.phones))
	for i, p := range r.phones {
		before[i] = len(p.heard())
	}
	cpu := cpuTime()
	start := time.Now()
	var wg sync.WaitGroup
	for i, p := range r.phones {
		wg.Go(func() {
			if !aligned {
				time.Sleep(time.Until(start.Add(time.Duration(i) * 20 * time.Millisecond / time.Duration(len(r.phones)))))
			}
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for range k {
				_ = p.send()
				<-tick.C
			}
		})
	}
	wg.Wait()
	wait, cancel := context.WithTimeout(ctx, echoWait)
	defer cancel()
	for i, p := range r.phones {
		h := p.heardUntil(wait, before[i]+k)[before[i]:]
		h = h[:min(len(h), k)]
		for _, x := range h {
			r.rtts = append(r.rtts, x.rtt)
		}
		r.sent += k
		r.lost += k - len(h)
	}
	r.cpu += cpuTime() - cpu
}

// The added forwarding latency. Phones send Opus packets carrying their
// send time to an echo and read the round trip when the packet is back,
// three ways in one run: to a bare pion peer that only echoes (the floor:
// two pion peers), straight to the simulator's echo (as sideband mode's
// media goes), and through a relay to the simulator: all relays on one
// shared UDP port (one pion mux reader for every packet), and all on four
// (voice.relay.udp_sockets: 4). The rows take turns a second at a time, so a change in the machine's load
// falls on all three alike; the figures are each row's round-trip p50
// and p99 and its process CPU per call-second.
//
//	VOXGATE_RELAY_CALLS=1,100 go test ./realtime -run '^$' -bench 'RelayLatency' -benchtime 200x
//
// VOXGATE_RELAY_ALIGNED=1 sends every call's packet in the same instant
// (the worst burst) instead of spreading them over the 20 ms.
func BenchmarkRelayLatency(b *testing.B) {
	aligned := os.Getenv("VOXGATE_RELAY_ALIGNED") != ""
	for _, n := range benchCalls() {
		b.Run(fmt.Sprintf("calls=%d", n), func(b *testing.B) {
			s, ts := simtest.NewServer(b, sim.Config{Latency: simtest.ZeroLatency()})
			_, echo := simtest.NewBareEcho(b)
			c, ec := benchClient(b, ts.URL), benchClient(b, echo.URL)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			rows := []*latencyRow{{name: "echo"}, {name: "direct"}, {name: "relay"}, {name: "relay4"}}
			shared := newNetwork(b, realtime.NetworkParams{}, false)
			shared4 := newNetwork(b, realtime.NetworkParams{UDPAddr: "127.0.0.1:0", UDPSockets: 4}, false)
			for range n {
				p := newPhone(b, phoneOpts{})
				dialDirect(ctx, b, ec, p)
				rows[0].phones = append(rows[0].phones, p)
				p = newPhone(b, phoneOpts{})
				dialDirect(ctx, b, c, p)
				rows[1].phones = append(rows[1].phones, p)
				p = newPhone(b, phoneOpts{})
				newRelayEnvWith(b, s, c, relayOpts{reports: realtime.DefaultReportInterval, shared: shared}).connect(ctx, b, p, false)
				rows[2].phones = append(rows[2].phones, p)
				p = newPhone(b, phoneOpts{})
				newRelayEnvWith(b, s, c, relayOpts{reports: realtime.DefaultReportInterval, shared: shared4}).connect(ctx, b, p, false)
				rows[3].phones = append(rows[3].phones, p)
			}
			for _, r := range rows { // first packets set up pion's streams
				r.phase(ctx, 10, aligned)
				r.rtts, r.cpu, r.sent, r.lost = nil, 0, 0, 0
			}
			b.ResetTimer()
			const round = 50 // packets: one second
			for i, left := 0, b.N; left > 0; i++ {
				k := min(round, left)
				left -= k
				for j := range rows {
					rows[(i+j)%len(rows)].phase(ctx, k, aligned)
				}
			}
			b.StopTimer()
			callSeconds := float64(n) * float64(b.N) * 0.02
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			p50, p99 := map[string]time.Duration{}, map[string]time.Duration{}
			for _, r := range rows {
				p50[r.name], p99[r.name] = pct(r.rtts, 0.5), pct(r.rtts, 0.99)
				b.ReportMetric(ms(p50[r.name]), r.name+"-p50-ms")
				b.ReportMetric(ms(p99[r.name]), r.name+"-p99-ms")
				b.ReportMetric(r.cpu.Seconds()/callSeconds*100, r.name+"-cpu-%/call")
				b.ReportMetric(float64(r.lost)/float64(r.sent)*100, r.name+"-lost-%")
			}
			b.ReportMetric(ms(p50["relay"]-p50["direct"]), "added-p50-ms")
			b.ReportMetric(ms(p99["relay"]-p99["direct"]), "added-p99-ms")
			b.ReportMetric(ms(p50["relay4"]-p50["direct"]), "added4-p50-ms")
			b.ReportMetric(ms(p99["relay4"]-p99["direct"]), "added4-p99-ms")
			b.ReportMetric(rows[2].cpu.Seconds()/rows[0].cpu.Seconds(), "relay/echo-cpu")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// benchClient is a client of the simulator (or an echo) at base.
func benchClient(b *testing.B, base string) *realtime.Client {
	b.Helper()
	noRetry := 0
	c, err := realtime.New(realtime.Params{BaseURL: base + "/v1", APIKey: simtest.TestKey, Timeout: 30 * time.Second, MaxRetries: &noRetry})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// Connected calls carrying no media: what holding them costs. In one run:
// N plain pion peer pairs (a phone and a bare echo, no relay) alone, then
// N relayed calls (all on one shared network, as a replica's are) added
// beside them, then the relayed calls alone once the pairs are closed.
// Each window is the process's CPU (getrusage) over the same wall time;
// memory is the heap and stacks each set added.
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
			echo, ets := simtest.NewBareEcho(b)
			c, ec := benchClient(b, ts.URL), benchClient(b, ets.URL)
			shared := newNetwork(b, realtime.NetworkParams{}, false)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			defer cancel()
			connect := func(dial func(*phone)) (mem uint64, phones []*phone) {
				var m0, m1 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m0)
				for range n {
					p := newPhone(b, phoneOpts{})
					dial(p)
					phones = append(phones, p)
				}
				runtime.GC()
				runtime.ReadMemStats(&m1)
				return (m1.HeapInuse + m1.StackInuse) - (m0.HeapInuse + m0.StackInuse), phones
			}
			measure := func() time.Duration {
				c0 := cpuTime()
				time.Sleep(window) // the measured window itself, not a wait for a condition
				return cpuTime() - c0
			}
			b.ResetTimer()
			pMem, pairs := connect(func(p *phone) { dialDirect(ctx, b, ec, p) })
			pCPU := measure()
			rMem, _ := connect(func(p *phone) {
				newRelayEnvWith(b, s, c, relayOpts{reports: realtime.DefaultReportInterval, shared: shared}).connect(ctx, b, p, false)
			})
			bothCPU := measure()
			for _, p := range pairs {
				_ = p.pc.Close()
			}
			echo.Close()
			// The pairs' teardown (their goroutines ending, their memory
			// freed) is not the relayed calls' cost: settle before the window.
			runtime.GC()
			time.Sleep(window / 2)
			rCPU := measure()
			b.StopTimer()
			core := func(cpu time.Duration) float64 { return cpu.Seconds() / window.Seconds() * 100 }
			b.ReportMetric(core(pCPU), "pairs-cpu-%")
			b.ReportMetric(core(bothCPU-pCPU), "relayed-beside-pairs-cpu-%")
			b.ReportMetric(core(rCPU), "relayed-alone-cpu-%")
			b.ReportMetric(float64(pMem)/float64(n)/1024, "pair-KB")
			b.ReportMetric(float64(rMem)/float64(n)/1024, "relayed-KB")
			b.ReportMetric(0, "ns/op")
		})
	}
}
