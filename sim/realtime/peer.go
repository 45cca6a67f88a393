package realtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"
)

// DataChannelLabel is the label of the Realtime events data channel, which
// the caller creates.
const DataChannelLabel = "oai-events"

// MediaPeer is the simulator's side of one WebRTC connection: a pion peer
// with an Opus track of its own. Realtime calls and Live sessions both sit
// behind one; the hooks, set before answer, say what each does with the
// caller's packets, its data channels and the connection's state.
type MediaPeer struct {
	pc    *webrtc.PeerConnection
	track *webrtc.TrackLocalStaticRTP

	// OnPacket gets each RTP packet the caller sends (the buffer is reused).
	OnPacket func(raw []byte)
	// OnChannel gets each data channel the caller opens.
	OnChannel func(dc *webrtc.DataChannel)
	// OnState gets the connection's state changes, from a goroutine of its
	// own: it may close the peer.
	OnState func(st webrtc.PeerConnectionState)

	sendMu sync.Mutex // orders writes to track: seq and timestamp are ours
	seq    uint16
	ts     uint32
}

// call is one WebRTC call: a pion peer with an Opus track and the session
// its oai-events channel and sideband sockets talk to.
type call struct {
	id    string
	model string
	rt    *realtimeState
	sess  *rtSession
	peer  *MediaPeer
	echo  bool

	// dropAfter comes from a datachannel_close fault drawn with the call:
	// the oai-events channel closes after that many events; -1 is never.
	dropAfter int

	once  sync.Once
	ended chan struct{}
}

// errNoAudio refuses offers the model could not talk to.
var errNoAudio = errors.New("the offer has no audio media section")

// Answer builds the peer for an SDP offer and returns the SDP answer, with
// every ICE candidate gathered (the API does not trickle).
func (p *MediaPeer) Answer(ctx context.Context, api *webrtc.API, offer string) (string, error) {
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return "", fmt.Errorf("new peer: %w", err)
	}
	p.pc = pc
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer}); err != nil {
		return "", err
	}
	hasAudio := false
	for _, t := range pc.GetTransceivers() {
		hasAudio = hasAudio || t.Kind() == webrtc.RTPCodecTypeAudio
	}
	if !hasAudio {
		return "", errNoAudio
	}
	p.track, err = webrtc.NewTrackLocalStaticRTP(OpusCapability(), "audio", "voxgate-sim")
	if err != nil {
		return "", err
	}
	if _, err := pc.AddTrack(p.track); err != nil {
		return "", err
	}
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) { go p.readAudio(tr) })
	pc.OnDataChannel(p.OnChannel)
	pc.OnConnectionStateChange(func(st webrtc.PeerConnectionState) {
		go p.OnState(st) // the hook may close pc: not from pion's own callback
	})
	ans, err := pc.CreateAnswer(nil)
	if err != nil {
		return "", err
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(ans); err != nil {
		return "", err
	}
	select {
	case <-gathered:
	case <-ctx.Done():
		return "", ctx.Err()
	case <-time.After(5 * time.Second):
		return "", errors.New("ICE gathering timed out")
	}
	return pc.LocalDescription().SDP, nil
}

// Close closes the peer connection, if answer got as far as making one.
func (p *MediaPeer) Close() {
	if p.pc != nil {
		_ = p.pc.Close()
	}
}

// readAudio hands each of the caller's RTP packets to onPacket.
func (p *MediaPeer) readAudio(tr *webrtc.TrackRemote) {
	buf := make([]byte, 1500)
	for {
		n, _, err := tr.Read(buf)
		if err != nil {
			return
		}
		p.OnPacket(buf[:n])
	}
}

// send writes one Opus frame with the peer's own sequence and timestamp;
// it reports whether the frame went out.
func (p *MediaPeer) send(payload []byte) bool {
	if p.track == nil { // a peer with no call (a session's unit tests) has nowhere to speak
		return false
	}
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	p.seq++
	p.ts += opusTicksPerPkt
	pkt := rtp.Packet{Header: rtp.Header{Version: 2, SequenceNumber: p.seq, Timestamp: p.ts}, Payload: payload}
	return p.track.WriteRTP(&pkt) == nil
}

// newPeer builds the call's peer: its packets are the session's "audio"
// (echoed straight back in echo mode), its oai-events channel joins the
// session, and a peer that fails or closes ends the call.
func (c *call) newPeer() *MediaPeer {
	var pkt rtp.Packet
	return &MediaPeer{
		OnPacket: func(raw []byte) {
			c.sess.stats.packetsIn.Add(1)
			c.sess.audioArrived()
			if c.echo && pkt.Unmarshal(raw) == nil {
				c.send(pkt.Payload)
			}
		},
		OnChannel: c.openEvents,
		OnState: func(st webrtc.PeerConnectionState) {
			if st == webrtc.PeerConnectionStateFailed || st == webrtc.PeerConnectionStateClosed {
				c.end("peer_" + st.String())
			}
		},
	}
}

