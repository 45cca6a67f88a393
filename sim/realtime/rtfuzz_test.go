package realtime

import (
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
)

// FuzzDecodeClientEvent feeds arbitrary client events to the decoder and,
// when it accepts one, to a session's state machine (no transports). A
// refusal must be a complete error; nothing may panic, and the session must
// stay renderable.
func FuzzDecodeClientEvent(f *testing.F) {
	seeds := []string{
		`{"type":"session.update","session":{"type":"realtime","instructions":"hi","tools":[{"type":"function","name":"search_recipes","parameters":{"type":"object"}}],"tool_choice":{"type":"function","name":"search_recipes"},"audio":{"input":{"transcription":{"model":"m"},"turn_detection":null}}}}`,
		`{"type":"conversation.item.create","previous_item_id":"root","item":{"id":"m1","type":"message","role":"user","content":[{"type":"input_text","text":"find pasta"}]}}`,
		`{"type":"conversation.item.create","item":{"type":"function_call_output","call_id":"call_1","output":"ok"}}`,
		`{"type":"conversation.item.create","item":{"type":"function_call","name":"f","arguments":"{}"}}`,
		`{"type":"input_audio_buffer.append","audio":"AAAA"}`,
		`{"type":"input_audio_buffer.commit"}`, `{"type":"response.create","response":{}}`, `{"type":"response.cancel"}`,
		`{"type":"conversation.item.truncate","item_id":"m1","content_index":0,"audio_end_ms":-1}`,
		`{"type":"conversation.item.delete","item_id":"m1"}`, `{"type":7}`, `{"type":"x","event_id":5}`, `{`, `[]`, `null`,
		`{"type":"response.create","response":{"max_output_tokens":3,"audio":{"output":{"voice":{"id":"v"}}}}}`,
		`{"type":"session.update","session":{"type":"realtime","voice":"marin","tools":[{"type":"function","name":"f","strict":true}]}}`,
		`{"type":"output_audio_buffer.clear"}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	// The surface alone, over a bare core: no faults, no latency.
	env := &core.Env{Faults: core.NewInjector(nil, 0), Stats: core.NewStatsBook(nil),
		Log: slog.New(slog.DiscardHandler), MaxBody: 1 << 20, Done: make(chan struct{})}
	script, err := openai.CompileScript(openai.Script{})
	if err != nil {
		f.Fatal(err)
	}
	srv, err := New(env, openai.New(env, script, nil, nil, openai.Chat{}), Config{}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(srv.CloseAll)
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, apiErr := decodeClientEvent(data)
		if ev == nil {
			t.Fatal("nil event")
		}
		if apiErr != nil {
			if apiErr.Type == "" || apiErr.Message == "" {
				t.Fatalf("incomplete error %+v for %q", apiErr, data)
			}
			if _, err := json.Marshal(errorEvent(apiErr, ev.EventID)); err != nil {
				t.Fatal(err)
			}
			return
		}
		ss := srv.newRTSession(newSessionConfig(&srv.rt.cfg), EndpointRealtime, nil)
		defer ss.cancel()
		// Twice: the second run sees the state the first one left.
		for range 2 {
			ss.handle(inEvent{data: data})
			ss.quiet()
			ss.active = nil
		}
		if _, err := json.Marshal(ss.cfg); err != nil {
			t.Fatalf("session no longer renders: %v", err)
		}
	})
}
