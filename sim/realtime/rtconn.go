package realtime

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/voxgate/voxgate/sim/core"
)

// rtSession is one Realtime session: a WebRTC call's, or a WebSocket's. One
// goroutine (run) owns its state and is the only one to emit events, so every
// transport sees the same events in the same order; transports talk to it
// through channels.
type rtSession struct {
	srv      *Server
	rt       *Config
	endpoint string // the endpoint faults are drawn for
	call     *call  // nil for a WebSocket-only session
	stats    *callCounters
	convID   string

	events chan inEvent
	attach chan *Sink
	detach chan *Sink
	kick   chan struct{} // RTP audio arrived; coalesced
	ctx    context.Context
	cancel context.CancelFunc
	exited chan struct{}
	// peerGone is closed when the call's peer went away while its
	// sidebands stay open (unless Realtime.CloseSidebandWithPeer).
	peerGone chan struct{}

	// Owned by run.
	cfg         sessionConfig
	view        sessionView
	sinks       []*Sink
	items       []convItem
	active      *activeResponse
	playing     *playback   // a WebRTC call's reply audio, until it has played
	spoke       bool        // the model has produced audio: the voice is fixed
	turn        *vadTurn    // the user turn server VAD is following
	idle        *time.Timer // server VAD's idle_timeout_ms, while the user is silent (rtidle.go)
	waitedMS    int         // audio the user has listened to while the model answers
	transcripts []heldTranscript
	bufferedMS  int   // input audio not yet committed
	audioPosMS  int   // input audio committed so far
	packetsSeen int64 // RTP packets already added to bufferedMS
	pending     map[string]bool
	prevInput   tokenCount
}

// inEvent is a client event and the transport it came by.
type inEvent struct {
	data []byte
	from *Sink
}

func (s *Server) newRTSession(cfg sessionConfig, endpoint string, c *call) *rtSession {
	ctx, cancel := context.WithCancel(context.Background())
	cfg.started(time.Now(), s.rt.cfg.MaxSession)
	ss := &rtSession{srv: s, rt: &s.rt.cfg, endpoint: endpoint, call: c, stats: newCallCounters(),
		convID: "conv_" + core.RandomID()[:21], events: make(chan inEvent, 64), attach: make(chan *Sink),
		detach: make(chan *Sink, 4), kick: make(chan struct{}, 1), ctx: ctx, cancel: cancel,
		exited: make(chan struct{}), peerGone: make(chan struct{}), cfg: cfg, view: cfg.view(), pending: map[string]bool{}}
	return ss
}

// Submit hands a client event to the session; false once it has ended.
func (ss *rtSession) Submit(data []byte, from *Sink) bool {
	select {
	case ss.events <- inEvent{data: data, from: from}:
		return true
	case <-ss.ctx.Done():
		return false
	}
}

// Join attaches a transport; it gets session.created first.
func (ss *rtSession) Join(k *Sink) bool {
	select {
	case ss.attach <- k:
		return true
	case <-ss.ctx.Done():
		return false
	}
}

// Leave detaches a transport whose peer went away.
func (ss *rtSession) Leave(k *Sink) {
	select {
	case ss.detach <- k:
	case <-ss.ctx.Done():
	}
}

func (ss *rtSession) Ended() <-chan struct{} { return ss.ctx.Done() }

// audioArrived is called by the RTP reader for every packet; it never blocks.
func (ss *rtSession) audioArrived() {
	select {
	case ss.kick <- struct{}{}:
	default:
	}
}

// stop ends the session and waits until its transports are closed.
func (ss *rtSession) stop() {
	ss.cancel()
	<-ss.exited
}

func (ss *rtSession) run() {
	defer close(ss.exited)
	end := OpClose
	defer func() { ss.shutdown(end) }()
	expire := time.NewTimer(ss.rt.MaxSession)
	defer expire.Stop()
	peerGone := ss.peerGone
	for {
		var generated, played <-chan time.Time
		if ss.active != nil && ss.active.gen != nil {
			generated = ss.active.gen.C
		}
		if ss.playing != nil {
			played = ss.playing.timer.C
		}
		var silent, idle <-chan time.Time
		if ss.turn != nil && ss.turn.silence != nil {
			silent = ss.turn.silence.C
		}
		if ss.armIdle() {
			idle = ss.idle.C
		}
		select {
		case <-ss.ctx.Done():
			return
		case k := <-ss.attach:
			ss.stats.update(func(s *CallStats) {
				if k.Path == PathSideband {
					s.Sidebands++
				}
			})
			go k.Run()
			ss.sinks = append(ss.sinks, k)
			if k.Path != PathSideband || ss.rt.SidebandSessionCreated {
				// A sideband is not promised session.created: it joins a
				// session already under way.
				ev := newEvent("session.created")
				ev.Session = ss.cfg
				ss.emitTo(k, ev)
			}
		case k := <-ss.detach:
			ss.remove(k)
			if ss.orphan() {
				return // a WebSocket session lives as long as its socket
			}
		case <-peerGone:
			peerGone = nil // read once; orphan sees it closed
			if ss.orphan() {
				return
			}
		case <-expire.C:
			ss.emit(errorEvent(errSessionExpired(ss.rt.MaxSession), ""))
			end = opGoingAway
			if ss.call != nil {
				go ss.call.end("session_expired") // end waits for this goroutine
			}
			return
		case in := <-ss.events:
			ss.stats.update(func(s *CallStats) { s.EventsIn++ })
			ss.handle(in)
		case <-ss.kick:
			ss.takeRTPAudio()
		case <-generated:
			ss.finishGeneration()
		case <-played:
			ss.endPlayback()
		case <-silent:
			ss.endTurn()
		case <-idle:
			ss.idle = nil
			ss.idleTimeout()
		}
	}
}

