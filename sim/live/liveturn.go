package live

import (
	"encoding/base64"
	"strings"
	"sync"
	"time"

	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
	"github.com/voxgate/voxgate/sim/realtime"
)

// handle acts on one client event and returns a close reason when it ends
// the session. A phone's event its allowlist leaves out is refused and not
// applied; refusals get an `error` event on the transport that sent the
// event, and the session goes on.
func (ls *liveSession) handle(in liveIn) (closeReason string) {
	ls.stats.update(func(s *Stats) { s.EventsIn++ })
	ev, apiErr := decodeLiveClientEvent(in.data)
	// By path, not by identity: a phone channel the session has dropped is
	// still the phone's.
	if in.from.Path == realtime.PathDataChannel && ls.set.allowClient != nil && ev.Type != "" && !ls.set.allowClient[ev.Type] {
		ls.stats.update(func(s *Stats) { s.RefusedClientEvents = appendCapped(s.RefusedClientEvents, ev.Type) })
		ls.emitTo(in.from, liveErrorEvent(errNotAllowed(ev.Type), ev.EventID))
		return ""
	}
	if apiErr == nil {
		if ev.Type == "session.close" {
			ls.record(ev, in.from)
			return "close_requested"
		}
		apiErr = ls.apply(ev, in.from)
	}
	if apiErr != nil {
		ls.emitTo(in.from, liveErrorEvent(apiErr, ev.EventID))
	}
	return ""
}

// record keeps what the session applied, for tests to assert on.
func (ls *liveSession) record(ev *liveClientEvent, from *realtime.Sink) {
	a := Applied{Type: ev.Type, Path: from.Path, DelegationID: ev.DelegationID, Content: ev.Content,
		AtMS: ls.clock.nowMS()}
	ls.stats.update(func(s *Stats) { s.Applied = appendCapped(s.Applied, a) })
}

// apply acts on a client event. What it applied is recorded before the
// event it answers with goes out, so a test that saw the answer finds the
// record.
func (ls *liveSession) apply(ev *liveClientEvent, from *realtime.Sink) *core.APIError {
	switch ev.Type {
	case "session.update":
		if ev.AckDelayMS != nil {
			ls.set.ackDelayMS = *ev.AckDelayMS // for later delegations
		}
		out := newLiveEvent("session.updated")
		out.ClientEventID = ev.EventID
		out.Session = ls.resource()
		ls.record(ev, from)
		ls.emit(out, false)
	case "session.input_audio.mute", "session.input_audio.unmute":
		ls.muted = ev.Type == "session.input_audio.mute"
		out := newLiveEvent("session.input_audio.muted")
		if !ls.muted {
			out.Type = "session.input_audio.unmuted"
		}
		out.ClientEventID = ev.EventID
		ls.record(ev, from)
		ls.emit(out, false)
	default: // an append
		if id := ev.DelegationID; id != nil && !ls.delegations[*id] {
			return errUnknownDelegation(*id)
		}
		if ev.Type != "session.instructions.append" {
			// Any commentary or thinking cancels every pending automatic
			// acknowledgement, for all delegations (openai-go's docs).
			ls.cancelAcks()
		}
		now := ls.clock.nowMS()
		out := newLiveEvent(liveAppends[ev.Type]).span(now, now)
		out.ClientEventID = ev.EventID
		ls.record(ev, from)
		ls.emit(out, false)
		ls.ctxTokens += openai.TokensFor(len(ev.Content))
		if ev.Type == "session.commentary.append" {
			ls.speak(ev.Content)
		}
	}
	return nil
}

// takeTurns turns the packets that arrived into user turns.
func (ls *liveSession) takeTurns() (closeReason string) {
	due := ls.packets.Load() / int64(ls.cfg.TurnPackets)
	for ; ls.turns < due; ls.turns++ {
		if ls.muted {
			continue
		}
		if r := ls.turn(); r != "" {
			return r
		}
	}
	return ""
}

// turn is one thing the user says: heard as input transcript, then either
// answered by the voice model itself (a rule's text) or delegated.
func (ls *liveSession) turn() (closeReason string) {
	said := ls.cfg.Said[int(ls.turns)%len(ls.cfg.Said)]
	end := ls.clock.nowMS()
	start := max(0, end-int64(float64(ls.cfg.TurnPackets*realtime.PacketMS)*ls.clock.rate))
	ls.stats.update(func(s *Stats) { s.Turns++ })
	if f := ls.srv.env.Faults.Take(EndpointSessions, ls.set.model, core.FaultContentFilter); f != nil {
		ls.srv.env.Stats.Fault(EndpointSessions, f.Kind)
		ls.hear(said, start, end)
		return "content"
	}
	reply := decide(ls.srv.live.rules, ls.set.model, said)
	if reply.Text != "" {
		ls.hear(said, start, end)
		ls.speak(reply.Text)
		return ""
	}
	id := "item_" + core.RandomID()
	created := newLiveEvent("session.delegation.created")
	created.OffsetMS = &end
	created.Delegation = &liveDelegation{ID: id, Type: "delegation", Target: "client"}
	// Counted before it is sent: whoever sees the event may read the
	// stats at once.
	ls.delegations[id] = true
	ls.stats.update(func(s *Stats) { s.Delegations = appendCapped(s.Delegations, id) })
	if !reply.DelegationFirst {
		ls.hear(said, start, end)
	}
	ls.emit(created, false)
	if reply.DelegationFirst {
		ls.hear(said, start, end)
	}
	ls.acks[id] = time.AfterFunc(ls.clock.real(time.Duration(ls.set.ackDelayMS)*time.Millisecond), func() {
		select {
		case ls.ackDue <- id:
		case <-ls.exited:
		}
	})
	return ""
}

