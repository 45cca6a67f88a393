package llm_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/openai"
)

// cannedBody answers every request with 200 and body as an event stream,
// without a network, so the fuzzer spends its time in the decoder.
type cannedBody string

func (c cannedBody) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}},
		Body:    io.NopCloser(strings.NewReader(string(c))),
		Request: req,
	}, nil
}

// FuzzOpenAIStream feeds arbitrary provider streams to the adapter
// (checkOpenAIBody says what must hold).
func FuzzOpenAIStream(f *testing.F) {
	sse := func(events ...string) string {
		var b strings.Builder
		for _, e := range events {
			b.WriteString("data: " + e + "\n\n")
		}
		return b.String()
	}
	f.Add(sse(chunk(`{"role":"assistant","content":""}`, ""), chunk(`{"content":"hi"}`, ""), chunk(`{}`, "stop"), usageChunk, "[DONE]"))
	f.Add(sse(chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x\""}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}`, ""), chunk(`{}`, "tool_calls"), usageChunk, "[DONE]"))
	f.Add(sse(chunk(`{"content":"x"}`, ""), `{"error":{"type":"server_error","code":null}}`))
	f.Add(sse(chunk(`{"content":"x"}`, "content_filter"), usageChunk))
	f.Add(sse(`{"choices":[{"index":0,"delta":{"content":"x"}}]`, "[DONE]"))
	f.Add(sse(chunk(`{"content":"x"}`, ""), `{"id":1}`, "[DONE]"))
	f.Add(": comment\n\nevent: x\ndata: {}\n\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, body string) { checkOpenAIBody(t, body, false) })
}

// FuzzOpenAIWhole feeds arbitrary whole answers (Request.Whole) to the
// adapter, with the stream's promises.
func FuzzOpenAIWhole(f *testing.F) {
	f.Add(`{"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`)
	f.Add(`{"choices":[{"index":0,"message":{"content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{}}`)
	f.Add(`{"choices":[{"index":0,"message":{"content":"x","tool_calls":[{"function":{"name":""}}]},"finish_reason":"tool_calls"}],"usage":{}}`)
	f.Add(`{"choices":[{"index":0,"message":{"content":"x"},"finish_reason":"content_filter"}],"usage":{"prompt_tokens":1}}`)
	f.Add(`{"choices":[{"index":0,"message":{"content":"x"}}]}`)
	f.Add(`{"error":{"type":"server_error"}}`)
	f.Add(`[`)
	f.Add("")
	f.Fuzz(func(t *testing.T, body string) { checkOpenAIBody(t, body, true) })
}

// checkOpenAIBody answers one call with body: Stream and Next end in
// EventDone then io.EOF, or in an *llm.Error; never a panic, another error
// type, a done stream without its finish reason and usage, or a tool call
// without a name.
func checkOpenAIBody(t *testing.T, body string, whole bool) {
	o, err := openai.New(openai.Params{BaseURL: "http://provider.test/v1", APIKey: "k",
		HTTPClient: &http.Client{Transport: cannedBody(body)}})
	if err != nil {
		t.Fatal(err)
	}
	req := userRequest("gpt-4o", "hi")
	req.Whole = whole
	st, err := o.Stream(t.Context(), req)
	if err != nil {
		var e *llm.Error
		if !errors.As(err, &e) {
			t.Fatalf("Stream: got %v (%T), want an *llm.Error", err, err)
		}
		return
	}
	defer st.Close()
	for range 10_000 {
		ev, err := st.Next(t.Context())
		if err != nil {
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("Next: got %v (%T), want an *llm.Error", err, err)
			}
			return
		}
		switch ev.Kind {
		case llm.EventToolCall:
			if ev.ToolCall == nil || ev.ToolCall.Name == "" {
				t.Fatalf("tool call without a name: %+v", ev.ToolCall)
			}
		case llm.EventDone:
			if ev.FinishReason == "" || ev.Usage == nil {
				t.Fatalf("done without a finish reason or usage: %+v", ev)
			}
			if _, err := st.Next(t.Context()); !errors.Is(err, io.EOF) {
				t.Fatalf("Next after done: got %v, want io.EOF", err)
			}
			return
		case llm.EventText, llm.EventToolCallDelta, llm.EventSkipped:
		default:
			t.Fatalf("unknown event %+v", ev)
		}
	}
	t.Fatal("no end after 10,000 events")
}
