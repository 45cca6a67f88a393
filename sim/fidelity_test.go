package sim_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestEmittedJSONMatchesSpec sends one request of each shape the simulator
// answers and validates every JSON document it emits against the official
// OpenAI schema: completions, every stream chunk, and error bodies.
func TestEmittedJSONMatchesSpec(t *testing.T) {
	t.Parallel()
	spec := simtest.Spec(t)
	withTools := func(user, extra string) string {
		if extra != "" {
			extra = "," + extra
		}
		return chatBody("gpt-4o", user, demoTools+extra)
	}
	tests := []struct {
		name       string
		cfg        sim.Config
		key        string
		body       string
		wantStatus int
		wantStream bool
	}{
		{name: "text", body: chatBody("gpt-4o", "hello", ""), wantStatus: 200},
		{name: "tool call", body: withTools("find me a pasta recipe", ""), wantStatus: 200},
		{name: "text after tool result", wantStatus: 200, body: `{"model":"gpt-4o","messages":[
			{"role":"user","content":"find me a pasta recipe"},
			{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"search_recipes","arguments":"{\"query\":\"pasta\"}"}}]},
			{"role":"tool","tool_call_id":"call_1","content":"[{\"title\":\"Pasta al pomodoro\"}]"}],` + demoTools + `}`},
		{name: "length", body: chatBody("gpt-4o", "hello", `"max_tokens":2`), wantStatus: 200},
		{name: "stream text", body: chatBody("gpt-4o", "hello", `"stream":true`), wantStatus: 200, wantStream: true},
		{name: "stream text with usage", body: chatBody("gpt-4o", "hello", `"stream":true,"stream_options":{"include_usage":true}`), wantStatus: 200, wantStream: true},
		{name: "stream tool call with usage", body: withTools("I had oatmeal for breakfast", `"stream":true,"stream_options":{"include_usage":true}`), wantStatus: 200, wantStream: true},
		{name: "stream several tool calls and text", wantStatus: 200, wantStream: true,
			cfg: sim.Config{Script: sim.Script{Rules: []sim.Rule{{When: sim.When{Contains: []string{"both"}}, Reply: sim.Reply{Text: "Doing both.",
				ToolCalls: []sim.ScriptCall{{Name: "get_profile"}, {Name: "search_recipes", Arguments: map[string]any{"query": "soup"}}}}}}}},
			body: withTools("do both please", `"stream":true,"stream_options":{"include_usage":true}`)},
		{name: "stream length", body: chatBody("gpt-4o", "hello", `"stream":true,"max_completion_tokens":3`), wantStatus: 200, wantStream: true},
		{name: "stream without obfuscation", body: chatBody("gpt-4o", "hello", `"stream":true,"stream_options":{"include_obfuscation":false}`), wantStatus: 200, wantStream: true},
		{name: "reasoning model", body: chatBody("o4-mini", "hello", `"max_completion_tokens":30`), wantStatus: 200},
		{name: "malformed body", body: `{"model":`, wantStatus: 400},
		{name: "missing messages", body: `{"model":"gpt-4o"}`, wantStatus: 400},
		{name: "wrong type", body: `{"model":"gpt-4o","messages":"hi"}`, wantStatus: 400},
		{name: "oversized", cfg: sim.Config{MaxBodyBytes: 64}, body: chatBody("gpt-4o", strings.Repeat("x", 100), ""), wantStatus: 413},
		{name: "no key", key: "-", body: chatBody("gpt-4o", "hi", ""), wantStatus: 401},
		{name: "wrong key", cfg: sim.Config{Keys: []string{"sk-good"}}, body: chatBody("gpt-4o", "hi", ""), wantStatus: 401},
		{name: "unknown model", cfg: sim.Config{Models: []string{"gpt-4o-mini"}}, body: chatBody("gpt-4o", "hi", ""), wantStatus: 404},
		{name: "unknown parameter", body: chatBody("gpt-4o", "hi", `"foo":1`), wantStatus: 400},
		{name: "max_tokens on a reasoning model", body: chatBody("o3", "hi", `"max_tokens":5`), wantStatus: 400},
		{name: "out of quota", cfg: sim.Config{Faults: []sim.Fault{{Kind: sim.FaultQuota}}}, body: chatBody("gpt-4o", "hi", ""), wantStatus: 429},
		{name: "rate limited", cfg: sim.Config{Faults: []sim.Fault{{Kind: sim.FaultRateLimit}}}, body: chatBody("gpt-4o", "hi", ""), wantStatus: 429},
		{name: "server error", cfg: sim.Config{Faults: []sim.Fault{{Kind: sim.FaultServerError}}}, body: chatBody("gpt-4o", "hi", ""), wantStatus: 500},
		{name: "unavailable", cfg: sim.Config{Faults: []sim.Fault{{Kind: sim.FaultUnavailable}}}, body: chatBody("gpt-4o", "hi", `"stream":true`), wantStatus: 503},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, url := testkit.NewSim(t, tc.cfg)
			key := simtest.TestKey
			if tc.key == "-" {
				key = ""
			}
			resp, body := post(t, url, key, tc.body)
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status: got %d, want %d (body %s)", resp.StatusCode, tc.wantStatus, body)
			}
			switch {
			case resp.StatusCode != http.StatusOK:
				if err := spec.Validate("ErrorResponse", body); err != nil {
					t.Errorf("error body %s: %v", body, err)
				}
			case tc.wantStream:
				events := sseData(t, body)
				if len(events) < 3 || events[len(events)-1] != "[DONE]" {
					t.Fatalf("stream events: got %q, want chunks ending with [DONE]", events)
				}
				for i, e := range events[:len(events)-1] {
					if err := spec.Validate("CreateChatCompletionStreamResponse", []byte(e)); err != nil {
						t.Errorf("chunk %d %s: %v", i, e, err)
					}
				}
			default:
				if err := spec.Validate("CreateChatCompletionResponse", body); err != nil {
					t.Errorf("completion %s: %v", body, err)
				}
			}
		})
	}
}

// TestErrorRoutesMatchSpec covers errors outside the chat handler.
func TestErrorRoutesMatchSpec(t *testing.T) {
	t.Parallel()
	spec := simtest.Spec(t)
	_, url := testkit.NewSim(t, sim.Config{})
	for _, path := range []string{"/v1/nope", "/v1/chat/completions"} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: got status %d, want 404", path, resp.StatusCode)
		}
	}
	resp, err := http.Post(url+"/v1/nope", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if err := spec.Validate("ErrorResponse", body); err != nil {
		t.Errorf("error body %s: %v", body, err)
	}
}
