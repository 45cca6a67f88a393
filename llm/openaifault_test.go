package llm_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/openai"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestOpenAIFaults injects every chat fault kind and checks the code, the
// retry advice, the status, and whether it comes from Stream (before the
// first event, where the router may fail over) or from Next (after text
// went out).
func TestOpenAIFaults(t *testing.T) {
	t.Parallel()
	runFaults(t, faultSurface{endpoint: sim.EndpointChatCompletions, model: "gpt-4o-mini", answer: answer,
		start: func(t *testing.T, cfg sim.Config, timeout time.Duration) llm.Provider {
			_, url := newSim(t, cfg)
			return newOpenAI(t, url, timeout, nil)
		}}, []faultCase{
		{name: "rate limit", fault: &sim.Fault{Kind: sim.FaultRateLimit, RetryAfter: 7},
			code: llm.ProviderRateLimit, retryable: true, retryAfter: 7, status: 429, atStream: true},
		{name: "rate limit without advice", fault: &sim.Fault{Kind: sim.FaultRateLimit},
			code: llm.ProviderRateLimit, retryable: true, status: 429, atStream: true},
		{name: "insufficient quota", fault: &sim.Fault{Kind: sim.FaultQuota},
			code: llm.ProviderAuth, status: 429, atStream: true},
		{name: "server error", fault: &sim.Fault{Kind: sim.FaultServerError},
			code: llm.ProviderUnavailable, retryable: true, status: 500, atStream: true},
		{name: "unavailable", fault: &sim.Fault{Kind: sim.FaultUnavailable, RetryAfter: 3},
			code: llm.ProviderUnavailable, retryable: true, retryAfter: 3, status: 503, atStream: true},
		{name: "timeout before answering", fault: &sim.Fault{Kind: sim.FaultTimeout},
			code: llm.ProviderTimeout, retryable: true, atStream: true},
		{name: "stream stalls", fault: &sim.Fault{Kind: sim.FaultTimeout, AfterChunks: 3},
			code: llm.ProviderTimeout, retryable: true},
		{name: "malformed first chunk", fault: &sim.Fault{Kind: sim.FaultMalformedJSON},
			code: llm.ProviderInvalidResponse, atStream: true},
		{name: "malformed chunk", fault: &sim.Fault{Kind: sim.FaultMalformedJSON, AfterChunks: 3},
			code: llm.ProviderInvalidResponse},
		{name: "cut before the first chunk", fault: &sim.Fault{Kind: sim.FaultCutStream},
			code: llm.ProviderNetwork, retryable: true, atStream: true},
		{name: "cut stream", fault: &sim.Fault{Kind: sim.FaultCutStream, AfterChunks: 3},
			code: llm.ProviderNetwork, retryable: true},
		{name: "error object in the stream", fault: &sim.Fault{Kind: sim.FaultStreamError, AfterChunks: 3},
			code: llm.ProviderUnavailable, retryable: true},
		{name: "slow drip past the timeout", fault: &sim.Fault{Kind: sim.FaultSlowDrip, IntervalMS: 1000},
			code: llm.ProviderTimeout, retryable: true, atStream: true},
		{name: "unknown key", cfg: sim.Config{Keys: []string{"sk-other"}},
			code: llm.ProviderAuth, status: 401, atStream: true},
		{name: "unknown model", cfg: sim.Config{Models: []string{"gpt-4o"}},
			code: llm.UnknownProviderError, status: 404, atStream: true},
		{name: "refused parameter", req: func(r llm.Request) llm.Request {
			r.Tools = []llm.ToolSpec{{Name: "not a valid name!"}}
			return r
		}, code: llm.UnknownProviderError, status: 400, atStream: true},
	})
}

