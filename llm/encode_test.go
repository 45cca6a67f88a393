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

// Each adapter's Stream sends its parameters already encoded (see
// encodeWith). The request must be the one its SDK's NewStreaming sends for
// the same parameters: the same body, byte for byte, and the same headers.

func TestEncodedRequestIsOpenAIGos(t *testing.T) {
	url, sent := refusingServer(t, `{"error":{"message":"recorded","type":"invalid_request_error"}}`)
	o, err := NewOpenAI(OpenAIParams{BaseURL: url + "/v1", APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	params := json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","minLength":1},"limit":{"type":"integer"}},"required":["query"]}`)
	req := mealRequest("gpt-4o-mini", ToolSpec{Name: "find_recipes", Description: "Find recipes.", Parameters: params},
		ToolSpec{Name: "log_meal", Description: "Log a meal.", Parameters: params})
	if _, err := o.Stream(t.Context(), req); err == nil {
		t.Fatal("Stream: no error from a 400")
	}
	p, err := chatParams(req)
	if err != nil {
		t.Fatal(err)
	}
	s := o.client.Chat.Completions.NewStreaming(t.Context(), *p)
	_ = s.Close()

	ours := sameRequests(t, sent())
	if !bytes.Contains(ours.body, []byte(`"stream":true`)) || !bytes.Contains(ours.body, []byte(`"log_meal"`)) {
		t.Errorf("body lacks the stream flag or the tools: %s", ours.body)
	}
}

func TestEncodedRequestIsAnthropicSDKs(t *testing.T) {
	url, sent := refusingServer(t, `{"type":"error","error":{"type":"invalid_request_error","message":"recorded"}}`)
	a, err := NewAnthropic(AnthropicParams{Name: "claude", BaseURL: url, APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	schema := json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","minLength":1}},"required":["query"],"additionalProperties":false}`)
	req := mealRequest("claude-haiku-5-5", ToolSpec{Name: "find_recipes", Description: "Find recipes.", Parameters: schema},
		ToolSpec{Name: "log_meal", Parameters: schema})
	if _, err := a.Stream(t.Context(), req); err == nil {
		t.Fatal("Stream: no error from a 400")
	}
	p, err := a.messageParams(req)
	if err != nil {
		t.Fatal(err)
	}
	s := a.client.Messages.NewStreaming(t.Context(), *p)
	_ = s.Close()

	ours := sameRequests(t, sent())
	for _, want := range []string{`"stream":true`, `"max_tokens":300`, `"cache_control":{"type":"ephemeral"}`,
		`"tool_choice":{"name":"log_meal","type":"tool"}`, `"additionalProperties":false`} {
		if !bytes.Contains(ours.body, []byte(want)) {
			t.Errorf("body lacks %s: %s", want, ours.body)
		}
	}
	if bytes.Contains(ours.body, []byte("u_9f2c")) || bytes.Contains(ours.body, []byte("metadata")) {
		t.Errorf("the user's identifier went out: %s", ours.body)
	}
}

// mealRequest is a tool loop's history with awkward text (newlines,
// quotes, markup, an emoji), forcing log_meal.
func mealRequest(model string, tools ...ToolSpec) Request {
	return Request{
		Model: model, MaxOutputTokens: 300, SafetyIdentifier: "u_9f2c", ToolChoice: "log_meal",
		Messages: []Message{
			{Role: RoleSystem, Content: "You help with meals.\nLine two, \"quoted\" <b>."},
			{Role: RoleUser, Content: "Log my oats 🥣"},
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_1", Name: "find_recipes", Arguments: `{"query":"oats"}`}}},
			{Role: RoleTool, ToolCallID: "call_1", Content: `{"recipes":[]}`},
			{Role: RoleAssistant, Content: "None found."},
		},
		Tools: tools,
	}
}

// sentRequest is a request as the server got it.
type sentRequest struct {
	body   []byte
	header http.Header
}

// refusingServer records every request and answers it 400 with errBody.
func refusingServer(t *testing.T, errBody string) (url string, sent func() []sentRequest) {
	t.Helper()
	var mu sync.Mutex
	var got []sentRequest
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, sentRequest{body, r.Header.Clone()})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, errBody)
	}))
	t.Cleanup(ts.Close)
	return ts.URL, func() []sentRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]sentRequest(nil), got...)
	}
}

// sameRequests asserts that the two requests sent, Stream's then
// NewStreaming's, are the same, and returns Stream's.
func sameRequests(t *testing.T, got []sentRequest) sentRequest {
	t.Helper()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	ours, sdk := got[0], got[1]
	if !bytes.Equal(ours.body, sdk.body) {
		t.Errorf("body:\n  Stream       %s\n  NewStreaming %s", ours.body, sdk.body)
	}
	if !reflect.DeepEqual(ours.header, sdk.header) {
		t.Errorf("headers:\n  Stream       %v\n  NewStreaming %v", ours.header, sdk.header)
	}
	return ours
}