// orphan reports a session nobody can reach any more: a WebSocket session
// whose socket closed, or a call session whose peer went away and whose
// last sideband closed.
func (ss *rtSession) orphan() bool {
	if len(ss.sinks) > 0 {
		return false
	}
	if ss.call == nil {
		return true
	}
	select {
	case <-ss.peerGone:
		return true
	default:
		return false
	}
}

func (ss *rtSession) shutdown(end SinkOp) {
	ss.quiet()
	for _, k := range ss.sinks {
		k.End(end)
	}
	for _, k := range ss.sinks {
		<-k.Gone
	}
	ss.sinks = nil
}

func (ss *rtSession) remove(k *Sink) {
	for i, have := range ss.sinks {
		if have == k {
			ss.sinks = append(ss.sinks[:i], ss.sinks[i+1:]...)
			k.End(OpDrop)
			return
		}
	}
}

// emit sends ev to every transport.
func (ss *rtSession) emit(ev *rtEvent) {
	b, err := json.Marshal(ev)
	if err != nil {
		ss.srv.env.Log.Error("sim: marshal realtime event", "type", ev.Type, "err", err)
		return
	}
	ss.stats.update(func(s *CallStats) { s.EventsOut++ })
	kept := ss.sinks[:0]
	for _, k := range ss.sinks {
		if k.Push(b) {
			kept = append(kept, k)
		}
	}
	clear(ss.sinks[len(kept):])
	ss.sinks = kept
}

// emitTo sends ev to one transport only: its session.created, and errors
// about the events it sent.
func (ss *rtSession) emitTo(k *Sink, ev *rtEvent) {
	b, err := json.Marshal(ev)
	if err != nil {
		return
	}
	ss.stats.update(func(s *CallStats) {
		s.EventsOut++
		if ev.Type == "error" {
			s.Errors++
		}
	})
	if !k.Push(b) {
		ss.remove(k)
	}
}

// handle acts on one client event. Refused events get an `error` event on
// the transport that sent them; the connection stays open, as in the API.
func (ss *rtSession) handle(in inEvent) {
	ev, apiErr := decodeClientEvent(in.data)
	if apiErr == nil {
		apiErr = ss.apply(ev, in.from)
	}
	if apiErr != nil && in.from != nil {
		ss.emitTo(in.from, errorEvent(apiErr, ev.EventID))
	}
}

func (ss *rtSession) apply(ev *clientEvent, from *Sink) *core.APIError {
	switch ev.Type {
	case "session.update":
		if err := ss.checkVoice(ev.Session); err != nil {
			return err
		}
		ss.cfg.apply(ev.Session, ss.rt)
		ss.view = ss.cfg.view()
		out := newEvent("session.updated")
		out.Session = ss.cfg
		ss.emit(out)
	case "conversation.item.create":
		return ss.createItem(ev, from)
	case "conversation.item.retrieve":
		i := ss.find(ev.ItemID)
		if i < 0 {
			return errNoItem(ev.ItemID)
		}
		out := newEvent("conversation.item.retrieved")
		out.Item = &ss.items[i].item
		ss.emitTo(from, out)
	case "conversation.item.delete":
		i := ss.find(ev.ItemID)
		if i < 0 {
			return errNoItem(ev.ItemID)
		}
		ss.items = append(ss.items[:i], ss.items[i+1:]...)
		out := newEvent("conversation.item.deleted")
		out.ItemID = ev.ItemID
		ss.emit(out)
	case "conversation.item.truncate":
		return ss.truncate(ev)
	case "input_audio_buffer.append":
		ss.addAudio(ev.AudioBytes / 48) // PCM16 mono at 24 kHz
	case "input_audio_buffer.commit":
		if ss.bufferedMS < 100 {
			return &core.APIError{Type: "invalid_request_error", Code: "input_audio_buffer_commit_empty",
				Message: "Error committing input audio buffer: buffer too small. Expected at least 100ms of audio."}
		}
		ss.commit()
		if ss.active == nil {
			ss.flushTranscripts()
		}
	case "input_audio_buffer.clear":
		ss.bufferedMS = 0
		ss.dropTurn()
		ss.emit(newEvent("input_audio_buffer.cleared"))
	case "output_audio_buffer.clear":
		return ss.clearOutput()
	case "response.create":
		return ss.responseCreate(ev.Response)
	case "response.cancel":
		if ss.active == nil {
			return &core.APIError{Type: "invalid_request_error", Code: "response_cancel_not_active",
				Message: "Cancellation failed: no active response found."}
		}
		ss.cancelResponse("client_cancelled")
	}
	return nil
}

func errSessionExpired(limit time.Duration) *core.APIError {
	d := limit.String()
	if limit%time.Minute == 0 {
		d = fmt.Sprintf("%d minutes", int(limit/time.Minute))
	}
	return &core.APIError{Type: "invalid_request_error", Code: "session_expired",
		Message: "Your session hit the maximum duration of " + d + "."}
}
