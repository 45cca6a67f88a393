package sim_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// realtimeSchemas maps each server event type the simulator emits to its
// schema in the official spec.
func realtimeSchemas() map[string]string {
	return map[string]string{
		"session.created":                                       "RealtimeServerEventSessionCreated",
		"session.updated":                                       "RealtimeServerEventSessionUpdated",
		"conversation.item.added":                               "RealtimeServerEventConversationItemAdded",
		"conversation.item.done":                                "RealtimeServerEventConversationItemDone",
		"conversation.item.deleted":                             "RealtimeServerEventConversationItemDeleted",
		"conversation.item.retrieved":                           "RealtimeServerEventConversationItemRetrieved",
		"conversation.item.truncated":                           "RealtimeServerEventConversationItemTruncated",
		"conversation.item.input_audio_transcription.completed": "RealtimeServerEventConversationItemInputAudioTranscriptionCompleted",
		"conversation.item.input_audio_transcription.delta":     "RealtimeServerEventConversationItemInputAudioTranscriptionDelta",
		"conversation.item.input_audio_transcription.failed":    "RealtimeServerEventConversationItemInputAudioTranscriptionFailed",
		"input_audio_buffer.speech_started":                     "RealtimeServerEventInputAudioBufferSpeechStarted",
		"input_audio_buffer.speech_stopped":                     "RealtimeServerEventInputAudioBufferSpeechStopped",
		"input_audio_buffer.committed":                          "RealtimeServerEventInputAudioBufferCommitted",
		"input_audio_buffer.cleared":                            "RealtimeServerEventInputAudioBufferCleared",
		"response.created":                                      "RealtimeServerEventResponseCreated",
		"response.done":                                         "RealtimeServerEventResponseDone",
		"response.output_item.added":                            "RealtimeServerEventResponseOutputItemAdded",
		"response.output_item.done":                             "RealtimeServerEventResponseOutputItemDone",
		"response.content_part.added":                           "RealtimeServerEventResponseContentPartAdded",
		"response.content_part.done":                            "RealtimeServerEventResponseContentPartDone",
		"response.output_audio_transcript.delta":                "RealtimeServerEventResponseAudioTranscriptDelta",
		"response.output_audio_transcript.done":                 "RealtimeServerEventResponseAudioTranscriptDone",
		"response.output_audio.delta":                           "RealtimeServerEventResponseAudioDelta",
		"response.output_audio.done":                            "RealtimeServerEventResponseAudioDone",
		"response.output_text.delta":                            "RealtimeServerEventResponseTextDelta",
		"response.output_text.done":                             "RealtimeServerEventResponseTextDone",
		"response.function_call_arguments.delta":                "RealtimeServerEventResponseFunctionCallArgumentsDelta",
		"response.function_call_arguments.done":                 "RealtimeServerEventResponseFunctionCallArgumentsDone",
		"output_audio_buffer.started":                           "RealtimeServerEventOutputAudioBufferStarted",
		"output_audio_buffer.stopped":                           "RealtimeServerEventOutputAudioBufferStopped",
		"output_audio_buffer.cleared":                           "RealtimeServerEventOutputAudioBufferCleared",
		"error":                                                 "RealtimeServerEventError",
		"rate_limits.updated":                                   "RealtimeServerEventRateLimitsUpdated",
	}
}

// specExceptions are the fields where the spec's own examples disagree with
// its schemas; the simulator sends what the examples (the real API) send,
// and the test removes exactly these before validating. Keyed by event
// type, each a JSON path of fields that must be null.
func specExceptions() map[string][]string {
	// The spec's session examples (RealtimeCreateClientSecretResponse,
	// session.created) send "include", "audio.input.transcription" and
	// "audio.input.noise_reduction" as null when unset; the schemas want an
	// array and objects.
	session := []string{"session.include", "session.audio.input.transcription", "session.audio.input.noise_reduction"}
	return map[string][]string{
		"client_secrets":  session,
		"session.created": session,
		"session.updated": session,
		// Examples of response.created/done carry "status_details": null and
		// response.created "usage": null; the schema wants objects.
		"response.created": {"response.status_details", "response.usage"},
		// The failed transcription's example sends "param": null; the schema
		// wants a string.
		"conversation.item.input_audio_transcription.failed": {"error.param"},
		"response.done": {"response.status_details"},
	}
}

