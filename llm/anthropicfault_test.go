package llm_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/anthropic"
	"github.com/voxgate/voxgate/sim"
)

// Every error status of the simulator's Messages surface, and each failure
// inside a 200 stream, maps to its normalized code, retry advice and
// status, whether it comes from Stream (before the first event) or Next.
func TestAnthropicFaults(t *testing.T) {
	t.Parallel()
	runFaults(t, faultSurface{endpoint: sim.EndpointAnthropicMessages, model: "claude-haiku-5-5",
		answer: "A reply long enough for several chunks of text.",
		start: func(t *testing.T, cfg sim.Config, timeout time.Duration) llm.Provider {
			_, url := newRootSim(t, cfg)
			return newAnthropic(t, url, anthropic.Params{Timeout: timeout}, nil)
		}}, []faultCase{
		{name: "429 with retry-after", fault: &sim.Fault{Kind: sim.FaultRateLimit, RetryAfter: 2},
			code: llm.ProviderRateLimit, retryable: true, retryAfter: 2, status: 429, atStream: true},
		{name: "429 without", fault: &sim.Fault{Kind: sim.FaultRateLimit},
			code: llm.ProviderRateLimit, retryable: true, status: 429, atStream: true},
		{name: "529 overloaded", fault: &sim.Fault{Kind: sim.FaultUnavailable, RetryAfter: 7},
			code: llm.ProviderUnavailable, retryable: true, retryAfter: 7, status: 529, atStream: true},
		{name: "500 api_error", fault: &sim.Fault{Kind: sim.FaultServerError},
			code: llm.ProviderUnavailable, retryable: true, status: 500, atStream: true},
		{name: "credit too low", fault: &sim.Fault{Kind: sim.FaultQuota},
			code: llm.ProviderAuth, status: 400, atStream: true},
		{name: "prompt too long", fault: &sim.Fault{Kind: sim.FaultContextLength},
			code: llm.ProviderContextLength, status: 400, atStream: true},
		{name: "reset before headers", fault: &sim.Fault{Kind: sim.FaultReset},
			code: llm.ProviderNetwork, retryable: true, atStream: true},
		{name: "no response", fault: &sim.Fault{Kind: sim.FaultTimeout},
			code: llm.ProviderTimeout, retryable: true, atStream: true},
		{name: "error event first", fault: &sim.Fault{Kind: sim.FaultStreamError},
			code: llm.ProviderUnavailable, retryable: true, atStream: true},
		{name: "error event mid-stream", fault: &sim.Fault{Kind: sim.FaultStreamError, AfterChunks: 4},
			code: llm.ProviderUnavailable, retryable: true},
		{name: "stall mid-stream", fault: &sim.Fault{Kind: sim.FaultTimeout, AfterChunks: 4},
			code: llm.ProviderTimeout, retryable: true},
		{name: "cut mid-stream", fault: &sim.Fault{Kind: sim.FaultCutStream, AfterChunks: 4},
			code: llm.ProviderNetwork, retryable: true},
		{name: "malformed event", fault: &sim.Fault{Kind: sim.FaultMalformedJSON, AfterChunks: 4},
			code: llm.ProviderInvalidResponse},
		{name: "refusal", fault: &sim.Fault{Kind: sim.FaultContentFilter, AfterChunks: 4},
			code: llm.ProviderContentFilter},
	})
}

// A stream that ends in order after message_delta, without message_stop,
// is finished at once with its usage, not taken for a cut answer.
func TestAnthropicNoMessageStop(t *testing.T) {
	s, url := newRootSim(t, sim.Config{Script: sim.Script{Text: "Complete."}})
	a := newAnthropic(t, url, anthropic.Params{}, nil)
	if _, err := s.AddFault(sim.Fault{Endpoint: sim.EndpointAnthropicMessages, Kind: sim.FaultNoDone}); err != nil {
		t.Fatal(err)
	}
	r := drain(t, mustStream(t, a, userRequest("claude-haiku-5-5", "hi")))
	if r.err != nil || r.text != "Complete." || r.done.FinishReason != llm.FinishStop || r.done.Usage.OutputTokens != tok("Complete.") {
		t.Fatalf("result %+v", r)
	}
}

func TestAnthropicBadKey(t *testing.T) {
	_, url := newRootSim(t, sim.Config{Keys: []string{"right"}})
	a := newAnthropic(t, url, anthropic.Params{APIKey: "wrong"}, nil)
	_, err := a.Stream(t.Context(), userRequest("claude-haiku-5-5", "hi"))
	if e := anthErr(t, err); e.Code != llm.ProviderAuth || e.Retryable || e.Status != http.StatusUnauthorized {
		t.Fatalf("got %+v", e)
	}
	_, err = a.Stream(t.Context(), userRequest("", "hi"))
	if e := anthErr(t, err); e.Code != llm.UnknownProviderError || e.Status != 0 {
		t.Fatalf("a request without a model: got %+v", e)
	}
}