// send writes one Opus frame on the call's track.
func (c *call) send(payload []byte) {
	if c.peer.send(payload) {
		c.sess.stats.packetsOut.Add(1)
	}
}

// voice is a reply being spoken on the call's track.
type voice struct {
	packets atomic.Int64 // frames to send in all; lowered by shorten
	done    chan struct{}
	once    sync.Once
}

// stop silences the reply at once.
func (v *voice) stop() { v.once.Do(func() { close(v.done) }) }

// shorten lets the reply play only its first ms.
func (v *voice) shorten(ms int) { v.packets.Store(int64(ms / PacketMS)) }

// speak plays a reply of ms milliseconds. In silence mode that is Opus
// silence every 20 ms; in echo mode the track carries the echo only.
func (c *call) speak(ms int) *voice {
	v := &voice{done: make(chan struct{})}
	v.packets.Store(int64(ms / PacketMS))
	if c.echo {
		return v
	}
	go c.peer.Play(func(i int64) bool { return i < v.packets.Load() }, v.done, c.ended,
		func() { c.sess.stats.packetsOut.Add(1) })
	return v
}

// Play speaks on the peer's track: a frame of Opus silence every 20 ms
// while more(i) says frame i is still part of what is said, until stop or
// ended closes; sent counts each frame that went out. The first frame goes
// at once, so the last is sent before the speech's playback time is up.
// Realtime replies and GPT-Live's voice both speak through it.
func (p *MediaPeer) Play(more func(i int64) bool, stop, ended <-chan struct{}, sent func()) {
	t := time.NewTicker(PacketMS * time.Millisecond)
	defer t.Stop()
	for i := int64(0); more(i); i++ {
		if i > 0 {
			select {
			case <-stop:
				return
			case <-ended:
				return
			case <-t.C:
			}
		}
		if p.send(OpusSilence()) {
			sent()
		}
	}
}

// openEvents wires the caller's oai-events channel to the session.
func (c *call) openEvents(dc *webrtc.DataChannel) {
	if dc.Label() != DataChannelLabel {
		return
	}
	k := DataChannelSink(dc)
	k.DropAfter = c.dropAfter
	WireEvents(dc, k, c.sess)
}

// EventSession is what an oai-events channel talks to: a Realtime or a
// Live session.
type EventSession interface {
	Join(k *Sink) bool
	Submit(data []byte, from *Sink) bool
	Leave(k *Sink)
	Ended() <-chan struct{}
}

// WireEvents joins a data channel to its session once it opens. The caller
// may send as soon as its side is open, which can be before this side's
// OnOpen has joined the channel: its first events wait for the join, or
// their answers would reach every transport but the one that asked.
func WireEvents(dc *webrtc.DataChannel, k *Sink, s EventSession) {
	joined := make(chan struct{})
	dc.OnOpen(func() { s.Join(k); close(joined) })
	dc.OnMessage(func(m webrtc.DataChannelMessage) {
		select {
		case <-joined:
		case <-s.Ended():
			return
		}
		s.Submit(m.Data, k)
	})
	dc.OnClose(func() { s.Leave(k) })
}

// DataChannelSink is the outgoing side of an oai-events channel.
func DataChannelSink(dc *webrtc.DataChannel) *Sink {
	return newSink(PathDataChannel, func(b []byte) error { return dc.SendText(string(b)) },
		func(int, string) { drain(dc); _ = dc.Close() }, func() { _ = dc.Close() })
}

// drain waits, briefly, for the events a graceful end flushed to leave the
// data channel: SendText only queues them, and the peer connection closing
// right after would drop a last event such as session_expired.
func drain(dc *webrtc.DataChannel) {
	deadline := time.Now().Add(time.Second)
	for dc.BufferedAmount() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}

// end hangs the call up: the session closes its data channel and sideband
// sockets, then the peer closes. Only the first call counts. With
// a peer that went away leaves the session running for its sidebands
// unless Realtime.CloseSidebandWithPeer.
func (c *call) end(reason string) {
	c.once.Do(func() {
		close(c.ended)
		if !(strings.HasPrefix(reason, "peer_") && !c.rt.cfg.CloseSidebandWithPeer && c.rt.linger(c.sess)) {
			c.sess.stop()
		}
		c.peer.Close()
		now := time.Now()
		c.sess.stats.update(func(s *CallStats) { s.Status, s.EndReason, s.EndedAt = "ended", reason, &now })
		c.rt.retire(c)
	})
}
