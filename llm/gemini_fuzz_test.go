package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/llm"
)

// FuzzGeminiStream feeds arbitrary streamGenerateContent bodies through
// genai to the adapter. Whatever arrives, Stream and Next end in EventDone
// then io.EOF, or in an *llm.Error: never a panic or another error type; a
// done stream has its finish reason and usage; every whole call has a
// gateway id, a name, object arguments, and was announced by a delta.
func FuzzGeminiStream(f *testing.F) {
	sse := func(events ...string) string {
		var b strings.Builder
		for _, e := range events {
			b.WriteString("data: " + e + "\r\n\r\n")
		}
		return b.String()
	}
	usage := `"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":2,"thoughtsTokenCount":3,"cachedContentTokenCount":1}`
	f.Add(sse(`{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]}}],`+usage+`}`,
		`{"candidates":[{"content":{"role":"model","parts":[{"text":" there"}]},"finishReason":"STOP"}],`+usage+`,"modelVersion":"gemini-3.8-flash"}`))
	f.Add(sse(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":{"x":1}},"thoughtSignature":"c2ln"},{"functionCall":{"name":"g"}}]},"finishReason":"STOP"}],` + usage + `}`))
	f.Add(sse(`{"promptFeedback":{"blockReason":"SAFETY"},` + usage + `}`))
	f.Add(sse(`{"candidates":[{"finishReason":"SAFETY"}]}`))
	f.Add(sse(`{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}`))
	f.Add(sse(`{"candidates":[{"content":{"parts":[{"text":"x"}]}}]}`, `{"candidates":`))
	f.Add("event: x\n\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, body string) {
		g := newGemini(t, "http://gemini.invalid", time.Second, cannedBody(body))
		ctx := context.Background()
		st, err := g.Stream(ctx, userRequest("gemini-3.8-flash", "hi"))
		if err != nil {
			checkFuzzError(t, err)
			return
		}
		defer st.Close()
		announced := map[string]bool{}
		for {
			ev, err := st.Next(ctx)
			if errors.Is(err, io.EOF) {
				t.Fatal("io.EOF before EventDone")
			}
			if err != nil {
				checkFuzzError(t, err)
				return
			}
			switch ev.Kind {
			case llm.EventToolCallDelta:
				announced[ev.ToolCall.ID] = true
			case llm.EventToolCall:
				tc := ev.ToolCall
				var obj map[string]any
				if !announced[tc.ID] || tc.Name == "" || !strings.HasPrefix(tc.ID, "call_") || json.Unmarshal([]byte(tc.Arguments), &obj) != nil || obj == nil {
					t.Fatalf("call %+v: want an announced gateway id, a name and object arguments", tc)
				}
			case llm.EventDone:
				if ev.Usage == nil || ev.FinishReason == "" {
					t.Fatalf("done %+v without usage or finish reason", ev)
				}
				if _, err := st.Next(ctx); !errors.Is(err, io.EOF) {
					t.Fatalf("after EventDone: %v, want io.EOF", err)
				}
				return
			}
		}
	})
}

func checkFuzzError(t *testing.T, err error) {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v (%T), want an *llm.Error", err, err)
	}
}
