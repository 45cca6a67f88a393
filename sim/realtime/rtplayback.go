package realtime

import (
	"time"

	"github.com/voxgate/voxgate/sim/core"
)

// Playback of a spoken reply over WebRTC. The API generates audio faster
// than real time and buffers it on its side of the call, so the buffer
// outlives the response: output_audio_buffer.started when a reply begins
// playing, output_audio_buffer.stopped when it has played out (after
// response.done), and output_audio_buffer.cleared when the client
// (output_audio_buffer.clear) or the user speaking over it cuts it.

type playback struct {
	respID string
	itemID string
	start  time.Time
	ms     int
	timer  *time.Timer
	voice  *voice
}

// startPlayback plays a's message on the call's track. A reply still
// playing from an earlier response has played out by then.
func (ss *rtSession) startPlayback(a *activeResponse) {
	if ss.playing != nil {
		ss.playing.voice.stop()
		ss.endPlayback()
	}
	started := newEvent("output_audio_buffer.started")
	started.ResponseID = a.resp.ID
	ss.emit(started)
	ss.playing = &playback{respID: a.resp.ID, itemID: a.msg.ID, start: time.Now(), ms: a.audioMS,
		timer: time.NewTimer(time.Duration(a.audioMS) * time.Millisecond), voice: ss.call.speak(a.audioMS)}
}

// endPlayback runs when the reply has played out. The track sends its last
// frames on its own clock.
func (ss *rtSession) endPlayback() {
	p := ss.playing
	p.timer.Stop()
	ss.playing = nil
	stopped := newEvent("output_audio_buffer.stopped")
	stopped.ResponseID = p.respID
	ss.emit(stopped)
}

// shortenPlayback ends response respID's playback once ms have played: a
// cancelled response plays only what it generated.
func (ss *rtSession) shortenPlayback(respID string, ms int) {
	p := ss.playing
	if p == nil || p.respID != respID || ms >= p.ms {
		return
	}
	p.ms = ms
	p.voice.shorten(ms)
	p.timer.Reset(max(0, time.Until(p.start.Add(time.Duration(ms)*time.Millisecond))))
}

// cutPlayback stops the audio at once and clears the buffer. The reply's
// item then holds only the audio that played, as the API truncates it.
func (ss *rtSession) cutPlayback() {
	p := ss.playing
	p.timer.Stop()
	p.voice.stop()
	ss.playing = nil
	played := min(p.ms, int(time.Since(p.start).Milliseconds()))
	if i := ss.find(p.itemID); i >= 0 {
		ss.items[i].audioTok = min(ss.items[i].audioTok, audioOutTokens(played))
	} else if a := ss.active; a != nil && a.resp.ID == p.respID {
		a.heardMS = Ptr(played) // still generating: endMessage keeps this much
	}
	cleared := newEvent("output_audio_buffer.cleared")
	cleared.ResponseID = p.respID
	ss.emit(cleared)
}

// clearOutput serves output_audio_buffer.clear (WebRTC only): the audio
// stops; a response still generating goes on (response.cancel stops it).
func (ss *rtSession) clearOutput() *core.APIError {
	if ss.call == nil {
		return core.ErrInvalidValue("type", "output_audio_buffer.clear is only supported for WebRTC connections.")
	}
	if ss.playing == nil {
		return &core.APIError{Type: "invalid_request_error", Code: "output_audio_buffer_empty", Message: "There is no output audio to clear."}
	}
	ss.cutPlayback()
	return nil
}

// quiet stops every timer and sender of the session: it is ending.
func (ss *rtSession) quiet() {
	if ss.active != nil {
		ss.active.stopTimer()
	}
	ss.dropTurn()
	if ss.playing != nil {
		ss.playing.timer.Stop()
		ss.playing.voice.stop()
		ss.playing = nil
	}
}
