package openai

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

func TestEncodedRequestIsOpenAIGos(t *testing.T) {
	url, sent := adapttest.RefusingServer(t, `{"error":{"message":"recorded","type":"invalid_request_error"}}`)
	o, err := New(Params{BaseURL: url + "/v1", APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	params := json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","minLength":1},"limit":{"type":"integer"}},"required":["query"]}`)
	req := adapttest.MealRequest("gpt-4o-mini", llm.ToolSpec{Name: "find_recipes", Description: "Find recipes.", Parameters: params},
		llm.ToolSpec{Name: "log_meal", Description: "Log a meal.", Parameters: params})
	if _, err := o.Stream(t.Context(), req); err == nil {
		t.Fatal("Stream: no error from a 400")
	}
	p, err := chatParams(req)
	if err != nil {
		t.Fatal(err)
	}
	s := o.client.Chat.Completions.NewStreaming(t.Context(), *p)
	_ = s.Close()

	ours := adapttest.SameRequests(t, sent())
	if !bytes.Contains(ours.Body, []byte(`"stream":true`)) || !bytes.Contains(ours.Body, []byte(`"log_meal"`)) {
		t.Errorf("body lacks the stream flag or the tools: %s", ours.Body)
	}
}
