package realtime_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"net"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/interceptor/pkg/report"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/voxgate/voxgate/realtime"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// phone is a pion peer playing the app in relay tests: it sends Opus
// packets whose payload carries their send time, records every packet it
// gets back (sequence number, timestamp, arrival, round trip), and sends
// receiver reports like a browser.
type phone struct {
	pc    *webrtc.PeerConnection
	track *webrtc.TrackLocalStaticRTP
	dc    *webrtc.DataChannel
	open  chan struct{}

	events chan simtest.Event

	sendMu sync.Mutex
	seq    uint16
	ts     uint32
	// lastSend is when the last send began (UnixNano): a silence is timed
	// from it, since the relay cannot have the packet before.
	lastSend atomic.Int64

	mu   sync.Mutex
	got  []heard
	more chan struct{} // signalled on every packet
}

// heard is one packet the phone received.
type heard struct {
	seq uint16
	ts  uint32
	at  time.Time
	rtt time.Duration // now − the send time in the payload, if it carries one
}

type phoneOpts struct {
	tcpOnly    bool                  // ICE over TCP only (UDP not allowed)
	maxMessage uint32                // advertised a=max-message-size, 0 for pion's
	dropEvery  int                   // drop every nth received RTP packet before pion's reports see it
	extra      []interceptor.Factory // nearest the network
	bare       bool                  // no interceptors at all (the simulator's own kind of peer)
	conn       *simtest.CutConn      // every ICE packet through this socket
	// paced: the ICE checks and reports of an established audio call as
	// the WebRTC library in phones and browsers (libwebrtc) paces them, a
	// check every 2.5 s (a strong, stable pair) and a report every 5 s
	// (audio), where pion's defaults are 2 s and 1 s.
	paced bool
}

func newPhone(t testing.TB, o phoneOpts) *phone {
	t.Helper()
	var se webrtc.SettingEngine
	se.SetIncludeLoopbackCandidate(true)
	se.SetIPFilter(func(ip net.IP) bool { return ip.IsLoopback() && ip.To4() != nil })
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	if o.tcpOnly {
		se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeTCP4})
	}
	if o.conn != nil {
		se.SetICEUDPMux(ice.NewUDPMuxDefault(ice.UDPMuxParams{UDPConn: o.conn}))
	}
	if o.paced {
		se.SetICETimeouts(5*time.Second, 25*time.Second, 2500*time.Millisecond)
	}
	if o.maxMessage > 0 {
		se.SetSCTPMaxMessageSize(o.maxMessage)
	}
	m := &webrtc.MediaEngine{}
	if err := m.RegisterCodec(webrtc.RTPCodecParameters{RTPCodecCapability: sim.OpusCapability(), PayloadType: 111},
		webrtc.RTPCodecTypeAudio); err != nil {
		t.Fatal(err)
	}
	reg := &interceptor.Registry{}
	for _, f := range o.extra {
		reg.Add(f)
	}
	if o.dropEvery > 0 {
		reg.Add(&dropFactory{every: o.dropEvery})
	}
	if !o.bare {
		every := time.Second // pion's default
		if o.paced {
			every = 5 * time.Second
		}
		rr, _ := report.NewReceiverInterceptor(report.ReceiverInterval(every))
		sr, _ := report.NewSenderInterceptor(report.SenderInterval(every))
		reg.Add(rr)
		reg.Add(sr)
	}
	api := webrtc.NewAPI(webrtc.WithMediaEngine(m), webrtc.WithSettingEngine(se), webrtc.WithInterceptorRegistry(reg))
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	p := &phone{pc: pc, open: make(chan struct{}), events: make(chan simtest.Event, 1024), more: make(chan struct{}, 1)}
	t.Cleanup(func() { _ = pc.Close() })
	if p.track, err = webrtc.NewTrackLocalStaticRTP(sim.OpusCapability(), "audio", "phone"); err != nil {
		t.Fatal(err)
	}
	s, err := pc.AddTrack(p.track)
	if err != nil {
		t.Fatal(err)
	}
	go func() { // pion's reports about what the phone sends need reading
		for {
			if _, _, err := s.ReadRTCP(); err != nil {
				return
			}
		}
	}()
	pc.OnTrack(func(tr *webrtc.TrackRemote, rc *webrtc.RTPReceiver) {
		go func() {
			for {
				if _, _, err := rc.ReadRTCP(); err != nil {
					return
				}
			}
		}()
		buf := make([]byte, 1500)
		var pkt rtp.Packet
		for {
			n, _, err := tr.Read(buf)
			if err != nil {
				return
			}
			now := time.Now()
			if pkt.Unmarshal(buf[:n]) != nil {
				continue
			}
			h := heard{seq: pkt.SequenceNumber, ts: pkt.Timestamp, at: now}
			if len(pkt.Payload) >= 11 {
				h.rtt = now.Sub(time.Unix(0, int64(binary.BigEndian.Uint64(pkt.Payload[3:11]))))
			}
			p.mu.Lock()
			p.got = append(p.got, h)
			p.mu.Unlock()
			select {
			case p.more <- struct{}{}:
			default:
			}
		}
	})
	if p.dc, err = pc.CreateDataChannel(realtime.DataChannelLabel, nil); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	p.dc.OnOpen(func() { once.Do(func() { close(p.open) }) })
	p.dc.OnMessage(func(m webrtc.DataChannelMessage) {
		var head struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(m.Data, &head)
		select {
		case p.events <- simtest.Event{Type: head.Type, Raw: m.Data}:
		default:
		}
	})
	return p
}

