package realtime

import (
	"encoding/base64"
	"fmt"
	"time"

	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
)

// A response plays the script's reply: the message (transcript deltas and,
// spoken, its audio) starts at once, then the response stays "generating"
// for Realtime.GenerationMS, when the message closes, tool calls go out and
// response.done follows with usage. As in the API, generation ends before
// playback does: over WebRTC the reply's audio goes on playing after
// response.done, and output_audio_buffer.stopped marks its end (see
// rtplayback.go). response.cancel can only cut a response still generating.

type activeResponse struct {
	resp     rtResponse
	in       tokenCount
	rep      openai.Answer
	msg      *rtItem // the message being spoken or written
	outIndex int
	audio    bool
	audioMS  int // audio the reply generates
	started  time.Time
	gen      *time.Timer // fires when generation ends
	genMS    int
	cut      string // why the reply was cut short: incomplete's reason
	// cutCall is the call a model that ran out of output tokens was
	// writing: it goes out with its arguments cut, status incomplete.
	cutCall *openai.ToolCall
	failed  bool
	// heardMS caps the audio the message keeps in the conversation when
	// its playback was cut before generation ended; nil when not cut.
	heardMS *int
}

func (a *activeResponse) stopTimer() {
	if a.gen != nil {
		a.gen.Stop()
		a.gen = nil
	}
}

func (ss *rtSession) responseCreate(params map[string]any) *core.APIError {
	if ss.active != nil {
		ss.stats.update(func(s *CallStats) { s.RefusedResponseCreates++ })
		return &core.APIError{Type: "invalid_request_error", Code: "conversation_already_has_active_response",
			Message: fmt.Sprintf("Conversation already has an active response in progress: %s. Wait until the response is finished before creating a new one.", ss.active.resp.ID)}
	}
	if f := ss.srv.env.Faults.Take(ss.endpoint, ss.view.model, core.FaultNoResponse); f != nil {
		ss.srv.env.Stats.Fault(ss.endpoint, f.Kind)
		return nil // the fault: response.create is silently ignored
	}
	ss.stats.update(func(s *CallStats) { s.ResponseCreates++ })
	ss.startResponse(params)
	return nil
}

// startResponse starts a response; params are response.create's (nil for
// one that server VAD starts).
func (ss *rtSession) startResponse(params map[string]any) {
	mods := []string{"audio"}
	if ss.view.textOnly {
		mods = []string{"text"}
	}
	limit := outputLimit(ss.cfg, params)
	var maxOut any = "inf"
	if limit > 0 {
		maxOut = limit
	}
	a := &activeResponse{in: ss.inputCount(), rep: ss.srv.oa.Script.Plan(ss.chatView()), started: time.Now(),
		audio: !ss.view.textOnly, genMS: ss.rt.GenerationMS}
	a.resp = rtResponse{Object: "realtime.response", ID: "resp_" + core.RandomID()[:21], Status: "in_progress",
		Output: []rtItem{}, ConversationID: ss.convID, OutputModalities: mods, MaxOutputTokens: maxOut}
	a.resp.Audio = &responseAudio{}
	a.resp.Audio.Output.Format = map[string]any{"type": "audio/pcm", "rate": 24000}
	a.resp.Audio.Output.Voice = ss.view.voice
	ss.active = a
	ss.stats.update(func(s *CallStats) { s.Responses++ })
	created := newEvent("response.created")
	created.Response = &a.resp
	ss.emit(created)
	ss.emit(ss.rateLimits(a))
	if a.rep.Text != "" && a.audio {
		a.audioMS = ss.rt.ReplyAudioMS
	}
	ss.shape(a, limit)
	if a.rep.Text != "" {
		ss.startMessage(a)
	}
	a.gen = time.NewTimer(time.Duration(a.genMS) * time.Millisecond)
}

