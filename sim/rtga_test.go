package sim_test

import (
	"encoding/base64"
	"testing"
	"time"

	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestRealtimeItemEvents: every item that joins the conversation is
// announced with the GA conversation.item.added then conversation.item.done
// (items a client creates, committed audio and the model's output items),
// and the beta conversation.item.created never goes out.
func TestRealtimeItemEvents(t *testing.T) {
	t.Parallel()
	_, base := newRealtimeSim(t, sim.Realtime{})
	ctx := testCtx(t)
	ws := dialModelSocket(t, base)
	expect(t, ctx, ws, "session.created")
	if err := ws.Send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime",
		"tools": []any{jsonValue(t, recipeToolJSON)}}}); err != nil {
		t.Fatal(err)
	}
	expect(t, ctx, ws, "session.updated")

	var all []simtest.Event
	next := func() simtest.Event {
		t.Helper()
		e, err := ws.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, e)
		return e
	}
	// A client's item: added, then done, for the same item.
	if err := ws.Send(map[string]any{"type": "conversation.item.create", "item": map[string]any{"id": "msg_1",
		"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "hi"}}}}); err != nil {
		t.Fatal(err)
	}
	first := next()
	assertItemPair(t, first, next(), "msg_1")
	if prev, ok := first.Map()["previous_item_id"]; !ok || prev != nil {
		t.Errorf("first item: previous_item_id %v (present %v), want null as the API sends it", prev, ok)
	}

	// Committed audio: committed, then the user item added and done.
	if err := ws.Send(map[string]any{"type": "input_audio_buffer.append", "audio": base64.StdEncoding.EncodeToString(make([]byte, 48000))}); err != nil {
		t.Fatal(err)
	}
	done, seen := expect(t, ctx, ws, "response.done")
	all = append(append(all, seen...), done)
	committed := eventOf(t, seen, "input_audio_buffer.committed")
	userID, _ := committed.Map()["item_id"].(string)
	i := indexOf(seen, committed)
	assertItemPair(t, seen[i+1], seen[i+2], userID)

	// The model's output item: conversation.item.added right after
	// response.output_item.added, conversation.item.done right after
	// response.output_item.done.
	callID := decodeDone(t, done).Response.Output[0].CallID
	for i, e := range seen {
		switch e.Type {
		case "response.output_item.added", "response.output_item.done":
			want := map[string]string{"response.output_item.added": "conversation.item.added", "response.output_item.done": "conversation.item.done"}[e.Type]
			if i+1 >= len(seen) || seen[i+1].Type != want || itemID(seen[i+1]) != itemID(e) {
				t.Errorf("%s for %s not followed by %s for the same item", e.Type, itemID(e), want)
			}
		}
	}

	// A function_call_output answering the model: added, then done.
	if err := ws.Send(map[string]any{"type": "conversation.item.create", "item": map[string]any{"id": "out_1",
		"type": "function_call_output", "call_id": callID, "output": "[]"}}); err != nil {
		t.Fatal(err)
	}
	assertItemPair(t, next(), next(), "out_1")
	for _, e := range all {
		if e.Type == "conversation.item.created" {
			t.Errorf("beta event sent: %s", e.Raw)
		}
	}
}

func assertItemPair(t *testing.T, added, done simtest.Event, id string) {
	t.Helper()
	if added.Type != "conversation.item.added" || done.Type != "conversation.item.done" || itemID(added) != id || itemID(done) != id {
		t.Errorf("got %s (%s), %s (%s); want conversation.item.added then .done for %s", added.Type, itemID(added), done.Type, itemID(done), id)
	}
	checkOpenAIDecode(t, added)
	checkOpenAIDecode(t, done)
}

// TestRealtimeDoneBeforePlayback: over WebRTC response.done comes when the
// response has been generated, while its audio still plays;
// output_audio_buffer.stopped follows once it has played out.
// output_audio_buffer.clear cuts the audio without cancelling anything, and
// response.cancel is refused once the response is done.
func TestRealtimeDoneBeforePlayback(t *testing.T) {
	t.Parallel()
	// A reply that plays far longer than it generates, so the two ends are
	// told apart with room for a loaded machine's delays on either side.
	_, base := newRealtimeSim(t, sim.Realtime{ReplyAudioMS: 2400, GenerationMS: 400})
	ctx := testCtx(t)
	c, _ := dialCall(t, ctx, base, "multipart+apikey")
	speak := func() {
		t.Helper()
		if err := c.Send(map[string]any{"type": "conversation.item.create", "item": map[string]any{"type": "message", "role": "user",
			"content": []any{map[string]any{"type": "input_text", "text": "tell me a joke"}}}}); err != nil {
			t.Fatal(err)
		}
		if err := c.Send(map[string]any{"type": "response.create"}); err != nil {
			t.Fatal(err)
		}
		expect(t, ctx, c, "output_audio_buffer.started")
	}

	speak()
	start := time.Now()
	done := expectEvent(t, ctx, c, "response.done")
	atDone := time.Since(start)
	if st := decodeDone(t, done).Response.Status; st != "completed" {
		t.Errorf("response.done status %q, want completed", st)
	}
	e, err := c.Next(ctx)
	if err != nil || e.Type != "output_audio_buffer.stopped" {
		t.Fatalf("after response.done: %q (%v), want output_audio_buffer.stopped", e.Type, err)
	}
	atStopped := time.Since(start)
	if atDone > 1400*time.Millisecond || atStopped < 1800*time.Millisecond {
		t.Errorf("response.done after %v, stopped after %v; want done at generation end (~400 ms), stopped at playback end (~2400 ms)", atDone, atStopped)
	}

	// Clearing the buffer while the response still generates cuts the
	// audio (cleared, never stopped) and leaves the response to complete.
	speak()
	if err := c.Send(map[string]any{"type": "output_audio_buffer.clear"}); err != nil {
		t.Fatal(err)
	}
	done, seen := expect(t, ctx, c, "response.done")
	if !hasType(seen, "output_audio_buffer.cleared") {
		t.Errorf("no output_audio_buffer.cleared before response.done: %v", types(seen))
	}
	if st := decodeDone(t, done).Response.Status; st != "completed" {
		t.Errorf("after output_audio_buffer.clear the response is %q, want completed", st)
	}
	if err := c.Send(map[string]any{"type": "response.cancel"}); err != nil {
		t.Fatal(err)
	}
	e, seen = expect(t, ctx, c, "error")
	if code := errorCode(e); code != "response_cancel_not_active" || hasType(seen, "output_audio_buffer.stopped") {
		t.Errorf("response.cancel after response.done: %q (after %v), want response_cancel_not_active and no stopped", code, types(seen))
	}
}

// TestRealtimeToolCallIDs: a function_call_output must answer a function
// call in the conversation (invalid_tool_call_id otherwise), and call ids
// must match ^[a-zA-Z0-9_-]+$.
func TestRealtimeToolCallIDs(t *testing.T) {
	t.Parallel()
	spec := simtest.Spec(t)
	_, base := newRealtimeSim(t, sim.Realtime{})
	ctx := testCtx(t)
	ws := dialModelSocket(t, base)
	expect(t, ctx, ws, "session.created")
	output := func(callID string) map[string]any {
		return map[string]any{"type": "conversation.item.create", "event_id": "evt_" + callID[:3],
			"item": map[string]any{"type": "function_call_output", "call_id": callID, "output": "{}"}}
	}
	for _, tc := range []struct {
		name        string
		event       map[string]any
		code, param string
	}{
		{"unknown call", output("call_nope"), "invalid_tool_call_id", "item.call_id"},
		{"bad output call id", output("call 1!"), "invalid_value", "item.call_id"},
		{"bad function_call id", map[string]any{"type": "conversation.item.create", "item": map[string]any{
			"type": "function_call", "call_id": "call.1", "name": "f", "arguments": "{}"}}, "invalid_value", "item.call_id"},
	} {
		if err := ws.Send(tc.event); err != nil {
			t.Fatal(err)
		}
		e := expectEvent(t, ctx, ws, "error")
		if err := spec.Validate("RealtimeServerEventError", e.Raw); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		checkOpenAIDecode(t, e)
		m := e.Map()["error"].(map[string]any)
		if m["code"] != tc.code || m["param"] != tc.param {
			t.Errorf("%s: error %v, want %s on %s", tc.name, m, tc.code, tc.param)
		}
	}
	// A call the client put in the conversation may be answered.
	if err := ws.Send(map[string]any{"type": "conversation.item.create", "item": map[string]any{
		"type": "function_call", "call_id": "call_Mine-1", "name": "f", "arguments": "{}"}}); err != nil {
		t.Fatal(err)
	}
	expect(t, ctx, ws, "conversation.item.done")
	if err := ws.Send(output("call_Mine-1")); err != nil {
		t.Fatal(err)
	}
	if e := expectEvent(t, ctx, ws, "conversation.item.done"); e.Map()["item"].(map[string]any)["call_id"] != "call_Mine-1" {
		t.Errorf("output not added: %s", e.Raw)
	}
}

// TestRealtimeVoiceFixed: the voice may change until the model has spoken;
// after its first audio a different voice is refused (the same one passes).
func TestRealtimeVoiceFixed(t *testing.T) {
	t.Parallel()
	spec := simtest.Spec(t)
	_, base := newRealtimeSim(t, sim.Realtime{})
	ctx := testCtx(t)
	ws := dialModelSocket(t, base)
	expect(t, ctx, ws, "session.created")
	voice := func(v string) map[string]any {
		return map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime",
			"audio": map[string]any{"output": map[string]any{"voice": v}}}}
	}
	if err := ws.Send(voice("marin")); err != nil {
		t.Fatal(err)
	}
	expect(t, ctx, ws, "session.updated")
	if err := ws.Send(map[string]any{"type": "response.create"}); err != nil {
		t.Fatal(err)
	}
	expect(t, ctx, ws, "response.output_audio.delta")
	expect(t, ctx, ws, "response.done")
	if err := ws.Send(voice("cedar")); err != nil {
		t.Fatal(err)
	}
	e := expectEvent(t, ctx, ws, "error")
	if err := spec.Validate("RealtimeServerEventError", e.Raw); err != nil {
		t.Error(err)
	}
	if m := e.Map()["error"].(map[string]any); m["code"] != "cannot_update_voice" || m["param"] != "session.audio.output.voice" {
		t.Errorf("voice change after audio: %v, want cannot_update_voice", m)
	}
	if err := ws.Send(voice("marin")); err != nil {
		t.Fatal(err)
	}
	expect(t, ctx, ws, "session.updated")
}
