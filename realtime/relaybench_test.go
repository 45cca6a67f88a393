package realtime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/voxgate/voxgate/realtime"
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

// dialDirect connects a phone straight to the peer c calls (the
// simulator, or a bare echo), as sideband mode does.
func dialDirect(ctx context.Context, tb testing.TB, c *realtime.Client, p *phone) string {
	call, err := c.CreateCall(ctx, p.offer(tb), session())
	if err != nil {
		tb.Fatal(err)
	}
	p.accept(tb, call.Answer, false)
	select {
	case <-p.open:
	case <-ctx.Done():
		tb.Fatal("direct call did not open")
	}
	return call.ID
}

// latencyRow is one way of carrying the benchmark's calls: its phones,
// the process whose CPU is its cost, and what they measured.
type latencyRow struct {
	name       string
	proc       *peer
	phones     []*phone
	rtts       []time.Duration
	cpu        time.Duration
	sent, lost int
	fwd        [len(realtime.ForwardBuckets) + 1]uint64
}

// echoWait bounds the wait for a phase's last echoes: a packet not back by
// then is counted lost (a socket's buffer overflowing drops packets).
const echoWait = 3 * time.Second

// phase streams k packets (20 ms apart) on every phone of r at once and
// adds the round trips of those that came back, the packets lost, and the
// CPU r's process took, to r. The phones' send times are spread evenly
// over the 20 ms: independent calls do not send in step (aligned, every
// call's packet leaves in the same instant).
func (r *latencyRow) phase(ctx context.Context, tb testing.TB, k int, aligned bool) {
	before := make([]int, len(r.phones))
	for i, p := range r.phones {
		before[i] = len(p.heard())
	}
	s0 := r.proc.stats(tb, false)
	start := time.Now()
	var wg sync.WaitGroup
	for i, p := range r.phones {
		wg.Go(func() {
			if !aligned {
				// measurement window: the phones' frames are staggered over a
				// 20 ms frame, the traffic pattern being measured.
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
	s1 := r.proc.stats(tb, false)
	r.cpu += s1.CPU - s0.CPU
	for i := range r.fwd {
		r.fwd[i] += s1.Forward[i] - s0.Forward[i]
	}
}

// The added forwarding latency. Phones send Opus packets carrying their
// send time to an echo and read the round trip when the packet is back,
// three ways in one run: to a bare pion peer that only echoes (the floor:
// two pion peers), straight to the simulator's echo (as sideband mode's
// media goes), and through a relay to the simulator: all relays on one
// shared UDP port (one pion mux reader for every packet), and all on four
// (voice.relay.udp_sockets: 4). The phones, the bare echo, the simulator
// and the relay are four processes (benchproc_test.go). The rows take
// turns a second at a time, so a change in the machine's load falls on all
// alike. The figures are each row's round-trip p50 and p99, the CPU per
// call-second of the process that serves it (the echo's, the simulator's,
// the relay's), and the relay's own forwarding time (read off one leg to
// written on the other) from its histogram.
//
//	VOXGATE_RELAY_CALLS=1,100 go test ./realtime -run '^$' -bench 'RelayLatency' -benchtime 200x
//
// VOXGATE_RELAY_PIN=1 gives the relay a CPU of its own and the phones, the
// echo and the simulator the other (pinWorld): the relay's figures without
// the rest of the benchmark's load on its core.
//
// VOXGATE_RELAY_PROFILE=dir writes the relay's CPU profile over the first
// 8 s of the rows' turns to dir/relay-latency-N.pprof.
//
// VOXGATE_RELAY_ALIGNED=1 sends every call's packet in the same instant
// (the worst burst) instead of spreading them over the 20 ms.
func BenchmarkRelayLatency(b *testing.B) {
	aligned := os.Getenv("VOXGATE_RELAY_ALIGNED") != ""
	for _, n := range benchCalls() {
		b.Run(fmt.Sprintf("calls=%d", n), func(b *testing.B) {
			pinned := pinWorld(b)
			echo, simp := startPeer(b, "echo", pinned), startPeer(b, "sim", pinned)
			relay := startPeer(b, "relay", pinned, "VOXGATE_BENCH_SIM="+strings.TrimSuffix(simp.Calls, "/"))
			c, ec := benchClient(b, simp.Calls), benchClient(b, echo.Calls)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			rows := []*latencyRow{{name: "echo", proc: echo}, {name: "direct", proc: simp},
				{name: "relay", proc: relay}, {name: "relay4", proc: relay}}
			for range n {
				p := newPhone(b, phoneOpts{})
				dialDirect(ctx, b, ec, p)
				rows[0].phones = append(rows[0].phones, p)
				p = newPhone(b, phoneOpts{})
				dialDirect(ctx, b, c, p)
				rows[1].phones = append(rows[1].phones, p)
				p = newPhone(b, phoneOpts{})
				relay.relay(ctx, b, p, 1)
				rows[2].phones = append(rows[2].phones, p)
				p = newPhone(b, phoneOpts{})
				relay.relay(ctx, b, p, 4)
				rows[3].phones = append(rows[3].phones, p)
			}
			for _, r := range rows { // first packets set up pion's streams
				r.phase(ctx, b, 10, aligned)
				r.rtts, r.cpu, r.sent, r.lost, r.fwd = nil, 0, 0, 0, [len(r.fwd)]uint64{}
			}
			b.ResetTimer()
			if dir := os.Getenv("VOXGATE_RELAY_PROFILE"); dir != "" { // the relay's CPU over the rows' first turns
				go func() {
					if err := relay.profile("profile", "seconds=8", filepath.Join(dir, fmt.Sprintf("relay-latency-%d.pprof", n))); err != nil {
						b.Error(err)
					}
				}()
			}
			const round = 50 // packets: one second
			for i, left := 0, b.N; left > 0; i++ {
				k := min(round, left)
				left -= k
				for j := range rows {
					rows[(i+j)%len(rows)].phase(ctx, b, k, aligned)
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
			b.ReportMetric(ms(histPct(rows[2].fwd, 0.5)), "relay-fwd-p50-ms")
			b.ReportMetric(ms(histPct(rows[2].fwd, 0.99)), "relay-fwd-p99-ms")
			b.ReportMetric(rows[2].cpu.Seconds()/rows[0].cpu.Seconds(), "relay/echo-cpu")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// benchClient is a client of the simulator (or an echo) at base.
func benchClient(tb testing.TB, base string) *realtime.Client {
	tb.Helper()
	noRetry := 0
	c, err := realtime.New(realtime.Params{BaseURL: base + "/v1", APIKey: simtest.TestKey, Timeout: 30 * time.Second, MaxRetries: &noRetry})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// Connected calls carrying no media: what holding them costs. N phones
// call a bare echo (N plain pion peers, the floor), and N phones call the
// simulator through the relay (2N legs on one shared network, as a
// replica holds them); the echo and the relay are processes of their own
// (benchproc_test.go). The figures are each process's CPU over the same
// window, its memory per call (heap and stacks after a GC) and the relay's
// goroutines per call.
//
//	VOXGATE_RELAY_CALLS=1000 go test ./realtime -run '^$' -bench 'RelayIdle' -benchtime 1x
//
// VOXGATE_RELAY_PROFILE=dir writes the relay's CPU profile over the window
// to dir/relay-idle.pprof, and its goroutines to dir/relay-idle.goroutines.
func BenchmarkRelayIdle(b *testing.B) {
	window := 10 * time.Second
	if testing.Short() {
		window = time.Second
	}
	for _, n := range benchCalls() {
		b.Run(fmt.Sprintf("calls=%d", n), func(b *testing.B) {
			echo, simp := startPeer(b, "echo", false), startPeer(b, "sim", false)
			relay := startPeer(b, "relay", false, "VOXGATE_BENCH_SIM="+strings.TrimSuffix(simp.Calls, "/"))
			ec := benchClient(b, echo.Calls)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			defer cancel()
			e0, r0 := echo.stats(b, true), relay.stats(b, true)
			b.ResetTimer()
			for range n {
				dialDirect(ctx, b, ec, newPhone(b, phoneOpts{paced: true}))
				relay.relay(ctx, b, newPhone(b, phoneOpts{paced: true}), 1)
			}
			time.Sleep(window / 2) // measurement window: warm-up, the calls' setup (first checks, first reports) is not holding them
			e1, r1 := echo.stats(b, true), relay.stats(b, true)
			if dir := os.Getenv("VOXGATE_RELAY_PROFILE"); dir != "" {
				err := relay.profile("goroutine", "debug=1", filepath.Join(dir, "relay-idle.goroutines"))
				if err == nil {
					err = relay.profile("profile", fmt.Sprintf("seconds=%d", int(window.Seconds())), filepath.Join(dir, "relay-idle.pprof"))
				}
				if err != nil {
					b.Fatal(err)
				}
			} else {
				time.Sleep(window) // measurement window: the measured window itself, not a wait for a condition
			}
			e2, r2 := echo.stats(b, false), relay.stats(b, false)
			b.StopTimer()
			core := func(cpu time.Duration) float64 { return cpu.Seconds() / window.Seconds() * 100 }
			kb := func(a, b uint64) float64 { return (float64(b) - float64(a)) / float64(n) / 1024 }
			b.ReportMetric(core(e2.CPU-e1.CPU), "echo-cpu-%")
			b.ReportMetric(core(r2.CPU-r1.CPU), "relay-cpu-%")
			b.ReportMetric(float64(r2.CPU-r1.CPU)/float64(e2.CPU-e1.CPU), "relay/echo-cpu")
			b.ReportMetric(kb(e0.Mem, e1.Mem), "echo-KB/call")
			b.ReportMetric(kb(r0.Mem, r1.Mem), "relay-KB/call")
			b.ReportMetric(float64(r1.Goroutines-r0.Goroutines)/float64(n), "relay-goroutines/call")
			b.ReportMetric(0, "ns/op")
		})
	}
}