func (ss *rtSession) startMessage(a *activeResponse) {
	a.msg = &rtItem{ID: "item_" + core.RandomID()[:21], Object: "realtime.item", Type: "message",
		Status: "in_progress", Role: "assistant", Content: []rtContent{}}
	ss.emitOutputItem("added", a, *a.msg)
	part, deltaType := rtContent{Type: "text", Text: Ptr("")}, "response.output_text.delta"
	if a.audio {
		part, deltaType = rtContent{Type: "audio", Transcript: Ptr("")}, "response.output_audio_transcript.delta"
	}
	ss.emit(ss.partEvent("response.content_part.added", a, part))
	for p := range openai.Pieces(a.rep.Text, ss.rt.DeltaBytes) {
		d := ss.partEvent(deltaType, a, part)
		d.Part, d.Delta = nil, Ptr(p)
		ss.emit(d)
	}
	if !a.audio {
		return
	}
	ss.spoke = true
	if ss.call != nil {
		ss.startPlayback(a)
	} else {
		ss.sendPCM(a)
	}
}

// sendPCM sends a WebSocket session's reply audio: PCM16 silence at 24 kHz
// in 100 ms deltas, as response.output_audio.delta events.
func (ss *rtSession) sendPCM(a *activeResponse) {
	const chunkMS = 100
	for ms := 0; ms < a.audioMS; ms += chunkMS {
		n := min(chunkMS, a.audioMS-ms) * 48
		d := ss.partEvent("response.output_audio.delta", a, rtContent{})
		d.Part, d.Delta = nil, Ptr(base64.StdEncoding.EncodeToString(make([]byte, n)))
		ss.emit(d)
	}
}

// finishGeneration runs when the active response has generated everything.
func (ss *rtSession) finishGeneration() {
	a := ss.active
	a.gen = nil
	if a.msg != nil {
		status := "completed"
		if a.cut != "" {
			status = "incomplete"
		}
		ss.endMessage(a, status)
	}
	for _, c := range a.rep.Calls {
		ss.emitCall(a, c, "completed")
	}
	if a.cutCall != nil {
		ss.emitCall(a, *a.cutCall, "incomplete")
	}
	finishOutcome(a)
	ss.done(a)
}

// endMessage closes the message content; a cut message is "incomplete".
func (ss *rtSession) endMessage(a *activeResponse, status string) {
	text := a.rep.Text
	var part rtContent
	if a.audio {
		done := ss.partEvent("response.output_audio_transcript.done", a, rtContent{})
		done.Part, done.Transcript = nil, Ptr(text)
		ss.emit(done)
		ad := ss.partEvent("response.output_audio.done", a, rtContent{})
		ad.Part = nil
		ss.emit(ad)
		part = rtContent{Type: "audio", Transcript: Ptr(text)}
	} else {
		done := ss.partEvent("response.output_text.done", a, rtContent{})
		done.Part, done.Text = nil, Ptr(text)
		ss.emit(done)
		part = rtContent{Type: "text", Text: Ptr(text)}
	}
	ss.emit(ss.partEvent("response.content_part.done", a, part))
	if part.Type == "audio" {
		part.Type = "output_audio"
	} else {
		part.Type = "output_text"
	}
	it := *a.msg
	it.Status, it.Content = status, []rtContent{part}
	ss.emitOutputItem("done", a, it)
	ci := convItem{item: it}
	if a.audio {
		ms := a.audioMS
		if a.heardMS != nil {
			ms = min(ms, *a.heardMS)
		}
		ci.audioTok = audioOutTokens(ms)
	} else {
		ci.textBytes = len(text)
	}
	ss.items = append(ss.items, ci)
	a.resp.Output = append(a.resp.Output, it)
	a.outIndex++
}

