package controlplane_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
)

// Holding live sessions with the provider reflecting both audio streams
// to the sideband at the API's rate (about 128 kB/s a session, all of it
// read and discarded by type), beside the same sessions without reflected
// audio, in one run: the gateway's memory (heap and goroutine stacks)
// and CPU time per session, and so the share of its CPU that goes on
// discarding the audio. Real parts throughout: the simulator's GPT-Live
// sessions with a pion phone connected to each, the openai-go sideband,
// PostgreSQL, the holder and the lease loop. The simulator and the phones
// run in a child process (livephones_test.go), so the figures are the
// gateway's alone; the child's are reported beside them.
//
// Under -short (scripts/bench-smoke.sh) it holds 10 sessions for a second.
func BenchmarkLiveHeld(b *testing.B) {
	counts, window := []int{100, 500}, 10*time.Second
	if testing.Short() {
		counts, window = []int{10}, time.Second
	}
	for _, n := range counts {
		for _, reflect := range []bool{false, true} {
			b.Run(fmt.Sprintf("sessions=%d/reflect=%v", n, reflect), func(b *testing.B) {
				benchLiveHeld(b, n, reflect, window)
			})
		}
	}
}

func benchLiveHeld(b *testing.B, n int, reflect bool, window time.Duration) {
	phones := startLivePhones(b, sim.Live{ReflectAudio: reflect, ConnectTimeout: time.Hour, TurnPackets: 1 << 20})
	stub, err := sim.New(sim.Config{}) // the fixture's own; the child serves every request
	if err != nil {
		b.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	f := newFixture(b, options{sim: stub, simURL: phones.url, poolSize: 8, backend: "gpt-4.1-mini", registry: reg,
		configFn: func(c *config.Voice) { c.IdleTimeout = time.Hour }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.svc.Run(ctx)
	before := heldMem()

	placeLive(b, f, phones, n)
	placed, cancelPlaced := context.WithTimeout(ctx, 5*time.Minute)
	defer cancelPlaced()
	var r, c phoneReply
	testkit.Eventually(b, placed, fmt.Sprintf("%d phones connected, their sessions active, sideband-attached and held", n), func() bool {
		var err error
		if r, err = phones.do(phoneCmd{Op: "stats"}); err != nil {
			b.Fatal(err)
		}
		if c, err = phones.do(phoneCmd{Op: "connected"}); err != nil {
			b.Fatal(err)
		}
		return c.Connected == n && r.Active >= n && r.Sidebands >= int64(n) && f.svc.Held() == n
	})
	// measurement window: a warm-up kept out of the measurement, for setup's
	// garbage and the first reflected frames to settle (nothing signals it).
	time.Sleep(2 * time.Second)
	during := heldMem()
	child0, err := phones.do(phoneCmd{Op: "stats"})
	if err != nil {
		b.Fatal(err)
	}
	cpu0, began := processCPU(), time.Now()
	b.ResetTimer()
	for range b.N {
		time.Sleep(window) // measurement window: the held calls over this window are what is measured
	}
	b.StopTimer()
	cpu, took := processCPU()-cpu0, time.Since(began)
	child1, err := phones.do(phoneCmd{Op: "stats"})
	if err != nil {
		b.Fatal(err)
	}
	if f.svc.Held() != n || child1.Active != child0.Active || child1.Sidebands != child0.Sidebands {
		b.Fatalf("held %d, %d active, sidebands %d → %d: a session or its sideband was lost", f.svc.Held(), child1.Active,
			child0.Sidebands, child1.Sidebands)
	}
	if re := sumMetric(b, reg, "voxgate_voice_live_reattaches_total"); re > 0 {
		b.Fatalf("%v re-attaches while held", re)
	}
	rate := float64(child1.Reflected-child0.Reflected) / took.Seconds() / float64(n)
	if reflect && rate < 120_000 || !reflect && rate != 0 {
		b.Fatalf("reflected audio %.0f B/s a session (reflect %v)", rate, reflect)
	}
	perSec := took.Seconds() * float64(n)
	b.ReportMetric(float64(n), "sessions")
	b.ReportMetric(float64(int64(during)-int64(before))/float64(n)/1000, "KB/session")
	b.ReportMetric(float64(cpu.Microseconds())/perSec, "cpu-µs/s/session")
	b.ReportMetric(100*cpu.Seconds()/took.Seconds(), "%cpu-total")
	b.ReportMetric(rate/1000, "reflected-kB/s/session")
	b.ReportMetric(float64((child1.CPU-child0.CPU).Microseconds())/perSec, "child-cpu-µs/s/session")
	b.ReportMetric(float64(child1.Mem)/float64(n)/1000, "child-KB/session")
	b.ReportMetric(0, "ns/op")
}

// placeLive starts n live sessions through the gateway, each placed by a
// phone of the child's, two at a time: with the audio of those placed
// already reflecting, more at once made the simulator's answers miss the
// provider timeout on this 2-core machine.
func placeLive(b *testing.B, f fixture, phones *livePhones, n int) {
	b.Helper()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			p := auth.Principal{UserID: newUser(b, "pro").UserID, Plan: "pro"}
			w := call(b, f.svc.HandleStart, p, "POST", "/v1/voice/sessions", []byte(`{"mode":"live"}`), "")
			if w.Code != http.StatusCreated {
				errs <- fmt.Errorf("start: %d %s", w.Code, w.Body)
				return
			}
			var start controlplane.StartResponse
			if err := json.Unmarshal(w.Body.Bytes(), &start); err != nil {
				errs <- err
				return
			}
			// An offer the provider did not answer in time (the machine
			// saturated) is placed again after the 503's retry_after_s, with
			// a new phone, as an app would; the unanswered one stays idle.
			var offer phoneReply
			for try := 1; ; try++ {
				var err error
				if offer, err = phones.do(phoneCmd{Op: "offer"}); err != nil {
					errs <- err
					return
				}
				w = postOffer(b, f, p, start.SessionID, "application/sdp", offer.SDP)
				if w.Code == http.StatusCreated {
					break
				}
				if w.Code != http.StatusServiceUnavailable || try == 5 {
					errs <- fmt.Errorf("offer: %d %s", w.Code, w.Body)
					return
				}
				// measurement window: an app's pause before placing the offer
				// again after a 503 (see retry_after_s above), not a wait for state.
				time.Sleep(time.Second)
			}
			if _, err := phones.do(phoneCmd{Op: "accept", Phone: offer.Phone, SDP: w.Body.String()}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// heldMem is the heap and goroutine stacks in use after a collection.
func heldMem() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse + ms.StackInuse
}