// TestRealtimeEventsMatchSpec drives a WebSocket session and a WebRTC call
// through every event the simulator emits and validates each against its
// schema; the client_secrets response too.
func TestRealtimeEventsMatchSpec(t *testing.T) {
	t.Parallel()
	spec := simtest.Spec(t)
	s, base := newRealtimeSim(t, sim.Realtime{})
	ctx := testCtx(t)

	resp, body := do(t, http.MethodPost, base+"/v1/realtime/client_secrets", simtest.TestKey, "application/json",
		[]byte(`{"expires_after":{"anchor":"created_at","seconds":600},"session":`+recipeSession+`}`))
	if resp.StatusCode != 200 {
		t.Fatalf("mint: %d %s", resp.StatusCode, body)
	}
	if err := spec.Validate("RealtimeCreateClientSecretResponse", stripNulls(t, body, specExceptions()["client_secrets"])); err != nil {
		t.Errorf("client_secrets response: %v\n%s", err, body)
	}

	var all []simtest.Event
	all = append(all, socketScenario(t, ctx, base)...)
	all = append(all, callScenario(t, ctx, base)...)
	all = append(all, transcriptScenario(t, ctx, s, base)...)

	schemas, exceptions := realtimeSchemas(), specExceptions()
	seen := map[string]bool{}
	for _, e := range all {
		if e.Type == "turn" { // transcriptScenario's marker
			continue
		}
		seen[e.Type] = true
		name, ok := schemas[e.Type]
		if !ok {
			t.Errorf("emitted %s, which has no schema mapping: %s", e.Type, e.Raw)
			continue
		}
		raw := stripNulls(t, e.Raw, exceptions[e.Type])
		if err := spec.Validate(name, raw); err != nil {
			t.Errorf("%s: %v\n%s", e.Type, err, e.Raw)
		}
		checkOpenAIDecode(t, e)
	}
	if seen["conversation.item.created"] {
		t.Error("the beta conversation.item.created was sent")
	}
	for typ := range schemas {
		if !seen[typ] {
			t.Errorf("scenario never produced %s", typ)
		}
	}
}

// stripNulls removes the listed fields, which must be null (or absent).
func stripNulls(t *testing.T, raw []byte, paths []string) []byte {
	t.Helper()
	if len(paths) == 0 {
		return raw
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		parts := strings.Split(p, ".")
		obj := m
		for _, k := range parts[:len(parts)-1] {
			obj, _ = obj[k].(map[string]any)
		}
		last := parts[len(parts)-1]
		if v, ok := obj[last]; ok && v == nil {
			delete(obj, last)
		}
	}
	b, _ := json.Marshal(m)
	return b
}