// emitCall sends one function call: added, argument deltas, done. A call
// of a response cut short (cancelled, or out of tokens) is sent all the
// same, as the API does, with the arguments written so far and status
// incomplete: a client must run only completed calls.
func (ss *rtSession) emitCall(a *activeResponse, c openai.ToolCall, status string) {
	it := rtItem{ID: "item_" + core.RandomID()[:21], Object: "realtime.item", Type: "function_call",
		Status: "in_progress", CallID: "call_" + core.RandomID()[:16], Name: c.Name, Arguments: Ptr("")}
	ss.emitOutputItem("added", a, it)
	for p := range openai.Pieces(c.Arguments, ss.rt.DeltaBytes) {
		d := newEvent("response.function_call_arguments.delta")
		d.ResponseID, d.ItemID, d.OutputIndex, d.CallID, d.Delta = a.resp.ID, it.ID, Ptr(a.outIndex), it.CallID, Ptr(p)
		ss.emit(d)
	}
	done := newEvent("response.function_call_arguments.done")
	done.ResponseID, done.ItemID, done.OutputIndex, done.CallID = a.resp.ID, it.ID, Ptr(a.outIndex), it.CallID
	done.Name, done.Arguments = c.Name, Ptr(c.Arguments)
	ss.emit(done)
	it.Status, it.Arguments = status, Ptr(c.Arguments)
	ss.emitOutputItem("done", a, it)
	ss.items = append(ss.items, convItem{item: it, textBytes: len(c.Name) + len(c.Arguments)})
	a.resp.Output = append(a.resp.Output, it)
	a.outIndex++
	ss.pending[it.CallID] = true
	ss.stats.update(func(s *CallStats) {
		if status == "completed" {
			s.ToolCalls++
		} else {
			s.CutToolCalls++
		}
	})
}

// emitOutputItem announces an output item twice, as the GA API does: to the
// response (response.output_item.added/done) and to the conversation
// (conversation.item.added/done). stage is "added" or "done".
func (ss *rtSession) emitOutputItem(stage string, a *activeResponse, it rtItem) {
	ev := newEvent("response.output_item." + stage)
	ev.ResponseID, ev.OutputIndex, ev.Item = a.resp.ID, Ptr(a.outIndex), &it
	ss.emit(ev)
	ss.emitConversationItem(stage, ss.lastItemID(), it)
}

// emitConversationItem sends conversation.item.added or .done.
func (ss *rtSession) emitConversationItem(stage string, prev *string, it rtItem) {
	ev := newEvent("conversation.item." + stage)
	ev.PreviousItemID, ev.Item = after(prev), &it
	ss.emit(ev)
}

// done sends response.done with the usage of everything a produced.
func (ss *rtSession) done(a *activeResponse) {
	var out tokenCount
	textBytes := 0
	for _, it := range a.resp.Output {
		textBytes += len(it.Name) + len(deref(it.Arguments)) + len(itemText(&it))
	}
	out.text = openai.TokensFor(textBytes)
	if a.audio && a.msg != nil {
		out.audio = audioOutTokens(a.audioMS)
	}
	a.resp.Usage = usage(a.in, ss.prevInput, out)
	ss.srv.oa.Org.Bill(ss.srv.env.Now(), ss.view.model, a.resp.Usage.billed())
	ev := newEvent("response.done")
	ev.Response = &a.resp
	ss.emit(ev)
	ss.prevInput = a.in
	ss.active = nil
	ss.flushTranscripts()
}

// cancelResponse ends the active response while it is still generating:
// response.cancel, or the user speaking over it. Its audio counts only as
// far as it was generated, and a reply still playing stops there.
func (ss *rtSession) cancelResponse(reason string) {
	a := ss.active
	a.stopTimer()
	if a.msg != nil {
		if a.genMS > 0 {
			a.audioMS = min(a.audioMS, a.audioMS*int(time.Since(a.started).Milliseconds())/a.genMS)
		}
		ss.shortenPlayback(a.resp.ID, a.audioMS)
		ss.endMessage(a, "incomplete")
	}
	for _, c := range a.rep.Calls {
		// The calls it was writing, cut where generation stopped.
		c.Arguments = openai.TruncateUTF8(c.Arguments, len(c.Arguments)/2)
		ss.emitCall(a, c, "incomplete")
	}
	a.resp.Status = "cancelled"
	a.resp.StatusDetails = &statusDetails{Type: "cancelled", Reason: reason}
	ss.done(a)
}

func (ss *rtSession) partEvent(typ string, a *activeResponse, part rtContent) *rtEvent {
	ev := newEvent(typ)
	ev.ResponseID, ev.ItemID, ev.OutputIndex, ev.ContentIndex, ev.Part = a.resp.ID, a.msg.ID, Ptr(a.outIndex), Ptr(0), &part
	return ev
}
