package sim_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestStreamErrorFault checks an error that arrives inside a 200 stream:
// the chunks before it, then one data: {"error": …} event in the spec's
// error shape, and no [DONE]; openai-go ends the stream with that error.
func TestStreamErrorFault(t *testing.T) {
	t.Parallel()
	spec := simtest.Spec(t)
	fault := sim.Fault{Kind: sim.FaultStreamError, AfterChunks: 2}

	_, url := testkit.NewSim(t, sim.Config{Faults: []sim.Fault{fault}})
	resp, body := post(t, url, simtest.TestKey, chatBody("gpt-4o", "hello", `"stream":true`))
	events := sseData(t, body)
	if resp.StatusCode != 200 || len(events) != 3 {
		t.Fatalf("got %d with %d events %q, want 200 with 2 chunks and an error", resp.StatusCode, len(events), events)
	}
	for i, e := range events[:2] {
		if err := spec.Validate("CreateChatCompletionStreamResponse", []byte(e)); err != nil {
			t.Errorf("chunk %d: %v", i, err)
		}
	}
	if err := spec.Validate("ErrorResponse", []byte(events[2])); err != nil {
		t.Errorf("error event %s: %v", events[2], err)
	}
	if typ, _, _, _ := apiError(t, []byte(events[2])); typ != "server_error" {
		t.Errorf("error event type: got %q, want server_error", typ)
	}

	_, url = testkit.NewSim(t, sim.Config{Faults: []sim.Fault{fault}})
	client := simtest.Client(url)
	st := client.Chat.Completions.NewStreaming(t.Context(), userParams(true))
	chunks := 0
	for st.Next() {
		chunks++
	}
	var streamErr *ssestream.StreamError
	if !errors.As(st.Err(), &streamErr) || !strings.Contains(streamErr.Message, "server_error") {
		t.Errorf("openai-go: got %v (%T), want a *ssestream.StreamError carrying the event", st.Err(), st.Err())
	}
	if chunks != 2 {
		t.Errorf("openai-go chunks before the error: got %d, want 2", chunks)
	}

	// Without a stream there is no 200 to fail inside: the answer is a 500.
	_, url = testkit.NewSim(t, sim.Config{Faults: []sim.Fault{fault}})
	client = simtest.Client(url)
	_, err := client.Chat.Completions.New(t.Context(), userParams(false))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 || apiErr.Type != "server_error" {
		t.Errorf("not streaming: got %v, want 500 server_error", err)
	}
}

// TestObfuscation checks the obfuscation padding: on every chunk by
// default and with include_obfuscation true, on none with it false.
func TestObfuscation(t *testing.T) {
	t.Parallel()
	spec := simtest.Spec(t)
	_, url := testkit.NewSim(t, sim.Config{})
	for _, tc := range []struct {
		name, options string
		want          bool
	}{
		{"default", `"stream_options":{"include_usage":true}`, true},
		{"asked for", `"stream_options":{"include_usage":true,"include_obfuscation":true}`, true},
		{"turned off", `"stream_options":{"include_usage":true,"include_obfuscation":false}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, body := post(t, url, simtest.TestKey, chatBody("gpt-4o", "hello", `"stream":true,`+tc.options))
			events := sseData(t, body)
			if len(events) < 4 {
				t.Fatalf("events: %q", events)
			}
			for _, e := range events[:len(events)-1] {
				var chunk struct {
					Obfuscation *string `json:"obfuscation"`
				}
				if err := json.Unmarshal([]byte(e), &chunk); err != nil {
					t.Fatal(err)
				}
				if got := chunk.Obfuscation != nil && *chunk.Obfuscation != ""; got != tc.want {
					t.Errorf("chunk %s: obfuscation present %v, want %v", e, got, tc.want)
				}
				if err := spec.Validate("CreateChatCompletionStreamResponse", []byte(e)); err != nil {
					t.Errorf("chunk %s: %v", e, err)
				}
			}
		})
	}

	// openai-go decodes the field.
	p := userParams(true)
	client := simtest.Client(url)
	st := client.Chat.Completions.NewStreaming(t.Context(), p)
	n := 0
	for st.Next() {
		if st.Current().Obfuscation == "" {
			t.Errorf("openai-go chunk without obfuscation: %s", st.Current().RawJSON())
		}
		n++
	}
	if st.Err() != nil || n == 0 {
		t.Errorf("openai-go stream: %d chunks, err %v", n, st.Err())
	}
}
