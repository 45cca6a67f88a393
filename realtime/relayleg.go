package realtime

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/webrtc/v4"
)

// leg is one peer connection of a relayed call.
type leg struct {
	which   Leg
	gen     uint64
	pc      *webrtc.PeerConnection
	dc      atomic.Pointer[webrtc.DataChannel] // set once open
	rtt     atomic.Int64                       // ns, from receiver reports
	retired atomic.Bool                        // replaced or closed: its events are not reported
	connect atomic.Pointer[time.Timer]         // the provider leg's connect deadline, until connected
	closed  atomic.Bool                        // close was called
	callID  string

	// Reports (relayrtcp.go): the relay's SSRC on the leg (0 until its
	// track is added); what the leg's audio is written by, and its packets
	// and payload bytes when the leg first connected (pion sends a track
	// only from then on: based once set); the packets in the leg's last
	// sender report (the reporter's goroutine only); the middle of the
	// peer's latest sender report's NTP time and when it came (monoNow).
	ssrc                atomic.Uint32
	sent                *forwarder
	sentBase, octetBase atomic.Uint64
	based               atomic.Bool
	srPackets           uint64
	peerSR              atomic.Uint32
	peerSRAt            atomic.Int64
	reporting           atomic.Bool // the leg's reports are being written
}

func (l *leg) close() {
	l.closed.Store(true)
	if t := l.connect.Load(); t != nil {
		t.Stop()
	}
	_ = l.pc.Close()
}

func (l *leg) stats(far *farLoss, now time.Time) LegStats {
	if l == nil {
		return LegStats{}
	}
	s := LegStats{RTT: time.Duration(l.rtt.Load()), CallID: l.callID}
	if fraction, total, ok := far.get(now); ok {
		s.ReportedLoss, s.ReportedLost = float64(fraction)/256, total
	}
	if sctp := l.pc.SCTP(); sctp != nil && sctp.Transport() != nil {
		if pair, ok := sctp.Transport().ICETransport().GetSelectedCandidatePairStats(); ok {
			s.ICERTT = time.Duration(pair.CurrentRoundTripTime * float64(time.Second))
		}
	}
	return s
}

// opusCapability is the codec the Realtime API negotiates: Opus at 48 kHz,
// stereo signalling, in-band FEC.
func opusCapability() webrtc.RTPCodecCapability {
	return webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: opusClock, Channels: 2,
		SDPFmtpLine: "minptime=10;useinbandfec=1"}
}

// newLeg builds a leg's peer connection: Opus only, with no interceptors
// of pion's (the relay writes each leg's reports itself, relayrtcp.go).
func (r *Relay) newLeg(which Leg, gen uint64) (*leg, error) {
	se, err := r.p.Network.settings(which == LegPhone)
	if err != nil {
		return nil, err
	}
	m := &webrtc.MediaEngine{}
	if err := m.RegisterCodec(webrtc.RTPCodecParameters{RTPCodecCapability: opusCapability(), PayloadType: 111},
		webrtc.RTPCodecTypeAudio); err != nil {
		return nil, err
	}
	reg := &interceptor.Registry{}
	if r.p.Interceptors != nil {
		for _, f := range r.p.Interceptors(which) {
			reg.Add(f)
		}
	}
	api := webrtc.NewAPI(webrtc.WithMediaEngine(m), webrtc.WithSettingEngine(se), webrtc.WithInterceptorRegistry(reg))
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return nil, err
	}
	l := &leg{which: which, gen: gen, pc: pc}
	// A peer connection closed while its DTLS handshake runs keeps the
	// connection the handshake then completes, with its SRTP sessions: its
	// readers never end and Close waits for them forever (seen in CI). So a
	// leg already closed stops its DTLS transport once it connects. Apart:
	// the handler runs under the transport's lock, which Stop takes.
	dt := pc.SCTP().Transport()
	dt.OnStateChange(func(st webrtc.DTLSTransportState) {
		if st == webrtc.DTLSTransportStateConnected && l.closed.Load() {
			go func() { _ = dt.Stop() }()
		}
	})
	pc.OnConnectionStateChange(func(st webrtc.PeerConnectionState) {
		if t := l.connect.Load(); t != nil && st != webrtc.PeerConnectionStateConnecting && st != webrtc.PeerConnectionStateNew {
			t.Stop() // connected, failed or closed: the deadline has done its part
		}
		if st == webrtc.PeerConnectionStateConnected && l.sent != nil && !l.based.Load() {
			l.sentBase.Store(l.sent.packets.Load())
			l.octetBase.Store(l.sent.octets.Load())
			l.based.Store(true)
		}
		if st == webrtc.PeerConnectionStateFailed || st == webrtc.PeerConnectionStateClosed {
			r.event(l, EventLegClosed, st.String())
		}
	})
	return l, nil
}

// addTrack sends the leg's outgoing audio (what fw writes) and reads the
// peer's reports about it.
func (r *Relay) addTrack(l *leg, track *webrtc.TrackLocalStaticRTP, fw *forwarder, far *farLoss) error {
	s, err := l.pc.AddTrack(track)
	if err != nil {
		return err
	}
	l.sent = fw
	if enc := s.GetParameters().Encodings; len(enc) > 0 {
		l.ssrc.Store(uint32(enc[0].SSRC))
	}
	r.wg.Add(1)
	go r.readReports(l, s, far)
	return nil
}

