package sim_test

import (
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestBadInput checks that requests the real API refuses get its error
// shape, status, type, code and param.
func TestBadInput(t *testing.T) {
	t.Parallel()
	const user = `{"role":"user","content":"hi"}`
	call := `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}`
	tool := `"tools":[{"type":"function","function":{"name":"f"}}]`
	tests := []struct {
		name       string
		cfg        sim.Config
		key        string
		body       string
		wantStatus int
		wantCode   string
		wantParam  string
	}{
		{name: "malformed json", body: `{"model":"gpt-4o",`, wantStatus: 400},
		{name: "empty body", body: ``, wantStatus: 400},
		{name: "not an object", body: `[1,2]`, wantStatus: 400},
		{name: "trailing garbage", body: `{"model":"gpt-4o","messages":[` + user + `]} x`, wantStatus: 400},
		{name: "missing model", body: `{"messages":[` + user + `]}`, wantStatus: 400, wantParam: "model"},
		{name: "missing messages", body: `{"model":"gpt-4o"}`, wantStatus: 400, wantCode: "missing_required_parameter", wantParam: "messages"},
		{name: "empty messages", body: `{"model":"gpt-4o","messages":[]}`, wantStatus: 400, wantCode: "empty_array", wantParam: "messages"},
		{name: "messages not an array", body: `{"model":"gpt-4o","messages":"hi"}`, wantStatus: 400, wantCode: "invalid_type", wantParam: "messages"},
		{name: "model not a string", body: `{"model":4,"messages":[` + user + `]}`, wantStatus: 400, wantCode: "invalid_type", wantParam: "model"},
		{name: "stream not a boolean", body: `{"model":"gpt-4o","stream":"yes","messages":[` + user + `]}`, wantStatus: 400, wantCode: "invalid_type", wantParam: "stream"},
		{name: "message not an object", body: `{"model":"gpt-4o","messages":[1]}`, wantStatus: 400, wantCode: "invalid_type", wantParam: "messages[0]"},
		{name: "content a number", body: `{"model":"gpt-4o","messages":[{"role":"user","content":5}]}`, wantStatus: 400, wantCode: "invalid_type", wantParam: "messages[0].content"},
		{name: "missing content", body: `{"model":"gpt-4o","messages":[{"role":"user"}]}`, wantStatus: 400, wantCode: "missing_required_parameter", wantParam: "messages[0].content"},
		{name: "bad role", body: `{"model":"gpt-4o","messages":[{"role":"robot","content":"x"}]}`, wantStatus: 400, wantCode: "invalid_value", wantParam: "messages[0].role"},
		{name: "tool result without call", body: `{"model":"gpt-4o","messages":[` + user + `,{"role":"tool","tool_call_id":"call_1","content":"x"}]}`, wantStatus: 400, wantParam: "messages.[1].role"},
		{name: "call without tool result", body: `{"model":"gpt-4o",` + tool + `,"messages":[` + user + `,` + call + `,` + user + `]}`, wantStatus: 400, wantParam: "messages.[1].role"},
		{name: "tool choice without tools", body: `{"model":"gpt-4o","tool_choice":"required","messages":[` + user + `]}`, wantStatus: 400, wantCode: "invalid_value", wantParam: "tool_choice"},
		{name: "tool choice names unknown tool", body: `{"model":"gpt-4o",` + tool + `,"tool_choice":{"type":"function","function":{"name":"g"}},"messages":[` + user + `]}`, wantStatus: 400, wantCode: "invalid_value", wantParam: "tool_choice"},
		{name: "bad tool name", body: `{"model":"gpt-4o","tools":[{"type":"function","function":{"name":"a b"}}],"messages":[` + user + `]}`, wantStatus: 400, wantCode: "invalid_value", wantParam: "tools[0].function.name"},
		{name: "max tokens zero", body: `{"model":"gpt-4o","max_tokens":0,"messages":[` + user + `]}`, wantStatus: 400, wantCode: "invalid_value", wantParam: "max_tokens"},
		{name: "unknown parameter", body: `{"model":"gpt-4o","max_output_tokens":5,"messages":[` + user + `]}`, wantStatus: 400, wantCode: "unknown_parameter", wantParam: "max_output_tokens"},
		{name: "max_tokens on a reasoning model", body: `{"model":"o3-mini","max_tokens":5,"messages":[` + user + `]}`, wantStatus: 400, wantCode: "unsupported_parameter", wantParam: "max_tokens"},
		{name: "reasoning effort outside the enum", body: `{"model":"gpt-4o","reasoning_effort":"ultra","messages":[` + user + `]}`, wantStatus: 400, wantCode: "invalid_value", wantParam: "reasoning_effort"},
		{name: "strict not a boolean", body: `{"model":"gpt-4o","tools":[{"type":"function","function":{"name":"f","strict":"yes"}}],"messages":[` + user + `]}`, wantStatus: 400, wantCode: "invalid_type", wantParam: "tools.function.strict"},
		{name: "stream options without stream", body: `{"model":"gpt-4o","stream_options":{"include_usage":true},"messages":[` + user + `]}`, wantStatus: 400, wantParam: "stream_options"},
		{name: "oversized body", cfg: sim.Config{MaxBodyBytes: 1024}, body: chatBody("gpt-4o", strings.Repeat("a", 2000), ""), wantStatus: 413, wantCode: "request_too_large"},
		{name: "no key", key: "-", body: chatBody("gpt-4o", "hi", ""), wantStatus: 401},
		{name: "key not in list", cfg: sim.Config{Keys: []string{"sk-other"}}, body: chatBody("gpt-4o", "hi", ""), wantStatus: 401, wantCode: "invalid_api_key"},
		{name: "model not in list", cfg: sim.Config{Models: []string{"gpt-4o-mini"}}, body: chatBody("gpt-4o", "hi", ""), wantStatus: 404, wantCode: "model_not_found", wantParam: "model"},
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
			typ, code, param, msg := apiError(t, body)
			if resp.StatusCode != tc.wantStatus || code != tc.wantCode || param != tc.wantParam {
				t.Errorf("got %d code %q param %q, want %d code %q param %q (message %q)",
					resp.StatusCode, code, param, tc.wantStatus, tc.wantCode, tc.wantParam, msg)
			}
			if typ != "invalid_request_error" || msg == "" {
				t.Errorf("got type %q message %q, want invalid_request_error with a message", typ, msg)
			}
		})
	}
}

// TestKeys checks the configured key list lets its keys through.
func TestKeys(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{Keys: []string{"sk-a", "sk-b"}})
	for _, key := range []string{"sk-a", "sk-b"} {
		if resp, body := post(t, url, key, chatBody("gpt-4o", "hi", "")); resp.StatusCode != 200 {
			t.Errorf("key %s: got %d %s, want 200", key, resp.StatusCode, body)
		}
	}
}