// TestOpenAISlowDripWithinTimeout: chunks slower than usual but each within
// the timeout make a whole answer, however long it takes in total. A chunk
// every 100 ms against a 1 s timeout leaves each one 900 ms for a loaded
// machine, and the dozen words take longer than the timeout in all.
func TestOpenAISlowDripWithinTimeout(t *testing.T) {
	t.Parallel()
	const text, timeout = "one two three four five six seven eight nine ten eleven twelve", time.Second
	_, url := newSim(t, sim.Config{Script: sim.Script{Text: text},
		Faults: []sim.Fault{{Endpoint: sim.EndpointChatCompletions, Kind: sim.FaultSlowDrip, IntervalMS: 100}}})
	st, err := newOpenAI(t, url, timeout, nil).Stream(t.Context(), userRequest("gpt-4o", "count"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r := drain(t, st)
	if r.err != nil || r.text != text {
		t.Fatalf("got %q, %v; want the whole answer", r.text, r.err)
	}
	if took := time.Since(start); took < timeout {
		t.Errorf("the drip took %s in all, want longer than the per-event timeout to prove it is per event", took)
	}
}

// TestOpenAISlowCallerIsNotATimeout: the timeout counts only time spent
// waiting on the provider, not time the caller takes between Next calls.
func TestOpenAISlowCallerIsNotATimeout(t *testing.T) {
	t.Parallel()
	_, url := newSim(t, sim.Config{Script: sim.Script{Text: answer}})
	// The 50 ms are between chunks only: the dial and the first chunk are
	// given testkit.Wait, which a loaded machine can need.
	p, err := openai.New(openai.Params{BaseURL: url, APIKey: simtest.TestKey, Timeout: 50 * time.Millisecond,
		FirstChunk: map[string]time.Duration{"gpt-4o": testkit.Wait}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.Stream(t.Context(), userRequest("gpt-4o", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// measurement window: the caller dawdles three times the 50 ms timeout
	// before its first Next; the test is that this time is not counted.
	time.Sleep(150 * time.Millisecond)
	if r := drain(t, st); r.err != nil || r.text != answer {
		t.Fatalf("got %q, %v; want the whole answer", r.text, r.err)
	}
}

func TestOpenAIConnectionRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	_, err = newOpenAI(t, "http://"+addr+"/v1", 0, nil).Stream(t.Context(), userRequest("gpt-4o", "hi"))
	if e := asError(t, err); e.Code != llm.ProviderNetwork || !e.Retryable {
		t.Errorf("got %s retryable %v, want PROVIDER_NETWORK, retryable (%v)", e.Code, e.Retryable, e.Err)
	}
}

// TestOpenAIConnectionDropped: a server that reads the request and drops
// the connection without answering, with a reset or a plain close. Either
// way nothing came back: a network failure, not a malformed answer.
func TestOpenAIConnectionDropped(t *testing.T) {
	t.Parallel()
	for _, reset := range []bool{true, false} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				buf := make([]byte, 4096)
				_, _ = c.Read(buf)
				if reset {
					_ = c.(*net.TCPConn).SetLinger(0)
				}
				_ = c.Close()
			}
		}()
		_, err = newOpenAI(t, "http://"+ln.Addr().String()+"/v1", 0, nil).Stream(t.Context(), userRequest("gpt-4o", "hi"))
		if e := asError(t, err); e.Code != llm.ProviderNetwork || !e.Retryable {
			t.Errorf("reset %v: got %s retryable %v, want PROVIDER_NETWORK, retryable (%v)", reset, e.Code, e.Retryable, e.Err)
		}
	}
}

// TestOpenAIStubbedEndings covers answers the simulator does not give.
func TestOpenAIStubbedEndings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		events []string
		text   string
		code   llm.Code
	}{
		{"content filter", []string{chunk(`{"role":"assistant","content":""}`, ""), chunk(`{"content":"Some of it"}`, ""),
			chunk(`{}`, "content_filter"), usageChunk, "[DONE]"}, "Some of it", llm.ProviderContentFilter},
		{"no finish reason", []string{chunk(`{"role":"assistant","content":"Half"}`, ""), usageChunk, "[DONE]"},
			"Half", llm.ProviderInvalidResponse},
		{"no usage", []string{chunk(`{"role":"assistant","content":"All"}`, ""), chunk(`{}`, "stop"), "[DONE]"},
			"All", llm.ProviderInvalidResponse},
		{"a tool call without a name", []string{chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"c","type":"function","function":{"arguments":"{}"}}]}`, ""),
			chunk(`{}`, "tool_calls"), usageChunk, "[DONE]"}, "", llm.ProviderInvalidResponse},
		{"an error object by its type", []string{chunk(`{"role":"assistant","content":"x"}`, ""),
			`{"error":{"message":"quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`}, "x", llm.ProviderAuth},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st, err := newOpenAI(t, stubUpstream(t, c.events...), 0, nil).Stream(t.Context(), userRequest("gpt-4o", "hi"))
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			r := drain(t, st)
			if r.text != c.text {
				t.Errorf("text: got %q, want %q", r.text, c.text)
			}
			if e := asError(t, r.err); e.Code != c.code || e.Retryable {
				t.Errorf("got %s retryable %v, want %s, not retryable (%v)", e.Code, e.Retryable, c.code, e.Err)
			}
		})
	}
}

