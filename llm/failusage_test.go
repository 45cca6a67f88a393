package llm_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/anthropic"
	"github.com/voxgate/voxgate/sim"
)

// A failure the provider reported usage for carries that usage in
// Error.Usage (so it can be billed, never as a completion); one it
// reported none for carries nil. One test per adapter.

// TestOpenAIContentFilterUsage: finish_reason content_filter, then the
// usage chunk: the refusal carries that usage and the model.
func TestOpenAIContentFilterUsage(t *testing.T) {
	t.Parallel()
	url := stubUpstream(t, chunk(`{"role":"assistant","content":"Some of it"}`, ""),
		chunk(`{}`, "content_filter"), usageChunk, "[DONE]")
	st, err := newOpenAI(t, url, 0, nil).Stream(t.Context(), userRequest("gpt-4o", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	e := asError(t, drain(t, st).err)
	if e.Code != llm.ProviderContentFilter {
		t.Fatalf("got %s, want PROVIDER_CONTENT_FILTER", e.Code)
	}
	if u := e.Usage; u == nil || *u != (llm.Usage{Model: "stub-1", InputTokens: 5, OutputTokens: 2}) {
		t.Errorf("usage: got %+v, want the usage chunk's (5 in, 2 out, stub-1)", u)
	}
	// A failure without usage (an error object in the stream) carries none.
	url = stubUpstream(t, chunk(`{"role":"assistant","content":"x"}`, ""),
		`{"error":{"message":"down","type":"server_error","param":null,"code":null}}`)
	st, err = newOpenAI(t, url, 0, nil).Stream(t.Context(), userRequest("gpt-4o", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if e := asError(t, drain(t, st).err); e.Usage != nil {
		t.Errorf("a failure the provider reported no usage for: got usage %+v", e.Usage)
	}
}

// TestAnthropicRefusalUsage: stop_reason refusal comes in message_delta
// with the call's cumulative usage, which the refusal carries: the same
// input classes as an answered call of the same prompt.
func TestAnthropicRefusalUsage(t *testing.T) {
	s, url := newRootSim(t, sim.Config{Script: sim.Script{Text: "A reply long enough for several chunks of text."}})
	a := newAnthropic(t, url, anthropic.Params{NoPromptCache: true}, nil)
	req := userRequest("claude-haiku-5-5", "hi")
	answered := drain(t, mustStream(t, a, req))
	if answered.err != nil {
		t.Fatal(answered.err)
	}
	if _, err := s.AddFault(sim.Fault{Endpoint: sim.EndpointAnthropicMessages, Kind: sim.FaultContentFilter, AfterChunks: 4}); err != nil {
		t.Fatal(err)
	}
	r := drain(t, mustStream(t, a, req))
	e := anthErr(t, r.err)
	if e.Code != llm.ProviderContentFilter {
		t.Fatalf("got %s, want PROVIDER_CONTENT_FILTER", e.Code)
	}
	want := answered.done.Usage
	if u := e.Usage; u == nil || u.Model != want.Model || u.InputTokens != want.InputTokens || u.InputTokens == 0 ||
		u.OutputTokens > want.OutputTokens {
		t.Errorf("usage: got %+v, want the answered call's input (%+v) and no more output", u, want)
	}
	// An overloaded_error event mid-stream reports no usage for the call.
	if _, err := s.AddFault(sim.Fault{Endpoint: sim.EndpointAnthropicMessages, Kind: sim.FaultStreamError, AfterChunks: 4}); err != nil {
		t.Fatal(err)
	}
	if e := anthErr(t, drain(t, mustStream(t, a, req)).err); e.Usage != nil {
		t.Errorf("an in-stream error: got usage %+v, want none", e.Usage)
	}
}

// TestGeminiSafetyUsage: a prompt blocked before the answer and an answer
// stopped with finishReason SAFETY both carry the usageMetadata of their
// chunk: the prompt's count as an answered call of the same prompt has it.
func TestGeminiSafetyUsage(t *testing.T) {
	t.Parallel()
	const answer = "one two three four five six seven"
	s, url := newRootSim(t, sim.Config{Script: sim.Script{Text: answer}})
	g := newGemini(t, url, 0, nil)
	req := userRequest(geminiModel, "hello")
	st, err := g.Stream(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	answered := drain(t, st)
	if answered.err != nil {
		t.Fatal(answered.err)
	}
	want := answered.done.Usage
	for _, c := range []struct {
		name  string
		after int
	}{{"prompt blocked", 0}, {"answer stopped", 2}} {
		if _, err := s.AddFault(sim.Fault{Endpoint: sim.EndpointGeminiStream, Kind: sim.FaultContentFilter, AfterChunks: c.after}); err != nil {
			t.Fatal(err)
		}
		st, err := g.Stream(t.Context(), req)
		if c.after > 0 {
			if err != nil {
				t.Fatalf("%s: Stream: %v", c.name, err)
			}
			err = drain(t, st).err
		}
		e := geminiError(t, err)
		if e.Code != llm.ProviderContentFilter {
			t.Fatalf("%s: got %s, want PROVIDER_CONTENT_FILTER", c.name, e.Code)
		}
		if u := e.Usage; u == nil || u.Model != want.Model || u.InputTokens != want.InputTokens || u.InputTokens == 0 {
			t.Errorf("%s: usage %+v, want the prompt's count as in %+v", c.name, u, want)
		}
	}
	// A stream cut before its end reports no usage for a failure.
	if _, err := s.AddFault(sim.Fault{Endpoint: sim.EndpointGeminiStream, Kind: sim.FaultStreamError, AfterChunks: 2}); err != nil {
		t.Fatal(err)
	}
	st, err = g.Stream(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if e := geminiError(t, drain(t, st).err); e.Usage != nil {
		t.Errorf("an in-stream error: got usage %+v, want none", e.Usage)
	}
}

// A stream cut after the provider reported the call's usage (its usage
// chunk, message_delta, the chunk with the finish reason) but before its
// end carries that usage: the provider bills the call as it reported it.
// One case per adapter, each against an answered call of the same prompt.
func TestCutAfterUsageCarriesIt(t *testing.T) {
	t.Parallel()
	const answer = "Oats with berries make a good breakfast."
	cut := sim.Fault{Kind: sim.FaultCutStream, AfterChunks: 1000} // after every chunk: the usage is out
	t.Run("openai", func(t *testing.T) {
		t.Parallel()
		s, url := newSim(t, sim.Config{Script: sim.Script{Text: answer}})
		o := newOpenAI(t, url, 0, nil)
		req := userRequest("gpt-4o", "hi")
		answered := drain(t, mustStream(t, o, req))
		if answered.err != nil {
			t.Fatal(answered.err)
		}
		f := cut
		f.Endpoint = sim.EndpointChatCompletions
		if _, err := s.AddFault(f); err != nil {
			t.Fatal(err)
		}
		r := drain(t, mustStream(t, o, req))
		e := asError(t, r.err)
		if e.Code != llm.ProviderNetwork || r.text != answer {
			t.Fatalf("got %s after %q, want PROVIDER_NETWORK after the whole answer", e.Code, r.text)
		}
		if u := e.Usage; u == nil || *u != *answered.done.Usage {
			t.Errorf("usage %+v, want the answered call's %+v", u, answered.done.Usage)
		}
	})
	t.Run("gemini", func(t *testing.T) {
		t.Parallel()
		s, url := newRootSim(t, sim.Config{Script: sim.Script{Text: answer}})
		g := newGemini(t, url, 0, nil)
		req := userRequest(geminiModel, "hi")
		answered := drain(t, mustStream(t, g, req))
		if answered.err != nil {
			t.Fatal(answered.err)
		}
		f := cut
		f.Endpoint = sim.EndpointGeminiStream
		if _, err := s.AddFault(f); err != nil {
			t.Fatal(err)
		}
		e := geminiError(t, drain(t, mustStream(t, g, req)).err)
		if e.Code != llm.ProviderNetwork {
			t.Fatalf("got %s, want PROVIDER_NETWORK", e.Code)
		}
		if u := e.Usage; u == nil || *u != *answered.done.Usage {
			t.Errorf("usage %+v, want the answered call's %+v", u, answered.done.Usage)
		}
	})
	t.Run("anthropic", func(t *testing.T) {
		t.Parallel()
		// The simulator cuts between events it counts; message_delta then
		// a cut before message_stop comes from a stub.
		body := anthStart +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Oats.\"}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":4}}\n\n"
		for _, tc := range []struct {
			name  string
			body  string
			usage *llm.Usage
		}{
			{"after message_delta", body, &llm.Usage{Model: "stub", InputTokens: 3, OutputTokens: 4}},
			// message_start's counts are the input's only: no usage of the call.
			{"before message_delta", body[:strings.Index(body, "event: message_delta")], nil},
		} {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, tc.body)
				http.NewResponseController(w).Flush()
				panic(http.ErrAbortHandler) // the connection drops: no message_stop
			}))
			t.Cleanup(ts.Close)
			a := newAnthropic(t, ts.URL, anthropic.Params{NoPromptCache: true}, nil)
			e := anthErr(t, drain(t, mustStream(t, a, userRequest("stub", "hi"))).err)
			if e.Code != llm.ProviderNetwork {
				t.Fatalf("%s: got %s, want PROVIDER_NETWORK", tc.name, e.Code)
			}
			if (e.Usage == nil) != (tc.usage == nil) || (e.Usage != nil && *e.Usage != *tc.usage) {
				t.Errorf("%s: usage %+v, want %+v", tc.name, e.Usage, tc.usage)
			}
		}
	})
}

