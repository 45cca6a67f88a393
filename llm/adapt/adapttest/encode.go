// Package adapttest holds what the adapters' tests share: a server that
// records what an SDK sends, and a request with awkward text.
package adapttest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"

	"github.com/voxgate/voxgate/llm"
)

// MealRequest is a tool loop's history with awkward text (newlines,
// quotes, markup, an emoji), forcing log_meal.
func MealRequest(model string, tools ...llm.ToolSpec) llm.Request {
	return llm.Request{
		Model: model, MaxOutputTokens: 300, SafetyIdentifier: "u_9f2c", ToolChoice: "log_meal",
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "You help with meals.\nLine two, \"quoted\" <b>."},
			{Role: llm.RoleUser, Content: "Log my oats 🥣"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "find_recipes", Arguments: `{"query":"oats"}`}}},
			{Role: llm.RoleTool, ToolCallID: "call_1", Content: `{"recipes":[]}`},
			{Role: llm.RoleAssistant, Content: "None found."},
		},
		Tools: tools,
	}
}

// SentRequest is a request as the server got it.
type SentRequest struct {
	Body   []byte
	Header http.Header
}

// RefusingServer records every request and answers it 400 with errBody.
func RefusingServer(t *testing.T, errBody string) (url string, sent func() []SentRequest) {
	t.Helper()
	var mu sync.Mutex
	var got []SentRequest
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, SentRequest{body, r.Header.Clone()})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, errBody)
	}))
	t.Cleanup(ts.Close)
	return ts.URL, func() []SentRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]SentRequest(nil), got...)
	}
}

// SameRequests asserts that the two requests sent, Stream's then
// NewStreaming's, are the same, and returns Stream's.
func SameRequests(t *testing.T, got []SentRequest) SentRequest {
	t.Helper()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	ours, sdk := got[0], got[1]
	if !bytes.Equal(ours.Body, sdk.Body) {
		t.Errorf("body:\n  Stream       %s\n  NewStreaming %s", ours.Body, sdk.Body)
	}
	if !reflect.DeepEqual(ours.Header, sdk.Header) {
		t.Errorf("headers:\n  Stream       %v\n  NewStreaming %v", ours.Header, sdk.Header)
	}
	return ours
}
