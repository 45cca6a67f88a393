package sim

import (
	"encoding/base64"
	"fmt"
	"time"
)

// A response plays the script's reply: spoken (or text) content first, then
// tool calls, then response.done with usage. Tool calls go out at once;
// speech holds the response open for Realtime.ReplyAudioMS while the audio
// "plays", so response.cancel and barge-in have something to cut.

type activeResponse struct {
	resp     rtResponse
	in       tokenCount
	rep      reply
	msg      *rtItem // the message being spoken or written
	outIndex int
	audio    bool
	audioMS  int
	started  time.Time
	timer    *time.Timer
	stopSend func()
}

func (a *activeResponse) stopAudio() {
	if a.timer != nil {
		a.timer.Stop()
	}
	if a.stopSend != nil {
		a.stopSend()
	}
}

func (ss *rtSession) responseCreate() *APIError {
	if ss.active != nil {
		return &APIError{Type: "invalid_request_error", Code: "conversation_already_has_active_response",
			Message: fmt.Sprintf("Conversation already has an active response in progress: %s. Wait until the response is finished before creating a new one.", ss.active.resp.ID)}
	}
	if f := ss.srv.faults.take(ss.endpoint, ss.view.model, FaultNoResponse); f != nil {
		ss.srv.stats.fault(ss.endpoint, f.Kind)
		return nil // the fault: response.create is silently ignored
	}
	ss.startResponse()
	return nil
}

func (ss *rtSession) startResponse() {
	mods := []string{"audio"}
	if ss.view.textOnly {
		mods = []string{"text"}
	}
	maxOut := ss.cfg["max_output_tokens"]
	if maxOut == nil {
		maxOut = "inf"
	}
	a := &activeResponse{in: ss.inputCount(), rep: ss.srv.script.plan(ss.chatView()), started: time.Now(),
		audio: !ss.view.textOnly}
	a.resp = rtResponse{Object: "realtime.response", ID: "resp_" + randomID()[:21], Status: "in_progress",
		Output: []rtItem{}, ConversationID: ss.convID, OutputModalities: mods, MaxOutputTokens: maxOut}
	a.resp.Audio = &responseAudio{}
	a.resp.Audio.Output.Format = map[string]any{"type": "audio/pcm", "rate": 24000}
	a.resp.Audio.Output.Voice = ss.view.voice
	ss.active = a
	ss.stats.update(func(s *CallStats) { s.Responses++ })
	created := newEvent("response.created")
	created.Response = &a.resp
	ss.emit(created)
	if a.rep.text != "" {
		ss.startMessage(a)
		if a.timer != nil {
			return // finishSpeech continues once the audio has played
		}
		ss.endMessage(a, "completed")
	}
	ss.finishResponse()
}

func (ss *rtSession) startMessage(a *activeResponse) {
	a.msg = &rtItem{ID: "item_" + randomID()[:21], Object: "realtime.item", Type: "message",
		Status: "in_progress", Role: "assistant", Content: []rtContent{}}
	added := ss.itemEvent("response.output_item.added", a, *a.msg)
	ss.emit(added)
	part, deltaType := rtContent{Type: "text", Text: ptr("")}, "response.output_text.delta"
	if a.audio {
		part, deltaType = rtContent{Type: "audio", Transcript: ptr("")}, "response.output_audio_transcript.delta"
	}
	ss.emit(ss.partEvent("response.content_part.added", a, part))
	for p := range pieces(a.rep.text, ss.rt.DeltaBytes) {
		d := ss.partEvent(deltaType, a, part)
		d.Part, d.Delta = nil, ptr(p)
		ss.emit(d)
	}
	if !a.audio {
		return
	}
	a.audioMS = ss.rt.ReplyAudioMS
	if ss.call != nil {
		started := newEvent("output_audio_buffer.started")
		started.ResponseID = a.resp.ID
		ss.emit(started)
		a.stopSend = ss.call.speak(a.audioMS)
	} else {
		ss.sendPCM(a)
	}
	a.timer = time.NewTimer(time.Duration(a.audioMS) * time.Millisecond)
}

// sendPCM sends a WebSocket session's reply audio: PCM16 silence at 24 kHz
// in 100 ms deltas, as response.output_audio.delta events.
func (ss *rtSession) sendPCM(a *activeResponse) {
	const chunkMS = 100
	for ms := 0; ms < a.audioMS; ms += chunkMS {
		n := min(chunkMS, a.audioMS-ms) * 48
		d := ss.partEvent("response.output_audio.delta", a, rtContent{})
		d.Part, d.Delta = nil, ptr(base64.StdEncoding.EncodeToString(make([]byte, n)))
		ss.emit(d)
	}
}

// finishSpeech runs when a spoken reply has played out.
func (ss *rtSession) finishSpeech() {
	a := ss.active
	a.timer = nil
	ss.endMessage(a, "completed")
	ss.finishResponse()
}

