package live

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/pion/webrtc/v4"
	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
	"github.com/voxgate/voxgate/sim/realtime"
)

// liveSession is one GPT-Live WebRTC session. Like a Realtime session, one
// goroutine (run) owns its state and alone emits events, so the phone's data
// channel and every sideband see them in one order.
type liveSession struct {
	srv   *Server
	cfg   *Config
	id    string
	set   liveSettings
	peer  *realtime.MediaPeer
	clock liveClock
	stats *liveCounters
	// expireAfter is when, on the session clock, it closes as expired.
	expireAfter time.Duration

	in        chan liveIn
	attach    chan *realtime.Sink
	detach    chan liveDetach
	kick      chan struct{} // a user turn's worth of packets arrived; coalesced
	connected chan struct{} // the phone's media connected
	gone      chan string   // the phone's peer ended: the close reason
	ctx       context.Context
	cancel    context.CancelFunc
	exited    chan struct{}
	packets   atomic.Int64

	// Owned by run.
	phone       *realtime.Sink
	sidebands   []*realtime.Sink
	isConnected bool
	connectedMS int64
	usageMS     int64
	muted       bool
	turns       int64
	delegations map[string]bool
	acks        map[string]*time.Timer // pending automatic acknowledgements
	ackDue      chan string
	speakingTo  int64 // where the model's speech ends on the timeline
	ctxTokens   int
}

type liveIn struct {
	data []byte
	from *realtime.Sink
}

// liveDetach is a transport that went away; closeSession when it was a
// sideband closed gracefully without graceful_close=false, which ends the
// session.
type liveDetach struct {
	k            *realtime.Sink
	closeSession bool
}

// liveClock is the session timeline: milliseconds since creation, running
// Config.ClockRate times real time.
type liveClock struct {
	start time.Time
	rate  float64
}

func (c liveClock) nowMS() int64 { return int64(float64(time.Since(c.start).Milliseconds()) * c.rate) }

// real converts a session-clock duration to real time.
func (c liveClock) real(d time.Duration) time.Duration { return time.Duration(float64(d) / c.rate) }

func (s *Server) newLiveSession(set liveSettings, expireAfter time.Duration) *liveSession {
	ctx, cancel := context.WithCancel(context.Background())
	cfg := &s.live.cfg
	if expireAfter <= 0 {
		expireAfter = cfg.MaxSession
	}
	ls := &liveSession{srv: s, cfg: cfg, id: "live_" + core.RandomID(), set: set,
		clock: liveClock{start: time.Now(), rate: cfg.ClockRate}, stats: &liveCounters{}, expireAfter: expireAfter,
		in: make(chan liveIn, 64), attach: make(chan *realtime.Sink), detach: make(chan liveDetach, 4),
		kick: make(chan struct{}, 1), connected: make(chan struct{}, 1), gone: make(chan string, 1),
		ctx: ctx, cancel: cancel, exited: make(chan struct{}),
		delegations: map[string]bool{}, acks: map[string]*time.Timer{}, ackDue: make(chan string, 16)}
	ls.stats.s = Stats{ID: ls.id, Model: set.model, Status: "active", CreatedAt: ls.clock.start,
		AllowedClientEvents: keysOf(set.allowClient)}
	ls.peer = ls.newPeer()
	return ls
}

// newPeer builds the session's pion peer: a turn's worth of packets is a user
// turn, the oai-events channel is the phone's transport, and the peer's end
// closes the session (remote_hangup when it closed, connection_lost when it
// failed).
func (ls *liveSession) newPeer() *realtime.MediaPeer {
	turn := int64(ls.cfg.TurnPackets)
	return &realtime.MediaPeer{
		OnPacket: func([]byte) {
			if ls.packets.Add(1)%turn == 0 {
				nudge(ls.kick)
			}
		},
		OnChannel: func(dc *webrtc.DataChannel) {
			if dc.Label() == realtime.DataChannelLabel {
				realtime.WireEvents(dc, realtime.DataChannelSink(dc), ls)
			}
		},
		OnState: func(st webrtc.PeerConnectionState) {
			switch st {
			case webrtc.PeerConnectionStateConnected:
				nudge(ls.connected)
			case webrtc.PeerConnectionStateClosed:
				ls.peerGone("remote_hangup")
			case webrtc.PeerConnectionStateFailed:
				ls.peerGone("connection_lost")
			}
		},
	}
}

