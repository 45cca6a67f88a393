package anthropic

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/adapt/adapttest"
)

// Each adapter's Stream sends its parameters already encoded (see
// adapt.EncodeWith). The request must be the one its SDK's NewStreaming
// sends for the same parameters: the same body, byte for byte, and the
// same headers.

func TestEncodedRequestIsAnthropicSDKs(t *testing.T) {
	url, sent := adapttest.RefusingServer(t, `{"type":"error","error":{"type":"invalid_request_error","message":"recorded"}}`)
	a, err := New(Params{Name: "claude", BaseURL: url, APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	schema := json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","minLength":1}},"required":["query"],"additionalProperties":false}`)
	req := adapttest.MealRequest("claude-haiku-5-5", llm.ToolSpec{Name: "find_recipes", Description: "Find recipes.", Parameters: schema},
		llm.ToolSpec{Name: "log_meal", Parameters: schema})
	if _, err := a.Stream(t.Context(), req); err == nil {
		t.Fatal("Stream: no error from a 400")
	}
	p, err := a.messageParams(req)
	if err != nil {
		t.Fatal(err)
	}
	s := a.client.Messages.NewStreaming(t.Context(), *p)
	_ = s.Close()

	ours := adapttest.SameRequests(t, sent())
	for _, want := range []string{`"stream":true`, `"max_tokens":300`, `"cache_control":{"type":"ephemeral"}`,
		`"tool_choice":{"name":"log_meal","type":"tool"}`, `"additionalProperties":false`} {
		if !bytes.Contains(ours.Body, []byte(want)) {
			t.Errorf("body lacks %s: %s", want, ours.Body)
		}
	}
	if bytes.Contains(ours.Body, []byte("u_9f2c")) || bytes.Contains(ours.Body, []byte("metadata")) {
		t.Errorf("the user's identifier went out: %s", ours.Body)
	}
}
