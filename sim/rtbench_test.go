//go:build unix

package sim_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"
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
		var echo bareEcho
		ts := httptest.NewServer(&echo)
		defer ts.Close()
		defer echo.close()
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
			for callers[i].PC.ConnectionState() != webrtc.PeerConnectionStateConnected {
				if ctx.Err() != nil {
					errs <- ctx.Err()
					return
				}
				time.Sleep(10 * time.Millisecond)
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
	time.Sleep(100 * time.Millisecond) // let the last echoes land
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

// bareEcho answers a call offer with a pion peer that echoes RTP and
// nothing else: the baseline a simulated call's cost is compared with.
type bareEcho struct {
	mu  sync.Mutex
	pcs []*webrtc.PeerConnection
}

func (e *bareEcho) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, pc := range e.pcs {
		_ = pc.Close()
	}
}

func (e *bareEcho) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	api, err := sim.NewOpusAPI(sim.LoopbackSettingEngine())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	e.mu.Lock()
	e.pcs = append(e.pcs, pc)
	e.mu.Unlock()
	out, _ := webrtc.NewTrackLocalStaticRTP(sim.OpusCapability(), "audio", "echo")
	answer, err := func() (string, error) {
		if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: r.FormValue("sdp")}); err != nil {
			return "", err
		}
		if _, err := pc.AddTrack(out); err != nil {
			return "", err
		}
		pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
			buf := make([]byte, 1500)
			for {
				n, _, err := tr.Read(buf)
				if err != nil {
					return
				}
				_, _ = out.Write(buf[:n])
			}
		})
		ans, err := pc.CreateAnswer(nil)
		if err != nil {
			return "", err
		}
		gathered := webrtc.GatheringCompletePromise(pc)
		if err := pc.SetLocalDescription(ans); err != nil {
			return "", err
		}
		<-gathered
		return pc.LocalDescription().SDP, nil
	}()
	if err != nil {
		_ = pc.Close()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Location", "/v1/realtime/calls/rtc_"+strings.Repeat("0", 8))
	w.Header().Set("Content-Type", "application/sdp")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write([]byte(answer))
}