func nudge(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (ls *liveSession) peerGone(reason string) {
	select {
	case ls.gone <- reason:
	default:
	}
}

func (ls *liveSession) Join(k *realtime.Sink) bool {
	select {
	case ls.attach <- k:
		return true
	case <-ls.exited:
		return false
	}
}

func (ls *liveSession) Submit(data []byte, from *realtime.Sink) bool {
	select {
	case ls.in <- liveIn{data: data, from: from}:
		return true
	case <-ls.exited:
		return false
	}
}

func (ls *liveSession) Leave(k *realtime.Sink) { ls.leaveClosing(k, false) }

func (ls *liveSession) leaveClosing(k *realtime.Sink, closeSession bool) {
	select {
	case ls.detach <- liveDetach{k: k, closeSession: closeSession}:
	case <-ls.exited:
	}
}

func (ls *liveSession) Ended() <-chan struct{} { return ls.exited }

// stop ends the session (the simulator is closing) and waits for it.
func (ls *liveSession) stop() {
	ls.cancel()
	<-ls.exited
}

func (ls *liveSession) run() {
	defer close(ls.exited)
	reason := "connection_lost"
	defer func() { ls.finish(reason) }()
	usage := time.NewTicker(ls.clock.real(ls.cfg.UsageInterval))
	defer usage.Stop()
	expire := time.NewTimer(ls.clock.real(ls.expireAfter))
	defer expire.Stop()
	connect := time.NewTimer(ls.clock.real(ls.cfg.ConnectTimeout))
	defer connect.Stop()
	var reflect <-chan time.Time
	if ls.cfg.ReflectAudio {
		t := time.NewTicker(reflectEvery)
		defer t.Stop()
		reflect = t.C
	}
	for {
		select {
		case <-ls.ctx.Done():
			return
		case k := <-ls.attach:
			ls.join1(k)
		case d := <-ls.detach:
			ls.remove(d.k)
			if d.closeSession {
				reason = "close_requested"
				return
			}
		case in := <-ls.in:
			if r := ls.handle(in); r != "" {
				reason = r
				return
			}
		case <-ls.connected:
			if !ls.isConnected {
				ls.isConnected, ls.connectedMS = true, ls.clock.nowMS()
				now := time.Now()
				ls.stats.update(func(s *Stats) { s.ConnectedAt = &now })
				connect.Stop()
			}
		case reason = <-ls.gone:
			return
		case <-ls.kick:
			if r := ls.takeTurns(); r != "" {
				reason = r
				return
			}
		case id := <-ls.ackDue:
			ls.acknowledge(id)
		case <-usage.C:
			ls.emit(ls.usageEvent(), false)
			ls.regressUsage()
		case <-reflect:
			ls.reflectAudio()
		case <-expire.C:
			reason = "expired"
			return
		case <-connect.C:
			if !ls.isConnected {
				return // never connected: connection_lost, billed the start charge
			}
		}
	}
}

// join1 attaches a transport. The phone's channel gets session.started (the
// POST started the session); a sideband joins a session under way and gets
// nothing, not even what it missed.
func (ls *liveSession) join1(k *realtime.Sink) {
	go k.Run()
	if k.Path == realtime.PathDataChannel {
		ls.phone = k
		ev := newLiveEvent("session.started")
		ev.Session = ls.resource()
		ls.emitTo(k, ev)
		return
	}
	ls.sidebands = append(ls.sidebands, k)
	ls.stats.update(func(s *Stats) { s.Sidebands++ })
}

func (ls *liveSession) remove(k *realtime.Sink) {
	if k == ls.phone {
		ls.phone = nil
	}
	for i, have := range ls.sidebands {
		if have == k {
			ls.sidebands = append(ls.sidebands[:i], ls.sidebands[i+1:]...)
			break
		}
	}
	k.End(realtime.OpDrop)
}

// finish closes the session: session.closed with the reason and the final
// usage to every transport, then the transports and the peer.
func (ls *liveSession) finish(reason string) {
	for id, t := range ls.acks {
		t.Stop()
		delete(ls.acks, id)
	}
	var cut []*realtime.Sink
	for _, k := range append([]*realtime.Sink{}, ls.sidebands...) {
		if k.CutAtClose {
			ls.remove(k) // a fault: this sideband never reads session.closed
			cut = append(cut, k)
		}
	}
	ev := newLiveEvent("session.closed")
	ev.Reason = reason
	ev.Usage = &liveUsage{Seconds: ls.usageSeconds()}
	// The state says closed before the event goes out, so whoever read
	// the event finds the state it announced (the gateway's tests read
	// the sim's state as soon as the session ended on their side).
	now := time.Now()
	ls.stats.update(func(s *Stats) {
		s.Status, s.CloseReason, s.ClosedAt = "closed", reason, &now
		s.UsageSeconds = ev.Usage.Seconds
	})
	ev.Session = ls.resource()
	ls.emit(ev, false)
	// The organization is billed the session's time once it closes, the
	// start charge included (LiveStats.BilledSeconds).
	ls.srv.oa.Org.Bill(ls.srv.env.Now(), ls.set.model, openai.OrgUsage{MS: max(int64(liveStartCharge*1000), int64(ls.usageMS))})
	all := append(cut, ls.sidebands...)
	if ls.phone != nil {
		all = append(all, ls.phone)
	}
	for _, k := range all {
		k.End(realtime.OpClose)
	}
	for _, k := range all {
		<-k.Gone
	}
	ls.peer.Close()
	ls.srv.live.retire(ls)
}

// usageSeconds is the session's cumulative usage: the time its media has
// been connected, on the session clock, to the millisecond. The 15 s start
// charge is not in it (see LiveStats.BilledSeconds).
func (ls *liveSession) usageSeconds() float64 {
	if ls.isConnected {
		ls.usageMS = max(ls.usageMS, ls.clock.nowMS()-ls.connectedMS)
	}
	return float64(ls.usageMS) / 1000
}

func (ls *liveSession) usageEvent() *liveEvent {
	ev := newLiveEvent("session.usage.updated")
	ev.Usage = &liveUsage{Seconds: ls.usageSeconds()}
	ev.ContextWindow = &liveContext{UsageRatio: min(1, float64(ls.ctxTokens)/float64(ls.cfg.ContextTokens))}
	ls.stats.update(func(s *Stats) { s.UsageSeconds, s.UpdatedSeconds = ev.Usage.Seconds, ev.Usage.Seconds })
	return ev
}

// regressUsage sends, when the usage_regress fault is drawn, a stale
// session.usage.updated with half the last figure; the stats keep the real
// one.
func (ls *liveSession) regressUsage() {
	f := ls.srv.env.Faults.Take(EndpointSessions, ls.set.model, FaultUsageRegress)
	if f == nil {
		return
	}
	ls.srv.env.Stats.Fault(EndpointSessions, f.Kind)
	ev := newLiveEvent("session.usage.updated")
	ev.Usage = &liveUsage{Seconds: float64(ls.usageMS/2) / 1000}
	ev.ContextWindow = &liveContext{UsageRatio: min(1, float64(ls.ctxTokens)/float64(ls.cfg.ContextTokens))}
	ls.emit(ev, false)
}

// resource is the session snapshot (SessionResource).
func (ls *liveSession) resource() *liveResource {
	r := &liveResource{ID: ls.id, Model: ls.set.model, Status: "active", Instructions: ls.set.instructions,
		Store: ls.set.store, Client: ls.set.client, Input: ls.set.input, Triggers: ls.set.triggers,
		ExpiresAt:  ls.clock.start.Add(ls.clock.real(ls.expireAfter)).Unix(),
		Delegation: liveDelegConfig{Type: "client", AcknowledgementDelayMS: ls.set.ackDelayMS}}
	r.Audio.Output.Voice = ls.set.voice
	return r
}

// emit sends ev to the phone (when its allowlist lets the type through)
// and to every sideband (they are not limited by it); sidebandsOnly keeps
// it from the phone.
func (ls *liveSession) emit(ev *liveEvent, sidebandsOnly bool) {
	b, err := json.Marshal(ev)
	if err != nil {
		ls.srv.env.Log.Error("sim: marshal live event", "type", ev.Type, "err", err)
		return
	}
	ls.stats.update(func(s *Stats) { s.EventsOut++ })
	if !sidebandsOnly && ls.phone != nil && ls.phoneMay(ev.Type) && !ls.phone.Push(b) {
		ls.phone = nil
	}
	kept := ls.sidebands[:0]
	for _, k := range ls.sidebands {
		if k.Push(b) {
			kept = append(kept, k)
		}
	}
	clear(ls.sidebands[len(kept):])
	ls.sidebands = kept
}

// emitTo sends ev to one transport: the phone's session.started, and
// errors about the events a transport sent.
func (ls *liveSession) emitTo(k *realtime.Sink, ev *liveEvent) {
	if k.Path == realtime.PathDataChannel && !ls.phoneMay(ev.Type) {
		return
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return
	}
	ls.stats.update(func(s *Stats) {
		s.EventsOut++
		if ev.Type == "error" {
			s.Errors++
		}
	})
	if !k.Push(b) {
		ls.remove(k)
	}
}

func (ls *liveSession) phoneMay(typ string) bool {
	return ls.set.allowServer == nil || ls.set.allowServer[typ]
}