// onTrack starts the leg's reader: its audio goes to fw.
func (r *Relay) onTrack(l *leg, fw *forwarder) {
	l.pc.OnTrack(func(tr *webrtc.TrackRemote, rc *webrtc.RTPReceiver) {
		if tr.Kind() != webrtc.RTPCodecTypeAudio && tr.Kind() != 0 {
			return
		}
		r.wg.Add(2)
		go r.drainRTCP(l, rc)
		go r.pump(l, fw, tr)
	})
}

// dialProvider builds a provider leg, offers it to the provider through
// Dial, and applies the answer.
func (r *Relay) dialProvider(ctx context.Context, gen uint64) (*leg, error) {
	l, err := r.newLeg(LegProvider, gen)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*leg, error) { l.close(); return nil, err }
	if err := r.addTrack(l, r.upTrack, &r.up, &r.upFar); err != nil {
		return fail(err)
	}
	r.onTrack(l, &r.down)
	dc, err := l.pc.CreateDataChannel(DataChannelLabel, nil)
	if err != nil {
		return fail(err)
	}
	r.wireChannel(l, dc)
	offer, err := l.pc.CreateOffer(nil)
	if err != nil {
		return fail(err)
	}
	sdp, err := gather(ctx, l.pc, offer)
	if err != nil {
		return fail(err)
	}
	call, err := r.p.Dial(ctx, sdp)
	if err != nil {
		return fail(err)
	}
	l.callID = call.ID
	l.connect.Store(time.AfterFunc(r.p.ConnectTimeout, func() { r.connectTimedOut(l) }))
	if err := l.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: call.Answer}); err != nil {
		return fail(fmt.Errorf("realtime: the provider's answer: %w", err))
	}
	return l, nil
}

// connectTimedOut ends a provider leg that has not connected by its
// deadline: the provider went away (or never could be reached) before
// ICE succeeded. The leg is reported closed once, then closed.
func (r *Relay) connectTimedOut(l *leg) {
	if l.pc.ConnectionState() == webrtc.PeerConnectionStateConnected {
		return
	}
	r.event(l, EventLegClosed, DetailConnectTimeout)
	l.retired.Store(true) // its own close is not reported again
	l.close()
}

// answerPhone builds the phone leg for its offer and returns the answer.
func (r *Relay) answerPhone(ctx context.Context, offer string) (*leg, string, error) {
	l, err := r.newLeg(LegPhone, 0)
	if err != nil {
		return nil, "", err
	}
	fail := func(err error) (*leg, string, error) { l.close(); return nil, "", err }
	r.onTrack(l, &r.up)
	l.pc.OnDataChannel(func(dc *webrtc.DataChannel) {
		if dc.Label() == DataChannelLabel {
			r.wireChannel(l, dc)
		}
	})
	if err := l.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer}); err != nil {
		return fail(fmt.Errorf("realtime: the phone's offer: %w", err))
	}
	hasAudio := false
	for _, t := range l.pc.GetTransceivers() {
		hasAudio = hasAudio || t.Kind() == webrtc.RTPCodecTypeAudio
	}
	if !hasAudio {
		return fail(errors.New("realtime: the phone's offer has no audio"))
	}
	if err := r.addTrack(l, r.downTrack, &r.down, &r.downFar); err != nil {
		return fail(err)
	}
	ans, err := l.pc.CreateAnswer(nil)
	if err != nil {
		return fail(err)
	}
	sdp, err := gather(ctx, l.pc, ans)
	if err != nil {
		return fail(err)
	}
	return l, sdp, nil
}

// gatherTimeout bounds ICE gathering: host candidates and the muxes'
// come at once; only a STUN or TURN server could take long.
const gatherTimeout = 5 * time.Second

// gather sets the local description and waits for every candidate.
func gather(ctx context.Context, pc *webrtc.PeerConnection, desc webrtc.SessionDescription) (string, error) {
	done := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(desc); err != nil {
		return "", err
	}
	t := time.NewTimer(gatherTimeout)
	defer t.Stop()
	select {
	case <-done:
		return pc.LocalDescription().SDP, nil
	case <-ctx.Done():
		return "", ctx.Err()
	case <-t.C:
		return "", errors.New("realtime: ICE gathering timed out")
	}
}

// pump reads a leg's audio into fw until the leg closes. Silence is found
// with the track's read deadline, moved only when it fires (never per
// packet): a flowing leg costs one timer wake per SilenceTimeout, a
// silent one none after it is reported.
func (r *Relay) pump(l *leg, fw *forwarder, tr *webrtc.TrackRemote) {
	defer r.wg.Done()
	buf := make([]byte, 1500) // one reused buffer: the hot path allocates nothing of its own
	last, silent := monoNow(), false
	_ = tr.SetReadDeadline(time.Now().Add(r.silence))
	for {
		n, _, err := tr.Read(buf)
		if err != nil {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				return
			}
			if left := r.silence - time.Duration(monoNow()-last); left > 0 {
				_ = tr.SetReadDeadline(time.Now().Add(left))
				continue
			}
			silent = true
			r.event(l, EventLegSilent, "")
			_ = tr.SetReadDeadline(time.Time{})
			continue
		}
		last = monoNow()
		if silent {
			silent = false
			r.event(l, EventLegResumed, "")
			_ = tr.SetReadDeadline(time.Now().Add(r.silence))
		}
		_ = fw.forward(l.gen, buf[:n], last)
	}
}
