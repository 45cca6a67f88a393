package sim

import "strings"

// Input audio: RTP packets (WebRTC) or appended PCM (WebSocket) fill a
// buffer; with server VAD on, a buffer of Realtime.TurnPackets' worth is a
// user turn, committed as a user audio item, and (with create_response) it
// gets a response. The simulator does not decode audio: what the user "said"
// is Realtime.Heard.

// takeRTPAudio adds the RTP packets received since the last look.
func (ss *rtSession) takeRTPAudio() {
	n := ss.stats.packetsIn.Load()
	ss.bufferedMS += int(n-ss.packetsSeen) * packetMS
	ss.packetsSeen = n
	ss.maybeCommit()
}

func (ss *rtSession) maybeCommit() {
	if !ss.view.vad || ss.bufferedMS < ss.rt.TurnPackets*packetMS {
		return
	}
	ss.commit()
	if !ss.view.createResponse {
		return
	}
	if ss.view.interrupt && ss.playing != nil {
		ss.cutPlayback()
	}
	if ss.active != nil {
		if !ss.view.interrupt {
			return
		}
		ss.cancelResponse("turn_detected")
	}
	ss.startResponse(nil)
}

// commit turns the buffered audio into a user item, with the events server
// VAD sends around it, and its transcription when the session asks for one.
func (ss *rtSession) commit() {
	ms := ss.bufferedMS
	id := "item_" + randomID()[:21]
	if ss.view.vad {
		started := newEvent("input_audio_buffer.speech_started")
		started.AudioStartMS, started.ItemID = ptr(ss.audioPosMS), id
		ss.emit(started)
		stopped := newEvent("input_audio_buffer.speech_stopped")
		stopped.AudioEndMS, stopped.ItemID = ptr(ss.audioPosMS+ms), id
		ss.emit(stopped)
	}
	ss.audioPosMS += ms
	ss.bufferedMS = 0
	prev := ss.lastItemID()
	committed := newEvent("input_audio_buffer.committed")
	committed.PreviousItemID, committed.ItemID = prev, id
	ss.emit(committed)

	it := rtItem{ID: id, Object: "realtime.item", Type: "message", Status: "completed", Role: "user",
		Content: []rtContent{{Type: "input_audio"}}}
	tok := audioInTokens(ms)
	ss.items = append(ss.items, convItem{item: it, audioTok: tok, userText: ss.rt.Heard})
	ss.emitConversationItem("added", prev, it)
	ss.emitConversationItem("done", prev, it)

	if ss.view.transcribe {
		tr := newEvent("conversation.item.input_audio_transcription.completed")
		tr.ItemID, tr.ContentIndex, tr.Transcript = id, ptr(0), ptr(ss.rt.Heard)
		tr.Usage = transcriptionUsage(tok, ss.rt.Heard)
		ss.emit(tr)
	}
}

// chatView renders the conversation as a chat request, so the shared
// script (rules and default behaviour) decides voice turns as it does text.
func (ss *rtSession) chatView() *chatRequest {
	req := &chatRequest{Model: ss.view.model, Tools: ss.view.tools, choice: ss.view.choice}
	for i := range ss.items {
		it := &ss.items[i].item
		switch it.Type {
		case "message":
			text := ss.items[i].userText
			if it.Role != "user" {
				text = itemText(it)
			}
			req.msgs = append(req.msgs, chatMessage{Role: it.Role, text: text})
		case "function_call":
			var tc msgToolCall
			tc.ID, tc.Type = it.CallID, "function"
			tc.Function.Name, tc.Function.Arguments = it.Name, deref(it.Arguments)
			req.msgs = append(req.msgs, chatMessage{Role: "assistant", ToolCalls: []msgToolCall{tc}})
		case "function_call_output":
			req.msgs = append(req.msgs, chatMessage{Role: "tool", ToolCallID: it.CallID, text: deref(it.Output)})
		}
	}
	return req
}

func itemText(it *rtItem) string {
	var b strings.Builder
	for _, c := range it.Content {
		b.WriteString(deref(c.Text))
		b.WriteString(deref(c.Transcript))
	}
	return b.String()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
