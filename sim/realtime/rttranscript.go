package realtime

import (
	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
)

// Input audio transcription: conversation.item.input_audio_transcription
// .delta events in Realtime.DeltaBytes pieces, then .completed with usage;
// or .failed (the transcription_failed fault). Usage takes the duration
// form for the models the API bills by the second (durationBilled), and
// the tokens form for the other transcription models.

// FaultTranscriptionFailed makes an input transcription fail: its item gets
// conversation.item.input_audio_transcription.failed instead of deltas and
// completed.
const FaultTranscriptionFailed core.FaultKind = "transcription_failed"

// heldTranscript is a committed item whose transcription has not been sent.
type heldTranscript struct {
	itemID string
	ms     int
	model  string
}

// flushTranscripts sends the transcriptions held so far.
func (ss *rtSession) flushTranscripts() {
	held := ss.transcripts
	ss.transcripts = nil
	for _, h := range held {
		ss.transcribe(h)
	}
}

func (ss *rtSession) transcribe(h heldTranscript) {
	if f := ss.srv.env.Faults.Take(ss.endpoint, ss.view.model, FaultTranscriptionFailed); f != nil {
		ss.srv.env.Stats.Fault(ss.endpoint, f.Kind)
		ev := newEvent("conversation.item.input_audio_transcription.failed")
		ev.ItemID, ev.ContentIndex = h.itemID, Ptr(0)
		ev.Error = &rtError{Type: "transcription_error", Code: Ptr("audio_unintelligible"),
			Message: "The audio could not be transcribed."}
		ss.emit(ev)
		return
	}
	heard := ss.rt.Heard
	for p := range openai.Pieces(heard, ss.rt.DeltaBytes) {
		d := newEvent("conversation.item.input_audio_transcription.delta")
		d.ItemID, d.ContentIndex, d.Delta = h.itemID, Ptr(0), Ptr(p)
		ss.emit(d)
	}
	tr := newEvent("conversation.item.input_audio_transcription.completed")
	tr.ItemID, tr.ContentIndex, tr.Transcript = h.itemID, Ptr(0), Ptr(heard)
	if openai.DurationBilled(h.model) {
		tr.Usage = &rtDurationU{Type: "duration", Seconds: float64(h.ms) / 1000}
		ss.srv.oa.Org.Bill(ss.srv.env.Now(), h.model, openai.OrgUsage{MS: int64(h.ms)})
	} else {
		u := transcriptionUsage(audioInTokens(h.ms), heard)
		tr.Usage = u
		ss.srv.oa.Org.Bill(ss.srv.env.Now(), h.model, u.billed())
	}
	ss.emit(tr)
}
