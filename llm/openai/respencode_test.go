package openai

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/adapt"
	"github.com/voxgate/voxgate/llm/adapt/adapttest"
)

// The Responses upstream's request is the one openai-go's
// Responses.NewStreaming sends for the same parameters: the same body,
// byte for byte, and the same headers.
func TestEncodedResponsesRequestIsOpenAIGos(t *testing.T) {
	url, sent := adapttest.RefusingServer(t, `{"error":{"message":"recorded","type":"invalid_request_error"}}`)
	o, err := New(Params{BaseURL: url + "/v1", APIKey: "sk-test", ResponsesModels: []string{"o3"}, Scope: "acct"})
	if err != nil {
		t.Fatal(err)
	}
	params := json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)
	req := adapttest.MealRequest("o3", llm.ToolSpec{Name: "find_recipes", Description: "Find recipes.", Parameters: params},
		llm.ToolSpec{Name: "log_meal", Parameters: params, Strict: true})
	sign(&req.Messages[2].ToolCalls[0], "acct/o3", []reasoningItem{{ID: "rs_1", EncryptedContent: "gAAAAAblob"}})
	req.ResponseFormat = &llm.ResponseFormat{Type: llm.FormatJSONSchema, Name: "meal", Strict: true,
		Schema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)}
	if _, err := o.Stream(t.Context(), req); err == nil {
		t.Fatal("Stream: no error from a 400")
	}
	p, err := responsesParams(req, "acct/o3")
	if err != nil {
		t.Fatal(err)
	}
	s := o.client.Responses.NewStreaming(t.Context(), *p)
	_ = s.Close()

	ours := adapttest.SameRequests(t, sent())
	for _, want := range []string{`"stream":true`, `"store":false`, `"max_output_tokens":300`, `"tool_choice":{"name":"log_meal","type":"function"}`,
		`{"id":"rs_1","summary":[],"encrypted_content":"gAAAAAblob","type":"reasoning"}`, `"strict":false`, `"safety_identifier":"u_9f2c"`,
		`"format":{"name":"meal"`} {
		if !bytes.Contains(ours.Body, []byte(want)) {
			t.Errorf("body lacks %s: %s", want, ours.Body)
		}
	}
}

// The decoder of the Responses stream's events takes any bytes an
// upstream sends without panicking, and what it emits keeps the seam's
// promises: a call's pieces name a call it started, a whole call has a
// name, and EventDone comes with a finish reason and usage.
func FuzzResponsesEvent(f *testing.F) {
	for _, s := range []string{
		`{"type":"response.created","response":{"model":"o3"}}`,
		`{"type":"response.output_text.delta","delta":"Hi"}`,
		`{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs_1","encrypted_content":"gAAAAAx"}}`,
		`{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","name":"f","arguments":""}}`,
		`{"type":"response.function_call_arguments.delta","output_index":1,"delta":"{}"}`,
		`{"type":"response.function_call_arguments.done","output_index":1,"arguments":"{}"}`,
		`{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":3,"output_tokens":9}}}`,
		`{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"content_filter"}}}`,
		`{"type":"error","code":"server_error","message":"x"}`,
		`{"type":"response.failed","response":{"status":"failed","error":{"code":"rate_limit_exceeded","message":"slow"}}}`,
		`{"type":"response.function_call_arguments.delta","output_index":7,"delta":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := &respDecoder{Emitter: &adapt.Emitter{Provider: "openai"}, scope: "acct"}
		started := map[int]bool{}
		for _, line := range bytes.Split(data, []byte("\n")) {
			var e respEvent
			if json.Unmarshal(line, &e) != nil {
				continue
			}
			if err := d.event(e); err != nil {
				if _, ok := err.(*llm.Error); !ok {
					t.Fatalf("error %T %v, want an *llm.Error", err, err)
				}
				return
			}
			for _, ev := range d.Emitted() {
				switch ev.Kind {
				case llm.EventToolCallDelta:
					if ev.ToolCall.ID != "" {
						started[ev.Index] = true
					} else if !started[ev.Index] {
						t.Fatalf("a piece of call %d, which never started", ev.Index)
					}
				case llm.EventToolCall:
					if ev.ToolCall.Name == "" || ev.ToolCall.ID == "" {
						t.Fatalf("a whole call without a name or id: %+v", ev.ToolCall)
					}
				}
			}
		}
		if err := d.End(); err == nil {
			ev := d.Emitted()
			if last := ev[len(ev)-1]; last.Kind != llm.EventDone || last.FinishReason == "" || last.Usage == nil {
				t.Fatalf("a clean end without a finish and usage: %+v", last)
			}
		}
	})
}
