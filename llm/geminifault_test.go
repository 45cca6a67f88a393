package llm_test

import (
	"testing"
	"time"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
)

// TestGeminiFaults maps every failure the simulator's Gemini surface
// serves to its code, retry advice and status (the table in docs/llm.md).
func TestGeminiFaults(t *testing.T) {
	t.Parallel()
	runFaults(t, faultSurface{endpoint: sim.EndpointGeminiStream, model: geminiModel, answer: "one two three four five six seven",
		start: func(t *testing.T, cfg sim.Config, timeout time.Duration) llm.Provider {
			_, url := newRootSim(t, cfg)
			return newGemini(t, url, timeout, nil)
		}}, []faultCase{
		{name: "rate limit with RetryInfo", fault: &sim.Fault{Kind: sim.FaultRateLimit, RetryAfter: 7},
			code: llm.ProviderRateLimit, retryable: true, retryAfter: 7, status: 429, atStream: true},
		{name: "rate limit without advice", fault: &sim.Fault{Kind: sim.FaultRateLimit},
			code: llm.ProviderRateLimit, retryable: true, status: 429, atStream: true},
		{name: "internal", fault: &sim.Fault{Kind: sim.FaultServerError},
			code: llm.ProviderUnavailable, retryable: true, status: 500, atStream: true},
		{name: "unavailable", fault: &sim.Fault{Kind: sim.FaultUnavailable, RetryAfter: 3},
			code: llm.ProviderUnavailable, retryable: true, retryAfter: 3, status: 503, atStream: true},
		{name: "context length", fault: &sim.Fault{Kind: sim.FaultContextLength},
			code: llm.ProviderContextLength, status: 400, atStream: true},
		{name: "prompt blocked", fault: &sim.Fault{Kind: sim.FaultContentFilter},
			code: llm.ProviderContentFilter, atStream: true},
		{name: "answer stopped for safety", fault: &sim.Fault{Kind: sim.FaultContentFilter, AfterChunks: 2},
			code: llm.ProviderContentFilter},
		{name: "reset before headers", fault: &sim.Fault{Kind: sim.FaultReset},
			code: llm.ProviderNetwork, retryable: true, atStream: true},
		{name: "no answer", fault: &sim.Fault{Kind: sim.FaultTimeout},
			code: llm.ProviderTimeout, retryable: true, atStream: true},
		{name: "stream stalls", fault: &sim.Fault{Kind: sim.FaultTimeout, AfterChunks: 2},
			code: llm.ProviderTimeout, retryable: true},
		{name: "malformed first chunk", fault: &sim.Fault{Kind: sim.FaultMalformedJSON},
			code: llm.ProviderInvalidResponse, atStream: true},
		{name: "malformed chunk", fault: &sim.Fault{Kind: sim.FaultMalformedJSON, AfterChunks: 2},
			code: llm.ProviderInvalidResponse},
		{name: "cut before the first chunk", fault: &sim.Fault{Kind: sim.FaultCutStream},
			code: llm.ProviderNetwork, retryable: true, atStream: true},
		{name: "cut stream", fault: &sim.Fault{Kind: sim.FaultCutStream, AfterChunks: 2},
			code: llm.ProviderNetwork, retryable: true},
		{name: "error event first", fault: &sim.Fault{Kind: sim.FaultStreamError},
			code: llm.ProviderUnavailable, retryable: true, atStream: true},
		{name: "error event in the stream", fault: &sim.Fault{Kind: sim.FaultStreamError, AfterChunks: 2},
			code: llm.ProviderUnavailable, retryable: true},
		{name: "ends without a finish reason", fault: &sim.Fault{Kind: sim.FaultNoDone},
			code: llm.ProviderInvalidResponse},
		{name: "slow drip past the timeout", fault: &sim.Fault{Kind: sim.FaultSlowDrip, IntervalMS: 1000},
			code: llm.ProviderTimeout, retryable: true, atStream: true},
		{name: "unknown key", cfg: sim.Config{Keys: []string{"other"}},
			code: llm.ProviderAuth, status: 400, atStream: true},
		{name: "unknown model", cfg: sim.Config{Models: []string{"gemini-3.5-flash-lite"}},
			code: llm.UnknownProviderError, status: 404, atStream: true},
	})
}

// TestGeminiCallDroppedWhenStreamFails: a call announced by its delta but
// followed by a failure before the finish reason is never released as a
// whole call.
func TestGeminiCallDroppedWhenStreamFails(t *testing.T) {
	t.Parallel()
	two := sim.Script{Rules: []sim.Rule{{When: sim.When{Contains: []string{"recipe"}}, Reply: sim.Reply{ToolCalls: []sim.ScriptCall{
		{Name: "find_recipe", Arguments: map[string]any{"q": "leek"}}, {Name: "find_recipe", Arguments: map[string]any{"q": "pea"}},
	}}}}}
	cfg := sim.Config{Script: two,
		Faults: []sim.Fault{{Endpoint: sim.EndpointGeminiStream, Kind: sim.FaultCutStream, AfterChunks: 1}}}
	_, url := newRootSim(t, cfg)
	req := userRequest(geminiModel, "a recipe")
	req.Tools = []llm.ToolSpec{geminiRecipeTool}
	st, err := newGemini(t, url, 0, nil).Stream(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	r := drain(t, st)
	if len(r.callDeltas) != 1 || len(r.calls) != 0 || geminiError(t, r.err).Code != llm.ProviderNetwork {
		t.Errorf("got %d deltas, %d calls, %v: want the delta, no call, a network failure", len(r.callDeltas), len(r.calls), r.err)
	}
}