// socketScenario exercises a ?model= WebSocket session.
func socketScenario(t *testing.T, ctx context.Context, base string) []simtest.Event {
	ws, _, err := simtest.DialSocket(ctx, base, simtest.TestKey, "model=gpt-realtime")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	var got []simtest.Event
	until := func(typ string) simtest.Event {
		e, seen := expect(t, ctx, ws, typ)
		got = append(got, seen...)
		got = append(got, e)
		return e
	}
	send := func(v any) {
		if err := ws.Send(v); err != nil {
			t.Fatal(err)
		}
	}
	until("session.created")
	var session map[string]any
	_ = json.Unmarshal([]byte(recipeSession), &session)
	session["audio"] = map[string]any{"input": map[string]any{"transcription": map[string]any{"model": "gpt-4o-transcribe"}}}
	send(map[string]any{"type": "session.update", "session": session})
	until("session.updated")

	second := base64.StdEncoding.EncodeToString(make([]byte, 48000)) // 1 s of PCM16 at 24 kHz
	send(map[string]any{"type": "input_audio_buffer.append", "audio": second})
	done := until("response.done")
	callID := decodeDone(t, done).Response.Output[0].CallID
	answer(t, ws, callID, `{"recipes":["pasta al pomodoro"]}`)
	spoken := decodeDone(t, until("response.done"))
	_ = spoken

	send(map[string]any{"type": "input_audio_buffer.append", "audio": base64.StdEncoding.EncodeToString(make([]byte, 4800))})
	send(map[string]any{"type": "input_audio_buffer.clear"})
	until("input_audio_buffer.cleared")

	send(map[string]any{"type": "conversation.item.create", "item": map[string]any{"id": "msg_1", "type": "message", "role": "user",
		"content": []any{map[string]any{"type": "input_text", "text": "hello"}}}})
	until("conversation.item.done")
	send(map[string]any{"type": "conversation.item.retrieve", "item_id": "msg_1"})
	until("conversation.item.retrieved")
	send(map[string]any{"type": "conversation.item.delete", "item_id": "msg_1"})
	until("conversation.item.deleted")

	var msgID string
	for _, e := range got {
		if e.Type == "response.output_item.done" && strings.Contains(string(e.Raw), `"role":"assistant"`) {
			msgID, _ = e.Map()["item"].(map[string]any)["id"].(string)
		}
	}
	send(map[string]any{"type": "conversation.item.truncate", "item_id": msgID, "content_index": 0, "audio_end_ms": 100})
	until("conversation.item.truncated")

	send(map[string]any{"type": "response.create"})
	send(map[string]any{"type": "response.cancel"})
	if u := decodeDone(t, until("response.done")); u.Response.Status != "cancelled" {
		t.Errorf("after response.cancel: status %q, want cancelled", u.Response.Status)
	}

	for _, bad := range []string{`{`, `{"type":"nope","event_id":"evt_1"}`, `{}`, `{"type":"session.update","session":{"type":"realtime","tools":"x"}}`} {
		if err := ws.SendRaw([]byte(bad)); err != nil {
			t.Fatal(err)
		}
		until("error")
	}

	send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime", "output_modalities": []any{"text"}}})
	until("session.updated")
	send(map[string]any{"type": "response.create"})
	until("response.done")
	return got
}

// callScenario exercises the WebRTC-only events.
func callScenario(t *testing.T, ctx context.Context, base string) []simtest.Event {
	c, _ := dialCall(t, ctx, base, "multipart+apikey")
	var got []simtest.Event
	until := func(typ string) simtest.Event {
		e, seen := expect(t, ctx, c, typ)
		got = append(got, seen...)
		got = append(got, e)
		return e
	}
	until("session.created")
	if err := c.SendAudio(ctx, 50, 0); err != nil {
		t.Fatal(err)
	}
	callID := decodeDone(t, until("response.done")).Response.Output[0].CallID
	answer(t, c, callID, "no recipes")
	until("output_audio_buffer.stopped")
	if err := c.Send(map[string]any{"type": "response.create"}); err != nil {
		t.Fatal(err)
	}
	until("output_audio_buffer.started")
	if err := c.Send(map[string]any{"type": "output_audio_buffer.clear"}); err != nil {
		t.Fatal(err)
	}
	cleared, seen := expect(t, ctx, c, "output_audio_buffer.cleared")
	got = append(append(got, seen...), cleared)
	if !hasType(seen, "response.done") {
		until("response.done")
	}
	return got
}

func hasType(events []simtest.Event, typ string) bool {
	for _, e := range events {
		if e.Type == typ {
			return true
		}
	}
	return false
}