// offer returns the phone's offer with every candidate gathered.
func (p *phone) offer(t testing.TB) string {
	t.Helper()
	o, err := p.pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	done := webrtc.GatheringCompletePromise(p.pc)
	if err := p.pc.SetLocalDescription(o); err != nil {
		t.Fatal(err)
	}
	<-done
	return p.pc.LocalDescription().SDP
}

var udpCandidate = regexp.MustCompile(`(?m)^a=candidate:\S+ \d+ udp .*\r?\n`)

// accept applies an answer; tcpOnly drops its UDP candidates first, as a
// network that blocks UDP would make them useless.
func (p *phone) accept(t testing.TB, answer string, tcpOnly bool) {
	t.Helper()
	if tcpOnly {
		answer = udpCandidate.ReplaceAllString(answer, "")
	}
	if err := p.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer}); err != nil {
		t.Fatal(err)
	}
}

// send sends one 20 ms Opus packet: the silent frame, then the send time.
func (p *phone) send() error {
	p.lastSend.Store(time.Now().UnixNano())
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	p.seq++
	p.ts += 960
	payload := make([]byte, 11)
	copy(payload, sim.OpusSilence())
	binary.BigEndian.PutUint64(payload[3:], uint64(time.Now().UnixNano()))
	return p.track.WriteRTP(&rtp.Packet{Header: rtp.Header{Version: 2, SequenceNumber: p.seq, Timestamp: p.ts}, Payload: payload})
}

// stream sends a packet every 20 ms until ctx ends or stop is closed.
func (p *phone) stream(ctx context.Context) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			_ = p.send()
		}
	}
}

func (p *phone) heard() []heard {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]heard(nil), p.got...)
}

// waitHeard waits for at least n packets.
func (p *phone) waitHeard(ctx context.Context, t testing.TB, n int) []heard {
	t.Helper()
	for {
		if h := p.heard(); len(h) >= n {
			return h
		}
		select {
		case <-p.more:
		case <-ctx.Done():
			t.Fatalf("the phone heard %d packets, want %d: %v", len(p.heard()), n, ctx.Err())
		}
	}
}

// heardUntil waits for at least n packets until ctx ends, and returns
// what was heard by then.
func (p *phone) heardUntil(ctx context.Context, n int) []heard {
	for {
		if h := p.heard(); len(h) >= n || ctx.Err() != nil {
			return h
		}
		select {
		case <-p.more:
		case <-ctx.Done():
		}
	}
}

func (p *phone) sendEvent(t testing.TB, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.dc.SendText(string(b)); err != nil {
		t.Fatal(err)
	}
}

// until returns the first event of type typ (skipping others) whose raw
// text contains all of want.
func (p *phone) until(ctx context.Context, t testing.TB, typ string, want ...string) simtest.Event {
	t.Helper()
	for {
		select {
		case e := <-p.events:
			if e.Type != typ {
				continue
			}
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(string(e.Raw), w)
			}
			if ok {
				return e
			}
		case <-ctx.Done():
			t.Fatalf("no %s event containing %q: %v", typ, want, ctx.Err())
		}
	}
}

// dropFactory drops every nth RTP packet a peer receives, nearest the
// network, so everything above it (pion's receiver reports, the reader)
// sees the loss.
type dropFactory struct{ every int }

func (f *dropFactory) NewInterceptor(string) (interceptor.Interceptor, error) {
	return &dropper{every: f.every}, nil
}

type dropper struct {
	interceptor.NoOp
	every int
	n     atomic.Int64
}

func (d *dropper) BindRemoteStream(_ *interceptor.StreamInfo, r interceptor.RTPReader) interceptor.RTPReader {
	return interceptor.RTPReaderFunc(func(b []byte, a interceptor.Attributes) (int, interceptor.Attributes, error) {
		for {
			n, attr, err := r.Read(b, a)
			if err != nil || d.n.Add(1)%int64(d.every) != 0 {
				return n, attr, err
			}
		}
	})
}

// rrCapture records the largest fraction lost in the receiver reports a
// peer writes, nearest the network (after every interceptor's changes).
type rrCapture struct {
	interceptor.NoOp
	maxFraction atomic.Int32
	reports     atomic.Int64
}

func (c *rrCapture) NewInterceptor(string) (interceptor.Interceptor, error) { return c, nil }

func (c *rrCapture) BindRTCPWriter(w interceptor.RTCPWriter) interceptor.RTCPWriter {
	return interceptor.RTCPWriterFunc(func(pkts []rtcp.Packet, a interceptor.Attributes) (int, error) {
		for _, p := range pkts {
			if rr, ok := p.(*rtcp.ReceiverReport); ok {
				for _, rep := range rr.Reports {
					c.reports.Add(1)
					for {
						cur := c.maxFraction.Load()
						if int32(rep.FractionLost) <= cur || c.maxFraction.CompareAndSwap(cur, int32(rep.FractionLost)) {
							break
						}
					}
				}
			}
		}
		return w.Write(pkts, a)
	})
}

// Close is the interceptor's; the capture outlives the peer.
func (c *rrCapture) Close() error { return nil }
