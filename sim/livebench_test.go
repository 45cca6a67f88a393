package sim_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3/live"
	"github.com/openai/openai-go/v3/option"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// BenchmarkLiveSessions holds 100 Live sessions open, each with its pion
// phone connected and an openai-go sideband reading every event, with the
// simulator reflecting both audio streams (about 128 kB/s per session). The
// baseline is the same sessions without reflected audio. One iteration is
// one second held; CPU is process user + system time and memory heap +
// goroutine stacks, both for the sim and its clients.
func BenchmarkLiveSessions(b *testing.B) {
	sessions := 100
	if testing.Short() {
		sessions = 10 // the smoke run only checks that it still runs
	}
	for _, reflect := range []bool{false, true} {
		name := "baseline"
		if reflect {
			name = "reflect"
		}
		b.Run(fmt.Sprintf("%s/sessions=%d", name, sessions), func(b *testing.B) {
			s, ts := simtest.NewServer(b, sim.Config{Live: sim.Live{ReflectAudio: reflect}})
			holdSessions(b, s, ts.URL, sessions)
		})
	}
}

func holdSessions(b *testing.B, s *sim.Server, base string, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	memBefore := memInUse()
	client := simtest.Client(base)
	var read atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	errs := make(chan error, n)
	for range n {
		phone := simtest.NewCaller(b)
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			offer, err := phone.Offer(ctx)
			if err != nil {
				errs <- err
				return
			}
			resp, err := client.Live.New(ctx, liveParams(offer, 0))
			if err == nil {
				err = phone.Accept(resp.Transport.Sdp)
			}
			if err != nil {
				errs <- err
				return
			}
			sb, err := client.Live.Sideband.Connect(ctx, resp.Session.ID, live.SidebandConnectionOptions{},
				option.WithQuery("graceful_close", "false"))
			if err != nil {
				errs <- err
				return
			}
			b.Cleanup(sb.Abort)
			go func() {
				for {
					raw, err := sb.RecvRaw(ctx)
					if err != nil {
						return
					}
					read.Add(int64(len(raw)))
				}
			}()
			// The events channel opens over the connected peer's DTLS: a
			// signal, where polling the connection state guessed a pause.
			if err := phone.WaitOpen(ctx); err != nil {
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
	time.Sleep(time.Second) // measurement window: warm-up, the first second is setup, not steady state
	memDuring := memInUse()
	readBefore := read.Load()
	cpuBefore := cpuTime()
	b.ResetTimer()
	start := time.Now()
	time.Sleep(time.Duration(b.N) * time.Second) // measurement window: b.N seconds of steady streaming
	wall := time.Since(start)
	cpu := cpuTime() - cpuBefore
	b.StopTimer()
	held := 0
	for _, st := range s.LiveSessions() {
		if st.Status == "active" && st.ConnectedAt != nil {
			held++
		}
	}
	if held != n {
		b.Errorf("%d sessions held, want %d", held, n)
	}
	perSession := float64(n) * wall.Seconds()
	b.ReportMetric(float64(held), "sessions")
	b.ReportMetric(100*cpu.Seconds()/perSession, "%cpu/session")
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "%cpu-total")
	b.ReportMetric(float64(memDuring-memBefore)/float64(n)/1024, "KiB/session")
	b.ReportMetric(float64(read.Load()-readBefore)/perSession/1000, "kB/s/session")
	b.ReportMetric(0, "ns/op") // one op is one wall-clock second: not a useful figure
}