// endMessage closes the message content; a cut message is "incomplete".
func (ss *rtSession) endMessage(a *activeResponse, status string) {
	text := a.rep.text
	var part rtContent
	if a.audio {
		done := ss.partEvent("response.output_audio_transcript.done", a, rtContent{})
		done.Part, done.Transcript = nil, ptr(text)
		ss.emit(done)
		ad := ss.partEvent("response.output_audio.done", a, rtContent{})
		ad.Part = nil
		ss.emit(ad)
		part = rtContent{Type: "audio", Transcript: ptr(text)}
	} else {
		done := ss.partEvent("response.output_text.done", a, rtContent{})
		done.Part, done.Text = nil, ptr(text)
		ss.emit(done)
		part = rtContent{Type: "text", Text: ptr(text)}
	}
	ss.emit(ss.partEvent("response.content_part.done", a, part))
	if part.Type == "audio" {
		part.Type = "output_audio"
	} else {
		part.Type = "output_text"
	}
	it := *a.msg
	it.Status, it.Content = status, []rtContent{part}
	ss.emit(ss.itemEvent("response.output_item.done", a, it))
	ci := convItem{item: it}
	if a.audio {
		ci.audioTok = audioOutTokens(a.audioMS)
	} else {
		ci.textBytes = len(text)
	}
	ss.items = append(ss.items, ci)
	a.resp.Output = append(a.resp.Output, it)
	a.outIndex++
}

func (ss *rtSession) finishResponse() {
	a := ss.active
	for _, c := range a.rep.calls {
		ss.emitCall(a, c)
	}
	a.resp.Status = "completed"
	ss.done(a)
}

// emitCall sends one function call: added, argument deltas, done.
func (ss *rtSession) emitCall(a *activeResponse, c toolCall) {
	it := rtItem{ID: "item_" + randomID()[:21], Object: "realtime.item", Type: "function_call",
		Status: "in_progress", CallID: "call_" + randomID()[:16], Name: c.Name, Arguments: ptr("")}
	ss.emit(ss.itemEvent("response.output_item.added", a, it))
	for p := range pieces(c.Arguments, ss.rt.DeltaBytes) {
		d := newEvent("response.function_call_arguments.delta")
		d.ResponseID, d.ItemID, d.OutputIndex, d.CallID, d.Delta = a.resp.ID, it.ID, ptr(a.outIndex), it.CallID, ptr(p)
		ss.emit(d)
	}
	done := newEvent("response.function_call_arguments.done")
	done.ResponseID, done.ItemID, done.OutputIndex, done.CallID = a.resp.ID, it.ID, ptr(a.outIndex), it.CallID
	done.Name, done.Arguments = c.Name, ptr(c.Arguments)
	ss.emit(done)
	it.Status, it.Arguments = "completed", ptr(c.Arguments)
	ss.emit(ss.itemEvent("response.output_item.done", a, it))
	ss.items = append(ss.items, convItem{item: it, textBytes: len(c.Name) + len(c.Arguments)})
	a.resp.Output = append(a.resp.Output, it)
	a.outIndex++
	ss.pending[it.CallID] = true
	ss.stats.update(func(s *CallStats) { s.ToolCalls++ })
}

// done sends response.done with the usage of everything a produced.
func (ss *rtSession) done(a *activeResponse) {
	var out tokenCount
	textBytes := 0
	for _, it := range a.resp.Output {
		textBytes += len(it.Name) + len(deref(it.Arguments)) + len(itemText(&it))
	}
	out.text = tokensFor(textBytes)
	if a.audio && a.msg != nil {
		out.audio = audioOutTokens(a.audioMS)
	}
	a.resp.Usage = usage(a.in, ss.prevInput, out)
	ev := newEvent("response.done")
	ev.Response = &a.resp
	ss.emit(ev)
	ss.prevInput = a.in
	if a.audio && a.msg != nil && ss.call != nil {
		stopped := newEvent("output_audio_buffer.stopped")
		stopped.ResponseID = a.resp.ID
		ss.emit(stopped)
	}
	ss.active = nil
}

// cancelResponse ends the active response early: response.cancel, or the
// user speaking over it. Spoken audio counts only as far as it played.
func (ss *rtSession) cancelResponse(reason string) {
	a := ss.active
	a.stopAudio()
	if a.timer != nil {
		a.timer = nil
		a.audioMS = min(a.audioMS, int(time.Since(a.started).Milliseconds()))
		if ss.call != nil {
			cleared := newEvent("output_audio_buffer.cleared")
			cleared.ResponseID = a.resp.ID
			ss.emit(cleared)
		}
		ss.endMessage(a, "incomplete")
	}
	a.resp.Status = "cancelled"
	a.resp.StatusDetails = &statusDetails{Type: "cancelled", Reason: reason}
	ss.done(a)
}

// clearOutput cuts the audio of a WebRTC call's reply (output_audio_buffer.clear).
func (ss *rtSession) clearOutput() *APIError {
	if ss.call == nil {
		return errInvalidValue("type", "output_audio_buffer.clear is only supported for WebRTC connections.")
	}
	if ss.active == nil || ss.active.timer == nil {
		return &APIError{Type: "invalid_request_error", Code: "output_audio_buffer_empty", Message: "There is no output audio to clear."}
	}
	ss.cancelResponse("client_cancelled")
	return nil
}

func (ss *rtSession) itemEvent(typ string, a *activeResponse, it rtItem) *rtEvent {
	ev := newEvent(typ)
	ev.ResponseID, ev.OutputIndex, ev.Item = a.resp.ID, ptr(a.outIndex), &it
	return ev
}

func (ss *rtSession) partEvent(typ string, a *activeResponse, part rtContent) *rtEvent {
	ev := newEvent(typ)
	ev.ResponseID, ev.ItemID, ev.OutputIndex, ev.ContentIndex, ev.Part = a.resp.ID, a.msg.ID, ptr(a.outIndex), ptr(0), &part
	return ev
}
