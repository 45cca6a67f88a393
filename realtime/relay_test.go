package realtime_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/webrtc/v4"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/realtime"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// relayEnv is a relay on loopback in front of the in-process simulator
// (echo mode: it sends each packet it hears straight back).
type relayEnv struct {
	sim    *sim.Server
	client *realtime.Client
	net    *realtime.Network
	relay  *realtime.Relay
	events chan realtime.RelayEvent
}

type relayOpts struct {
	net       realtime.NetworkParams
	shared    *realtime.Network // when set, net is unused: relays share one network, as a replica's do
	intercept func(realtime.Leg, []byte) realtime.Verdict
	silence   time.Duration
	reports   time.Duration // 0: 500 ms, as the tests wait for reports
	noMux     bool          // each leg its own UDP port (from net's range)
	legExtra  func(realtime.Leg) []interceptor.Factory
	// answer rewrites the provider's SDP answer (a provider advertising
	// another a=max-message-size).
	answer func(string) string
	// dialed, when set, sees each provider call the relay placed before the
	// relay applies its answer.
	dialed func(realtime.Call)
	// connect is the provider leg's connect deadline (0: the default).
	connect time.Duration
	// onEvent, when set, sees each event before it is queued.
	onEvent func(*realtimeRelayRef, realtime.RelayEvent)
}

// realtimeRelayRef lets onEvent reach the relay built after it.
type realtimeRelayRef struct{ r *realtime.Relay }

func newRelayEnv(t testing.TB, o relayOpts) *relayEnv {
	t.Helper()
	s, c := newClient(t.(*testing.T), sim.Config{Latency: simtest.ZeroLatency()}, 10*time.Second)
	return newRelayEnvWith(t, s, c, o)
}