// A stream that stalls after the usage came, until the router's own
// timeout between chunks ends it, is a failure after commit whose
// answering attempt carries the usage: the adapter saw only its context
// end, and the router takes the usage the adapter had read.
func TestRouterStallAfterUsage(t *testing.T) {
	t.Parallel()
	// The harness's timeout between chunks (2 s) is the router's, far
	// below the adapter's own (10 s): the router's deadline ends the call.
	h := newHarness(t)
	req := userRequest("chat", "hi")
	answered := h.call(t, req)
	if answered.err != nil || answered.done == nil {
		t.Fatal(answered.err)
	}
	h.primary.fault(t, sim.Fault{Kind: sim.FaultTimeout, Fraction: 1, AfterChunks: 1000})
	r := h.call(t, req)
	if r.routeErr == nil || !r.routeErr.Committed || r.text != routedAnswer {
		t.Fatalf("got %v after %q, want a failure after the whole answer", r.err, r.text)
	}
	a, ok := r.trace().Answered()
	if !ok || a.Outcome != string(llm.ProviderTimeout) || a.Usage == nil || *a.Usage != *answered.done.Usage {
		t.Errorf("answering attempt %+v (usage %+v), want PROVIDER_TIMEOUT with the answered call's usage %+v",
			a, a.Usage, answered.done.Usage)
	}
}
