package llm_test

import (
	"testing"

	"github.com/voxgate/voxgate/llm"
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
	a := newAnthropic(t, url, llm.AnthropicParams{NoPromptCache: true}, nil)
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
