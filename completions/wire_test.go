package completions_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/voxgate/voxgate/completions"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/llm"
)

// decodeChunks reads what a ChunkWriter wrote the way openai-go reads a
// stream, accumulating it as its users do.
func decodeChunks(t *testing.T, body []byte) (openai.ChatCompletionAccumulator, error) {
	t.Helper()
	res := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(body))}
	s := ssestream.NewStream[openai.ChatCompletionChunk](ssestream.NewDecoder(res), nil)
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		if !acc.AddChunk(s.Current()) {
			t.Fatalf("the accumulator refused chunk %s", s.Current().RawJSON())
		}
	}
	return acc, s.Err()
}

// TestChunkWriterDecodes: a streamed answer with text and a tool call, as
// written, decodes with openai-go into the same answer, usage included.
func TestChunkWriterDecodes(t *testing.T) {
	var buf bytes.Buffer
	flushes := 0
	w := completions.NewChunkWriter(&buf, func() { flushes++ }, "chatcmpl-x1", 1_790_000_000)
	w.SetModel("gpt-6-luna-2026-10-01")
	call := &llm.ToolCall{ID: "call_0123456789abcdef01234567", Name: "search_recipes"}
	for _, ev := range []llm.Event{
		{Kind: llm.EventText, Text: "Let me "},
		{Kind: llm.EventText, Text: "look."},
		{Kind: llm.EventToolCallDelta, Index: 0, ToolCall: &llm.ToolCall{ID: call.ID, Name: call.Name, Arguments: `{"query":`}},
		{Kind: llm.EventToolCallDelta, Index: 0, ToolCall: &llm.ToolCall{Arguments: `"soup"}`}},
		{Kind: llm.EventToolCall, ToolCall: call},
	} {
		if err := w.Event(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Finish(llm.FinishToolCalls, &llm.Usage{InputTokens: 40, CachedInputTokens: 16, OutputTokens: 9}); err != nil {
		t.Fatal(err)
	}
	acc, err := decodeChunks(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if flushes != 7 {
		t.Fatalf("got %d flushes, want one per chunk (4 deltas, the finish, the usage) and [DONE]: 7", flushes)
	}
	if len(acc.Choices) != 1 {
		t.Fatalf("got %d choices", len(acc.Choices))
	}
	msg := acc.Choices[0].Message
	if msg.Content != "Let me look." || acc.Model != "gpt-6-luna-2026-10-01" || acc.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("got content %q, model %q, finish %q", msg.Content, acc.Model, acc.Choices[0].FinishReason)
	}
	if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].ID != call.ID || msg.ToolCalls[0].Function.Name != "search_recipes" ||
		msg.ToolCalls[0].Function.Arguments != `{"query":"soup"}` {
		t.Fatalf("got tool calls %+v", msg.ToolCalls)
	}
	if u := acc.Usage; u.PromptTokens != 40 || u.CompletionTokens != 9 || u.TotalTokens != 49 || u.PromptTokensDetails.CachedTokens != 16 {
		t.Fatalf("got usage %+v", u)
	}
}

// TestChunkWriterFail: a failure after part of the answer ends the stream
// with OpenAI's error object and no [DONE]; openai-go raises it.
func TestChunkWriterFail(t *testing.T) {
	var buf bytes.Buffer
	w := completions.NewChunkWriter(&buf, func() {}, "chatcmpl-x2", 1_790_000_000)
	w.SetModel("claude-haiku-4-5")
	if err := w.Event(llm.Event{Kind: llm.EventText, Text: "Half an ans"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Fail(apierr.New(apierr.AIUnavailable, "")); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "[DONE]") {
		t.Fatalf("a failed stream ended with [DONE]:\n%s", buf.String())
	}
	_, err := decodeChunks(t, buf.Bytes())
	var se *ssestream.StreamError
	if !errors.As(err, &se) || !strings.Contains(se.Message, "AI_UNAVAILABLE") {
		t.Fatalf("got %v, want openai-go's stream error naming AI_UNAVAILABLE", err)
	}
}

func TestDecodeCompletionRequest(t *testing.T) {
	good := `{"model":"default","messages":[
		{"role":"developer","content":"Be brief."},
		{"role":"user","content":[{"type":"text","text":"Soup "},{"type":"text","text":"ideas?"}]},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call.with.dots:1","type":"function","function":{"name":"search","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"call.with.dots:1","content":"[]"}],
		"tools":[{"type":"function","function":{"name":"search","parameters":{"type":"object"}}}],
		"tool_choice":{"type":"function","function":{"name":"search"}},
		"stream":true,"stream_options":{"include_usage":true},"max_tokens":50,"user":"alice@example.com"}`
	req, err := completions.DecodeCompletionRequest([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	lr, err := req.LLMRequest()
	if err != nil {
		t.Fatal(err)
	}
	if lr.Model != "default" || lr.MaxOutputTokens != 50 || lr.ToolChoice != "search" || len(lr.Tools) != 1 {
		t.Fatalf("got %+v", lr)
	}
	if lr.Messages[0].Role != llm.RoleSystem || lr.Messages[1].Content != "Soup ideas?" {
		t.Fatalf("got messages %+v", lr.Messages[:2])
	}
	id := lr.Messages[2].ToolCalls[0].ID
	if id == "call.with.dots:1" || id != lr.Messages[3].ToolCallID || len(id) > 40 {
		t.Fatalf("an id a provider would refuse was kept or split: call %q, answer %q", id, lr.Messages[3].ToolCallID)
	}
	if b, _ := json.Marshal(lr); bytes.Contains(b, []byte("alice")) {
		t.Fatalf("the client's user field reached the provider request: %s", b)
	}

	for _, c := range []struct{ name, body, want string }{
		{"unknown field", `{"model":"d","messages":[{"role":"user","content":"x"}],"temperature_x":1}`, "temperature_x"},
		{"no model", `{"messages":[{"role":"user","content":"x"}]}`, "model"},
		{"no messages", `{"model":"d","messages":[]}`, "messages"},
		{"n", `{"model":"d","n":2,"messages":[{"role":"user","content":"x"}]}`, "n:"},
		{"options without stream", `{"model":"d","stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`, "stream_options"},
		{"bad tool name", `{"model":"d","tools":[{"type":"function","function":{"name":"a b"}}],"messages":[{"role":"user","content":"x"}]}`, "tools[0]"},
		{"not json", `{"model":`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := completions.DecodeCompletionRequest([]byte(c.body))
			var e *apierr.Error
			if !errors.As(err, &e) || e.Code != apierr.InvalidRequest || !strings.Contains(e.Message, c.want) {
				t.Fatalf("got %v, want INVALID_REQUEST naming %q", err, c.want)
			}
		})
	}
	for _, c := range []struct{ name, body, want string }{
		{"image part", `{"model":"d","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, "only text parts"},
		{"role", `{"model":"d","messages":[{"role":"robot","content":"x"}]}`, "role"},
		{"tool without id", `{"model":"d","messages":[{"role":"tool","content":"x"}]}`, "tool_call_id"},
		{"choice of a missing tool", `{"model":"d","tool_choice":{"type":"function","function":{"name":"nope"}},"tools":[{"type":"function","function":{"name":"a"}}],"messages":[{"role":"user","content":"x"}]}`, "nope"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, err := completions.DecodeCompletionRequest([]byte(c.body))
			if err == nil {
				_, err = req.LLMRequest()
			}
			var e *apierr.Error
			if !errors.As(err, &e) || e.Code != apierr.InvalidRequest || !strings.Contains(e.Message, c.want) {
				t.Fatalf("got %v, want INVALID_REQUEST naming %q", err, c.want)
			}
		})
	}
}

// FuzzDecodeCompletionRequest: any body is a request that converts, or a
// 400; never a panic, and every id that reaches a provider is one it takes.
func FuzzDecodeCompletionRequest(f *testing.F) {
	f.Add(`{"model":"d","messages":[{"role":"user","content":"x"}]}`)
	f.Add(`{"model":"d","messages":[{"role":"assistant","tool_calls":[{"id":"é","function":{"name":"a","arguments":"{"}}]},{"role":"tool","tool_call_id":"é","content":[{"type":"text","text":"1"}]}],"tool_choice":"auto"}`)
	f.Add(`{"model":"d","messages":[{"role":"user","content":null}],"tool_choice":"required","tools":[]}`)
	f.Add(`{"model":"d","metadata":{"a":1,"b":"c"},"store":false,"reasoning_effort":"max","parallel_tool_calls":false,"messages":[{"role":"user","content":[{"type":"text","text":"x","extra":1}]}]}`)
	f.Add(`{"model":"d","tools":[{"type":"function","function":{"name":"a","strict":true}}],"tool_choice":{"type":"function","function":{"name":"a","x":1}},"messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"nope","content":"x"}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		req, err := completions.DecodeCompletionRequest([]byte(body))
		if err == nil {
			var lr llm.Request
			if lr, err = req.LLMRequest(); err == nil {
				for _, m := range lr.Messages {
					for _, c := range m.ToolCalls {
						if len(c.ID) > 40 || c.ID == "" {
							t.Fatalf("call id %q", c.ID)
						}
					}
				}
				return
			}
		}
		var e *apierr.Error
		if !errors.As(err, &e) || e.Status() != http.StatusBadRequest {
			t.Fatalf("body %q: got %v, want a 400", body, err)
		}
	})
}
