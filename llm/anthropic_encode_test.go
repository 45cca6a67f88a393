package llm

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
)

// Stream sends its parameters already encoded (see encodeWith). The
// request must be the one anthropic-sdk-go's NewStreaming sends for the
// same parameters: the same body, byte for byte, and the same headers.
func TestEncodedRequestIsAnthropicSDKs(t *testing.T) {
	type sent struct {
		body   []byte
		header http.Header
	}
	var mu sync.Mutex
	var got []sent
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, sent{body, r.Header.Clone()})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"recorded"}}`)
	}))
	t.Cleanup(ts.Close)
	a, err := NewAnthropic(AnthropicParams{Name: "claude", BaseURL: ts.URL, APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	schema := json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","minLength":1}},"required":["query"],"additionalProperties":false}`)
	req := Request{
		Model: "claude-haiku-5-5", MaxOutputTokens: 300, SafetyIdentifier: "u_9f2c", ToolChoice: "log_meal",
		Messages: []Message{
			{Role: RoleSystem, Content: "You help with meals.\nLine two, \"quoted\" <b>."},
			{Role: RoleUser, Content: "Log my oats 🥣"},
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_1", Name: "find_recipes", Arguments: `{"query":"oats"}`}}},
			{Role: RoleTool, ToolCallID: "call_1", Content: `{"recipes":[]}`},
			{Role: RoleAssistant, Content: "None found."},
		},
		Tools: []ToolSpec{{Name: "find_recipes", Description: "Find recipes.", Parameters: schema},
			{Name: "log_meal", Parameters: schema}},
	}
	if _, err := a.Stream(t.Context(), req); err == nil {
		t.Fatal("Stream: no error from a 400")
	}
	p, err := a.messageParams(req)
	if err != nil {
		t.Fatal(err)
	}
	s := a.client.Messages.NewStreaming(t.Context(), *p)
	_ = s.Close()

	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	ours, sdk := got[0], got[1]
	if !bytes.Equal(ours.body, sdk.body) {
		t.Errorf("body:\n  Stream       %s\n  NewStreaming %s", ours.body, sdk.body)
	}
	for _, want := range []string{`"stream":true`, `"max_tokens":300`, `"cache_control":{"type":"ephemeral"}`,
		`"tool_choice":{"name":"log_meal","type":"tool"}`, `"additionalProperties":false`} {
		if !bytes.Contains(ours.body, []byte(want)) {
			t.Errorf("body lacks %s: %s", want, ours.body)
		}
	}
	if bytes.Contains(ours.body, []byte("u_9f2c")) || bytes.Contains(ours.body, []byte("metadata")) {
		t.Errorf("the user's identifier went out: %s", ours.body)
	}
	if !reflect.DeepEqual(ours.header, sdk.header) {
		t.Errorf("headers:\n  Stream       %v\n  NewStreaming %v", ours.header, sdk.header)
	}
}