// acknowledge speaks a delegation's automatic acknowledgement, unless an
// append cancelled it meanwhile.
func (ls *liveSession) acknowledge(id string) {
	if _, pending := ls.acks[id]; !pending {
		return
	}
	delete(ls.acks, id)
	ls.stats.update(func(s *Stats) { s.Acknowledgements++ })
	ls.speak(ls.cfg.Acknowledgement)
}

func (ls *liveSession) cancelAcks() {
	for id, t := range ls.acks {
		t.Stop()
		delete(ls.acks, id)
	}
}

// hear sends what the user said as input transcript deltas, one word each,
// spread over the turn's span of the timeline.
func (ls *liveSession) hear(text string, start, end int64) {
	ls.transcribe("session.input_transcript.delta", "user", text, start, end)
}

// speak sends what the model says as output transcript deltas, one word
// each, WordMS apiece, after whatever it is still saying.
func (ls *liveSession) speak(text string) {
	start := max(ls.clock.nowMS(), ls.speakingTo)
	end := start + int64(len(strings.Fields(text))*ls.cfg.WordMS)
	ls.speakingTo = end
	ls.transcribe("session.output_transcript.delta", "model", text, start, end)
	ls.voice(start, end)
}

// voice plays what the model says on the media track, as the API sends its
// voice: from start to end on the session timeline, the same span its
// output transcript deltas cover, in 20 ms Opus frames of real time (at
// least one). The sim does not synthesise speech; the frames are silence,
// enough for a phone, a relay or a browser to see the audio arrive.
func (ls *liveSession) voice(start, end int64) {
	wait := ls.clock.real(time.Duration(start-ls.clock.nowMS()) * time.Millisecond)
	frames := max(1, int64(ls.clock.real(time.Duration(end-start)*time.Millisecond)/(realtime.PacketMS*time.Millisecond)))
	go func() {
		if wait > 0 {
			t := time.NewTimer(wait)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ls.ctx.Done():
				return
			case <-ls.exited:
				return
			}
		}
		ls.peer.Play(func(i int64) bool { return i < frames }, ls.ctx.Done(), ls.exited,
			func() { ls.stats.update(func(s *Stats) { s.PacketsOut++ }) })
	}()
}

func (ls *liveSession) transcribe(typ, speaker, text string, start, end int64) {
	words := strings.Fields(text)
	if len(words) == 0 {
		return
	}
	step := (end - start) / int64(len(words))
	for i, w := range words {
		if i > 0 {
			w = " " + w
		}
		s := start + int64(i)*step
		e := s + step
		if i == len(words)-1 {
			e = end
		}
		ev := newLiveEvent(typ).span(s, e)
		ev.Delta = &w
		ls.emit(ev, false)
	}
	ls.ctxTokens += openai.TokensFor(len(text))
	line := Line{Speaker: speaker, Text: text, StartMS: start, EndMS: end}
	ls.stats.update(func(s *Stats) { s.Transcript = appendCapped(s.Transcript, line) })
}

// reflectEvery is how often sidebands get their copies of the audio: 100 ms
// of each stream, about 128 kB/s of base64 PCM16 at 24 kHz in all.
const reflectEvery = 100 * time.Millisecond

// reflectedSilence is 100 ms of PCM16 mono 24 kHz silence, base64: the sim
// does not decode the phone's Opus, so both copies carry silence.
var reflectedSilence = sync.OnceValue(func() string {
	return base64.StdEncoding.EncodeToString(make([]byte, 24000*2/10))
})

// reflectAudio sends the sidebands the API's copies of both audio streams.
func (ls *liveSession) reflectAudio() {
	if len(ls.sidebands) == 0 || !ls.isConnected {
		return
	}
	now := ls.clock.nowMS()
	in := &liveEvent{Type: "session.input_audio.append", Audio: reflectedSilence()}
	out := (&liveEvent{Type: "session.output_audio.delta"}).span(max(0, now-reflectEvery.Milliseconds()), now)
	out.Delta = realtime.Ptr(reflectedSilence())
	// Counted before they go: a sideband that has read the copies then
	// finds them in the stats.
	n := int64(2 * len(reflectedSilence()))
	ls.stats.update(func(s *Stats) { s.ReflectedAudioBytes += n })
	ls.emit(in, true)
	ls.emit(out, true)
}