func newRelayEnvWith(t testing.TB, s *sim.Server, c *realtime.Client, o relayOpts) *relayEnv {
	t.Helper()
	if o.reports == 0 {
		o.reports = 500 * time.Millisecond
	}
	n := o.shared
	if n == nil {
		n = newNetwork(t, o.net, o.noMux)
	}
	e := &relayEnv{sim: s, client: c, net: n, events: make(chan realtime.RelayEvent, 64)}
	ref := &realtimeRelayRef{}
	r, err := realtime.NewRelay(realtime.RelayParams{
		Network: n,
		Dial: func(ctx context.Context, offer string) (realtime.Call, error) {
			call, err := c.CreateCall(ctx, offer, session())
			if err == nil && o.answer != nil {
				call.Answer = o.answer(call.Answer)
			}
			if err == nil && o.dialed != nil {
				o.dialed(call)
			}
			return call, err
		},
		Intercept:      o.intercept,
		SilenceTimeout: o.silence,
		ConnectTimeout: o.connect,
		ReportInterval: o.reports,
		Interceptors:   o.legExtra,
		OnEvent: func(ev realtime.RelayEvent) {
			if o.onEvent != nil {
				o.onEvent(ref, ev)
			}
			select {
			case e.events <- ev:
			default:
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ref.r = r
	e.relay = r
	t.Cleanup(r.Close) // before the network closes: cleanups run last first
	return e
}

// newNetwork is a relay network on loopback; with mux, one UDP port for
// every leg.
func newNetwork(t testing.TB, np realtime.NetworkParams, noMux bool) *realtime.Network {
	t.Helper()
	np.Loopback = true
	if np.UDPAddr == "" && !noMux {
		np.UDPAddr = "127.0.0.1:0"
	}
	n, err := realtime.NewNetwork(np)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	return n
}

// connect answers the phone through the relay and waits for its channel.
func (e *relayEnv) connect(ctx context.Context, t testing.TB, p *phone, tcpOnly bool) {
	t.Helper()
	answer, err := e.relay.Answer(ctx, p.offer(t))
	if err != nil {
		t.Fatal(err)
	}
	p.accept(t, answer, tcpOnly)
	select {
	case <-p.open:
	case <-ctx.Done():
		t.Fatal("the phone's oai-events channel did not open")
	}
}

// waitEvent returns the first event of kind on leg.
func (e *relayEnv) waitEvent(ctx context.Context, t testing.TB, kind realtime.RelayEventKind, leg realtime.Leg) realtime.RelayEvent {
	t.Helper()
	for {
		select {
		case ev := <-e.events:
			if ev.Kind == kind && ev.Leg == leg {
				return ev
			}
		case <-ctx.Done():
			t.Fatalf("no %s event on the %s leg", kind, leg)
		}
	}
}

// checkContinuous fails unless every packet follows the one before by one
// sequence number and one 20 ms frame, except where allowed says.
func checkContinuous(t testing.TB, h []heard, allowed func(i int) bool) {
	t.Helper()
	for i := 1; i < len(h); i++ {
		if allowed != nil && allowed(i) {
			continue
		}
		if ds, dt := h[i].seq-h[i-1].seq, h[i].ts-h[i-1].ts; ds != 1 || dt != 960 {
			t.Fatalf("packet %d: seq %d→%d, ts %d→%d: want +1 and +960", i, h[i-1].seq, h[i].seq, h[i-1].ts, h[i].ts)
		}
	}
}

// Opus from a pion phone reaches the simulator through the relay, and the
// simulator's echo comes back with continuous sequence numbers and
// timestamps; each leg has its own round trip.
func TestRelayCarriesAudioBothWays(t *testing.T) {
	t.Parallel()
	e := newRelayEnv(t, relayOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := newPhone(t, phoneOpts{})
	e.connect(ctx, t, p, false)
	go p.stream(ctx)
	h := p.waitHeard(ctx, t, 100)
	checkContinuous(t, h, nil)
	call, ok := e.sim.Call(e.relay.CallID())
	if !ok || call.PacketsIn < 100 {
		t.Fatalf("the simulator's call %+v: want ≥ 100 packets in", call)
	}
	// The phone's receiver reports answer the relay's sender reports (one
	// a second); ICE's checks time the provider leg (the simulator sends
	// no RTCP).
	testkit.Eventually(t, ctx, "both legs' round trips", func() bool {
		s := e.relay.Stats()
		return s.Phone.RTT > 0 && s.Phone.ICERTT > 0 && s.Provider.ICERTT > 0
	})
	s := e.relay.Stats()
	if s.Up.Packets < 100 || s.Down.Packets < 100 || s.Up.Lost != 0 || s.Down.Lost != 0 {
		t.Fatalf("stats %+v: want ≥ 100 packets each way and none lost", s)
	}
	if s.Phone.RTT > time.Second || s.Provider.ICERTT > time.Second {
		t.Fatalf("round trips %v, %v on loopback", s.Phone.RTT, s.Provider.ICERTT)
	}
	t.Logf("stats: %+v", s)
}

// A phone on a network without UDP: it may use ICE over TCP only, and the
// relay's passive TCP candidate carries the call.
func TestRelayPhoneOverTCPOnly(t *testing.T) {
	t.Parallel()
	e := newRelayEnv(t, relayOpts{net: realtime.NetworkParams{TCPAddr: "127.0.0.1:0"}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := newPhone(t, phoneOpts{tcpOnly: true})
	e.connect(ctx, t, p, true)
	go p.stream(ctx)
	checkContinuous(t, p.waitHeard(ctx, t, 50), nil)
	pair, err := p.pc.SCTP().Transport().ICETransport().GetSelectedCandidatePair()
	if err != nil || pair == nil || pair.Local.Protocol.String() != "tcp" {
		t.Fatalf("the phone's selected pair %v: want TCP", pair)
	}
	if call, _ := e.sim.Call(e.relay.CallID()); call.PacketsIn < 50 {
		t.Fatalf("the simulator heard %d packets", call.PacketsIn)
	}
}

// The simulator hangs up the provider leg mid-call; the relay places a new
// one, and the phone hears audio again within a second with no jump: the
// sequence number goes on by one and the timestamp by the time that
// passed.
func TestRelayReplacesProviderLeg(t *testing.T) {
	t.Parallel()
	e := newRelayEnv(t, relayOpts{onEvent: func(ref *realtimeRelayRef, ev realtime.RelayEvent) {
		if ev.Kind == realtime.EventLegClosed && ev.Leg == realtime.LegProvider {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = ref.r.ReplaceProvider(ctx)
		}
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := newPhone(t, phoneOpts{})
	e.connect(ctx, t, p, false)
	go p.stream(ctx)
	before := len(p.waitHeard(ctx, t, 50))
	first := e.relay.CallID()
	dropped := time.Now()
	if err := e.client.Hangup(ctx, first); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, ctx, "a new provider call carrying audio", func() bool {
		c, ok := e.sim.Call(e.relay.CallID())
		return e.relay.CallID() != first && ok && c.PacketsOut >= 25
	})
	h := p.waitHeard(ctx, t, before+25)
	// The switch is the first packet after the hang-up whose timestamp
	// moves by more than one frame: within a leg it moves by 960, and across
	// the switch the relay moves it by the time that passed, in whole frames.
	// A switch quicker than a frame and a half moves it by one, and then the
	// stream is continuous throughout. (The longest arrival gap is no guide:
	// on a loaded machine the scheduler makes gaps within a leg as long as a
	// quick switch, and CI once took one for it.)
	sw := 0
	for i := before; i < len(h) && sw == 0; i++ {
		if h[i].ts-h[i-1].ts != 960 {
			sw = i
		}
	}
	if sw == 0 {
		checkContinuous(t, h, nil)
		t.Logf("switch: within a frame")
		return
	}
	gap := h[sw].at.Sub(h[sw-1].at)
	if back := h[sw].at.Sub(dropped); back > 3*time.Second {
		t.Fatalf("the phone heard audio again %v after the drop, want ≤ 3 s", back)
	}
	if ds := h[sw].seq - h[sw-1].seq; ds != 1 {
		t.Fatalf("sequence %d → %d across the switch", h[sw-1].seq, h[sw].seq)
	}
	tsGap := time.Duration(h[sw].ts-h[sw-1].ts) * time.Second / 48000
	if d := tsGap - gap; d > 150*time.Millisecond || d < -150*time.Millisecond {
		t.Fatalf("timestamp moved %v across a %v gap", tsGap, gap)
	}
	checkContinuous(t, h, func(i int) bool { return i == sw })
	t.Logf("switch: %v of silence, audio back %v after the drop; timestamp +%v", gap, h[sw].at.Sub(dropped), tsGap)
}

// Loss on both legs: the provider leg's receiver loses every 10th packet,
// the phone every 4th of what reaches it. Audio goes on; the relay counts
// its own loss, reads the phone's, and the receiver reports it sends the
// provider carry the phone's (the whole path's) loss, not just its own.
func TestRelayLossPassedUpstream(t *testing.T) {
	t.Parallel()
	capture := &rrCapture{}
	e := newRelayEnv(t, relayOpts{legExtra: func(l realtime.Leg) []interceptor.Factory {
		if l == realtime.LegProvider {
			return []interceptor.Factory{capture, &dropFactory{every: 10}}
		}
		return nil
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := newPhone(t, phoneOpts{dropEvery: 4})
	e.connect(ctx, t, p, false)
	go p.stream(ctx)
	// The relay's own loss is a tenth (26/256); only the phone's report,
	// about a third, takes the provider's report past a quarter.
	testkit.Eventually(t, ctx, "the phone's loss in the provider leg's receiver reports", func() bool {
		return capture.maxFraction.Load() >= 64 && e.relay.Stats().Down.Packets >= 100
	})
	s := e.relay.Stats()
	own := float64(s.Down.Lost) / float64(s.Down.Lost+s.Down.Packets)
	if own < 0.07 || own > 0.13 || s.Phone.ReportedLoss < 0.2 || s.Phone.ReportedLoss > 0.45 {
		t.Fatalf("stats %+v: want the relay's own loss ~10 %% (got %.2f) and the phone's ~32 %%", s, own)
	}
	n := len(p.heard())
	p.waitHeard(ctx, t, n+25) // forwarding goes on
	if call, _ := e.sim.Call(e.relay.CallID()); call.PacketsIn == 0 {
		t.Fatal("the simulator heard nothing")
	}
	t.Logf("provider leg RR fraction %d/256 (own loss %d of %d); phone reports %.2f",
		capture.maxFraction.Load(), s.Down.Lost, s.Down.Packets+s.Down.Lost, s.Phone.ReportedLoss)
}

// A leg that stops sending is reported once, and again when it resumes.
func TestRelaySilentLeg(t *testing.T) {
	t.Parallel()
	e := newRelayEnv(t, relayOpts{silence: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := newPhone(t, phoneOpts{})
	e.connect(ctx, t, p, false)
	// Nothing sent yet: the phone leg is silent from the start.
	e.waitEvent(ctx, t, realtime.EventLegSilent, realtime.LegPhone)
	streamCtx, stop := context.WithCancel(ctx)
	// The silence is measured from the phone's last send (its start: the
	// relay cannot have the packet before), not from when the streaming
	// goroutine was seen to end, which a loaded machine can delay.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.stream(streamCtx)
	}()
	e.waitEvent(ctx, t, realtime.EventLegResumed, realtime.LegPhone)
	p.waitHeard(ctx, t, 10)
	stop()
	wg.Wait()
	stopped := time.Unix(0, p.lastSend.Load())
	e.waitEvent(ctx, t, realtime.EventLegSilent, realtime.LegPhone)
	if d := time.Since(stopped); d < 250*time.Millisecond {
		t.Fatalf("silence reported %v after the last packet, want ≥ the 300 ms timeout", d)
	}
}

// Close ends both legs: the provider's call ends (its peer closed under
// it) and the phone's connection closes, as the cap will need.
func TestRelayCloseEndsBothLegs(t *testing.T) {
	t.Parallel()
	e := newRelayEnv(t, relayOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := newPhone(t, phoneOpts{})
	closed := make(chan struct{})
	var once sync.Once
	p.pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		if s == webrtc.PeerConnectionStateClosed || s == webrtc.PeerConnectionStateFailed || s == webrtc.PeerConnectionStateDisconnected {
			once.Do(func() { close(closed) })
		}
	})
	e.connect(ctx, t, p, false)
	go p.stream(ctx)
	p.waitHeard(ctx, t, 10)
	id := e.relay.CallID()
	e.relay.Close()
	testkit.Eventually(t, ctx, "the provider's call ended", func() bool {
		c, ok := e.sim.Call(id)
		return ok && c.Status == "ended"
	})
	select {
	case <-closed:
	case <-ctx.Done():
		t.Fatal("the phone's connection stayed up after Close")
	}
	if err := e.relay.Send(realtime.LegPhone, []byte(`{}`)); err == nil {
		t.Fatal("Send on a closed relay succeeded")
	}
}

// rtcpCount counts the RTCP packets a peer writes, nearest the network.
type rtcpCount struct {
	interceptor.NoOp
	n atomic.Int64
}

func (c *rtcpCount) NewInterceptor(string) (interceptor.Interceptor, error) { return c, nil }

func (c *rtcpCount) BindRTCPWriter(w interceptor.RTCPWriter) interceptor.RTCPWriter {
	return interceptor.RTCPWriterFunc(func(pkts []rtcp.Packet, a interceptor.Attributes) (int, error) {
		c.n.Add(int64(len(pkts)))
		return w.Write(pkts, a)
	})
}

func (c *rtcpCount) Close() error { return nil }

// A connected call carrying no audio sends no reports on either leg while
// the phone, a plain pion peer, sends its own every second; with audio
// the relay's reports resume.
func TestRelayQuietCallSendsNoReports(t *testing.T) {
	t.Parallel()
	relayRTCP, phoneRTCP := &rtcpCount{}, &rtcpCount{}
	e := newRelayEnv(t, relayOpts{legExtra: func(realtime.Leg) []interceptor.Factory { return []interceptor.Factory{relayRTCP} }})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := newPhone(t, phoneOpts{extra: []interceptor.Factory{phoneRTCP}})
	e.connect(ctx, t, p, false)
	// The relay's interval is 500 ms here: six of the phone's reports (three
	// of its one-second intervals) span several of the relay's.
	testkit.Eventually(t, ctx, "the phone's reports", func() bool { return phoneRTCP.n.Load() >= 6 })
	if n := relayRTCP.n.Load(); n != 0 {
		t.Fatalf("the relay wrote %d RTCP packets for a call without audio", n)
	}
	go p.stream(ctx)
	testkit.Eventually(t, ctx, "the relay's reports with audio", func() bool { return relayRTCP.n.Load() > 0 })
}
