package anthropic

import (
	"bytes"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/adapt"
)

// FuzzAnthropicEvents feeds arbitrary event data, one JSON event per line,
// through the adapter's event handling, and arbitrary error bodies through
// its classifier: no panic; every failure an *llm.Error of a known code; a
// delta names a call that its first delta opened; llm.EventDone comes once,
// last, with usage whose cache classes are parts of its input.
func FuzzAnthropicEvents(f *testing.F) {
	for _, s := range []string{
		`{"type":"message_start","message":{"model":"m","usage":{"input_tokens":3,"cache_read_input_tokens":5,"cache_creation_input_tokens":2,"output_tokens":1}}}
{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}
{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}
{"type":"content_block_stop","index":0}
{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}
{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}
{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"1}"}}
{"type":"content_block_stop","index":1}
{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}
{"type":"message_stop"}`,
		`{"type":"message_start","message":{}}
{"type":"message_delta","delta":{"stop_reason":"refusal"},"usage":{"input_tokens":1,"output_tokens":0}}`,
		`{"type":"content_block_delta","index":7,"delta":{"type":"input_json_delta","partial_json":"x"}}`,
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 300000 tokens > 200000 maximum"}}`,
		`not json`,
	} {
		f.Add([]byte(s), 200)
		f.Add([]byte(s), 529)
	}
	known := map[llm.Code]bool{llm.ProviderTimeout: true, llm.ProviderRateLimit: true, llm.ProviderAuth: true, llm.ProviderUnavailable: true,
		llm.ProviderInvalidResponse: true, llm.ProviderContentFilter: true, llm.ProviderContextLength: true, llm.ProviderNetwork: true,
		llm.UnknownProviderError: true}
	f.Fuzz(func(t *testing.T, data []byte, status int) {
		// The error body, as an HTTP refusal (status) or an in-stream event (200).
		apiErr := &anthropic.Error{StatusCode: status, Response: &http.Response{StatusCode: status, Header: http.Header{"Retry-After": {"3"}}}}
		if apiErr.UnmarshalJSON(data) == nil {
			e := classifyAnthropic("p", apiErr, time.Unix(0, 0))
			if !known[e.Code] || e.RetryAfter < 0 || (!e.Retryable && e.RetryAfter != 0) {
				t.Fatalf("error %q status %d: %+v", data, status, e)
			}
		}
		s := &anthDecoder{Emitter: &adapt.Emitter{Provider: "p"}, calls: map[int64]*anthCall{}}
		opened := map[int]bool{}
		done := false
		for line := range bytes.Lines(data) {
			var ev anthropic.MessageStreamEventUnion
			if ev.UnmarshalJSON(line) != nil {
				continue
			}
			err := s.event(ev)
			for _, out := range s.Emitted() {
				if done {
					t.Fatalf("event %+v after EventDone", out)
				}
				switch out.Kind {
				case llm.EventToolCallDelta:
					if out.ToolCall.ID != "" {
						opened[out.Index] = true
					} else if !opened[out.Index] {
						t.Fatalf("delta for call %d before its first", out.Index)
					}
				case llm.EventDone:
					done = true
					if u := out.Usage; u.CachedInputTokens < 0 || u.CacheWriteInputTokens < 0 || u.OutputTokens < 0 ||
						u.CachedInputTokens+u.CacheWriteInputTokens > u.InputTokens {
						t.Fatalf("usage %+v: cache classes exceed input", u)
					}
				}
			}
			if err != nil {
				var e *llm.Error
				if !errors.As(err, &e) || !known[e.Code] {
					t.Fatalf("take: %v", err)
				}
				return
			}
		}
	})
}
