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

// Stream sends its parameters already encoded (see encodeWith). The request
// must be the one openai-go's NewStreaming sends for the same parameters:
// the same body, byte for byte, and the same headers.
func TestEncodedRequestIsOpenAIGos(t *testing.T) {
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
		_, _ = io.WriteString(w, `{"error":{"message":"recorded","type":"invalid_request_error"}}`)
	}))
	t.Cleanup(ts.Close)
	o, err := NewOpenAI(OpenAIParams{BaseURL: ts.URL + "/v1", APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	params := json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","minLength":1},"limit":{"type":"integer"}},"required":["query"]}`)
	req := Request{
		Model: "gpt-4o-mini", MaxOutputTokens: 300, SafetyIdentifier: "u_9f2c", ToolChoice: "log_meal",
		Messages: []Message{
			{Role: RoleSystem, Content: "You help with meals.\nLine two, \"quoted\" <b>."},
			{Role: RoleUser, Content: "Log my oats 🥣"},
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_1", Name: "find_recipes", Arguments: `{"query":"oats"}`}}},
			{Role: RoleTool, ToolCallID: "call_1", Content: `{"recipes":[]}`},
			{Role: RoleAssistant, Content: "None found."},
		},
		Tools: []ToolSpec{
			{Name: "find_recipes", Description: "Find recipes.", Parameters: params},
			{Name: "log_meal", Description: "Log a meal.", Parameters: params},
		},
	}
	if _, err := o.Stream(t.Context(), req); err == nil {
		t.Fatal("Stream: no error from a 400")
	}
	p, err := chatParams(req)
	if err != nil {
		t.Fatal(err)
	}
	s := o.client.Chat.Completions.NewStreaming(t.Context(), *p)
	_ = s.Close()

	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	ours, sdk := got[0], got[1]
	if !bytes.Equal(ours.body, sdk.body) {
		t.Errorf("body:\n  Stream     %s\n  NewStreaming %s", ours.body, sdk.body)
	}
	if !bytes.Contains(ours.body, []byte(`"stream":true`)) || !bytes.Contains(ours.body, []byte(`"log_meal"`)) {
		t.Errorf("body lacks the stream flag or the tools: %s", ours.body)
	}
	if !reflect.DeepEqual(ours.header, sdk.header) {
		t.Errorf("headers:\n  Stream       %v\n  NewStreaming %v", ours.header, sdk.header)
	}
}
