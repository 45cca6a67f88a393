package realtime

import (
	"strings"
	"time"

	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
)

// Input audio: RTP packets (WebRTC) or appended PCM (WebSocket) fill a
// buffer; with server VAD on, a buffer of Realtime.TurnPackets' worth is a
// user turn, committed as a user audio item, and (with create_response) it
// gets a response. The simulator does not decode audio: what the user "said"
// is Realtime.Heard.

// takeRTPAudio adds the RTP packets received since the last look.
func (ss *rtSession) takeRTPAudio() {
	n := ss.stats.packetsIn.Load()
	if n > ss.packetsSeen {
		ss.stopIdle() // the user is not silent
	}
	ss.addAudio(int(n-ss.packetsSeen) * PacketMS)
	ss.packetsSeen = n
}

// vadTurn is a user turn server VAD is following: from its first audio
// (speech_started) until Realtime.TurnPackets' worth, then the session's
// silence_duration_ms of silence (speech_stopped, committed).
type vadTurn struct {
	itemID  string
	startMS int         // audio_start_ms
	silence *time.Timer // running once the turn's speech is complete
}

// addAudio takes ms of input audio. Without server VAD it only fills the
// buffer. With it, the first audio of a turn is speech_started, the audio
// after the turn's speech is the silence that ends it, not buffered, and
// audio while the model answers is the user listening (see listening).
func (ss *rtSession) addAudio(ms int) {
	if ms <= 0 {
		return
	}
	if !ss.view.vad {
		ss.bufferedMS += ms
		return
	}
	if ss.turn == nil {
		if ms = ss.listen(ms); ms == 0 {
			return
		}
		ss.startTurn()
	}
	if ss.turn.silence != nil {
		return
	}
	ss.bufferedMS += ms
	if ss.bufferedMS >= ss.rt.TurnPackets*PacketMS {
		ss.turn.silence = time.NewTimer(time.Duration(ss.view.silenceMS) * time.Millisecond)
	}
}

// listen takes the audio the simulated user hears as silence and returns
// the rest, the start of a turn. The user waits while the model answers
// (generates or plays its reply), so a continuous stream such as a muted
// microphone is one turn at a time; with Realtime.BargeInPackets the user
// waits only that long, then speaks over the model.
func (ss *rtSession) listen(ms int) int {
	if ss.active == nil && ss.playing == nil {
		ss.waitedMS = 0
		return ms
	}
	if ss.rt.BargeInPackets == 0 {
		return 0
	}
	wait := min(ms, ss.rt.BargeInPackets*PacketMS-ss.waitedMS)
	ss.waitedMS += wait
	if ms > wait {
		ss.waitedMS = 0
	}
	return ms - wait
}

// startTurn sends speech_started; with interrupt_response the user's voice
// cuts the reply playing and cancels the response generating.
func (ss *rtSession) startTurn() {
	ss.turn = &vadTurn{itemID: "item_" + core.RandomID()[:21], startMS: ss.audioPosMS + ss.bufferedMS}
	started := newEvent("input_audio_buffer.speech_started")
	started.AudioStartMS, started.ItemID = Ptr(ss.turn.startMS), ss.turn.itemID
	ss.emit(started)
	if !ss.view.interrupt {
		return
	}
	if ss.playing != nil {
		ss.cutPlayback()
	}
	if ss.active != nil {
		ss.cancelResponse("turn_detected")
	}
}

// endTurn runs when the turn's silence has lasted silence_duration_ms:
// speech_stopped, the commit, and (with create_response) a response.
func (ss *rtSession) endTurn() {
	t := ss.turn
	stopped := newEvent("input_audio_buffer.speech_stopped")
	stopped.AudioEndMS, stopped.ItemID = Ptr(ss.audioPosMS+ss.bufferedMS), t.itemID
	ss.emit(stopped)
	ss.commit()
	if ss.view.createResponse && ss.active == nil {
		ss.startResponse(nil)
	}
	if ss.active == nil {
		ss.flushTranscripts() // no response to wait for
	}
}

// dropTurn forgets the turn in progress: its buffer was committed or
// cleared by the client.
func (ss *rtSession) dropTurn() {
	if ss.turn != nil && ss.turn.silence != nil {
		ss.turn.silence.Stop()
	}
	ss.turn = nil
}

// commit turns the buffered audio into a user item (the VAD turn's item
// when there is one), and its transcription when the session asks for one.
func (ss *rtSession) commit() {
	ms := ss.bufferedMS
	id := "item_" + core.RandomID()[:21]
	if ss.turn != nil {
		id = ss.turn.itemID
	}
	ss.dropTurn()
	ss.audioPosMS += ms
	ss.bufferedMS = 0
	ss.commitItem(id, audioInTokens(ms), ss.rt.Heard)

	if ss.view.transcribe {
		ss.transcripts = append(ss.transcripts, heldTranscript{itemID: id, ms: ms, model: ss.view.transcribeModel})
	}
	if !ss.rt.TranscriptAfterResponse {
		ss.flushTranscripts()
	}
}

// commitItem sends input_audio_buffer.committed and adds the committed
// audio as a user item: audioTok tokens, heard as words for the script.
func (ss *rtSession) commitItem(id string, audioTok int, words string) {
	prev := ss.lastItemID()
	committed := newEvent("input_audio_buffer.committed")
	committed.PreviousItemID, committed.ItemID = after(prev), id
	ss.emit(committed)
	it := rtItem{ID: id, Object: "realtime.item", Type: "message", Status: "completed", Role: "user",
		Content: []rtContent{{Type: "input_audio"}}}
	ss.items = append(ss.items, convItem{item: it, audioTok: audioTok, userText: words})
	ss.emitConversationItem("added", prev, it)
	ss.emitConversationItem("done", prev, it)
}

// chatView renders the conversation as a chat request, so the shared
// script (rules and default behaviour) decides voice turns as it does text.
func (ss *rtSession) chatView() *openai.ChatRequest {
	req := &openai.ChatRequest{Model: ss.view.model, Tools: ss.view.tools, Choice: ss.view.choice}
	if ss.view.instructions != "" { // the session's system prompt, which system_matches reads
		req.Msgs = append(req.Msgs, openai.ChatMessage{Role: "system", Text: ss.view.instructions})
	}
	for i := range ss.items {
		it := &ss.items[i].item
		switch it.Type {
		case "message":
			text := ss.items[i].userText
			if it.Role != "user" {
				text = itemText(it)
			}
			req.Msgs = append(req.Msgs, openai.ChatMessage{Role: it.Role, Text: text})
		case "function_call":
			var tc openai.MsgToolCall
			tc.ID, tc.Type = it.CallID, "function"
			tc.Function.Name, tc.Function.Arguments = it.Name, deref(it.Arguments)
			req.Msgs = append(req.Msgs, openai.ChatMessage{Role: "assistant", ToolCalls: []openai.MsgToolCall{tc}})
		case "function_call_output":
			req.Msgs = append(req.Msgs, openai.ChatMessage{Role: "tool", ToolCallID: it.CallID, Text: deref(it.Output)})
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
