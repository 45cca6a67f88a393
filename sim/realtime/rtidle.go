package realtime

import (
	"time"

	"github.com/voxgate/voxgate/sim/core"
)

// Server VAD's idle timeout (turn_detection.idle_timeout_ms, server_vad
// only): when the user of a connected call has been silent that long since
// the model's last reply finished playing, the API sends
// input_audio_buffer.timeout_triggered, commits the silent audio as an
// input_audio item and answers it (the spec's
// RealtimeServerEventInputAudioBufferTimeoutTriggered). The simulator does
// not decode audio: silence is no RTP packets arriving. A call whose peer
// has gone sends nothing, so the sideband of an abandoned call goes quiet.

// armIdle starts the idle countdown when it should run and reports whether
// one is running: server VAD with idle_timeout_ms, a connected peer, and
// nothing under way (no user turn, response or reply still playing).
func (ss *rtSession) armIdle() bool {
	if ss.view.idleMS == 0 || ss.call == nil || ss.turn != nil || ss.active != nil || ss.playing != nil || ss.peerLeft() {
		ss.stopIdle()
		return false
	}
	if ss.idle == nil {
		ss.idle = time.NewTimer(time.Duration(ss.view.idleMS) * time.Millisecond)
	}
	return true
}

func (ss *rtSession) stopIdle() {
	if ss.idle != nil {
		ss.idle.Stop()
		ss.idle = nil
	}
}

func (ss *rtSession) peerLeft() bool {
	select {
	case <-ss.peerGone:
		return true
	default:
		return false
	}
}

// idleTimeout sends timeout_triggered for the silent stretch, commits it
// as an empty audio item and, with create_response, answers it.
func (ss *rtSession) idleTimeout() {
	id := "item_" + core.RandomID()[:21]
	ev := newEvent("input_audio_buffer.timeout_triggered")
	ev.AudioStartMS, ev.AudioEndMS, ev.ItemID = Ptr(ss.audioPosMS), Ptr(ss.audioPosMS+ss.view.idleMS), id
	ss.emit(ev)
	ss.audioPosMS += ss.view.idleMS
	ss.commitItem(id, 0, "") // silence: no tokens the sim counts, no words
	ss.stats.update(func(s *CallStats) { s.IdleTimeouts++ })
	if ss.view.createResponse {
		ss.startResponse(nil)
	}
}