// TestOpenAIStubbedSuccess: a tool call split oddly (the id late, the
// arguments in pieces, two calls interleaved) is put together by index.
func TestOpenAIStubbedSuccess(t *testing.T) {
	t.Parallel()
	url := stubUpstream(t,
		chunk(`{"role":"assistant","tool_calls":[{"index":1,"type":"function","function":{"name":"b","arguments":"{\"y\""}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"a","arguments":""}}]}`, ""),
		chunk(`{"tool_calls":[{"index":1,"id":"call_b","function":{"arguments":":2}"}},{"index":0,"function":{"arguments":"{}"}}]}`, ""),
		chunk(`{}`, "tool_calls"), usageChunk, "[DONE]")
	st, err := newOpenAI(t, url, 0, nil).Stream(t.Context(), userRequest("gpt-4o", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	r := drain(t, st)
	if r.err != nil {
		t.Fatal(r.err)
	}
	want := []llm.ToolCall{{Name: "a", Arguments: "{}"}, {Name: "b", Arguments: `{"y":2}`}}
	if len(r.calls) != 2 {
		t.Fatalf("calls: got %+v, want %+v", r.calls, want)
	}
	for i, c := range r.calls {
		// The gateway mints the ids; the provider's never reach the caller.
		if c.Name != want[i].Name || c.Arguments != want[i].Arguments ||
			c.ID == "call_a" || c.ID == "call_b" || !strings.HasPrefix(c.ID, "call_") || len(c.ID) > 40 {
			t.Errorf("call %d: got %+v, want %s(%s) under a minted id", i, c, want[i].Name, want[i].Arguments)
		}
	}
	if r.calls[0].ID == r.calls[1].ID {
		t.Errorf("two calls share the id %s", r.calls[0].ID)
	}
	if u := r.done.Usage; u.Model != "stub-1" || u.InputTokens != 5 || u.OutputTokens != 2 {
		t.Errorf("usage: got %+v", u)
	}
}

// TestOpenAICallerCancelBeforeFirstEvent: a caller that gives up while
// Stream waits gets context.Canceled, and the provider is told.
func TestOpenAICallerCancelBeforeFirstEvent(t *testing.T) {
	t.Parallel()
	s, url := newSim(t, sim.Config{Faults: []sim.Fault{{Endpoint: sim.EndpointChatCompletions, Kind: sim.FaultTimeout}}})
	ctx, cancel := context.WithCancel(t.Context())
	streamed := make(chan error, 1)
	go func() {
		_, err := newOpenAI(t, url, 10*time.Second, nil).Stream(ctx, userRequest("gpt-4o", "hi"))
		streamed <- err
	}()
	// Give up once the request is in the simulator's hands.
	testkit.Eventually(t, t.Context(), "the request in flight at the simulator", func() bool {
		return s.Stats().Endpoints[sim.EndpointChatCompletions].InFlight == 1
	})
	cancel()
	err := <-streamed
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Stream: got %v, want context.Canceled", err)
	}
	var e *llm.Error
	if errors.As(err, &e) {
		t.Errorf("got an *llm.Error %v for the caller's own cancel", e)
	}
	testkit.WaitCancelled(t, s, sim.EndpointChatCompletions)
}
