package llm_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
)

// Every error status of the simulator's Messages surface, and each failure
// inside a 200 stream, maps to its normalized code, retry advice and
// status, whether it comes from Stream (before the first event) or Next.
func TestAnthropicFaults(t *testing.T) {
	s, url := anthSim(t, sim.Config{Script: sim.Script{Text: "A reply long enough for several chunks of text."}})
	a := newAnthropic(t, url, llm.AnthropicParams{Timeout: 300 * time.Millisecond}, nil)
	for _, tc := range []struct {
		name       string
		fault      sim.Fault
		code       llm.Code
		retryable  bool
		status     int
		retryAfter int
		inStream   bool // the failure comes from Next, after Stream returned
	}{
		{"429 with retry-after", sim.Fault{Kind: sim.FaultRateLimit, RetryAfter: 2}, llm.ProviderRateLimit, true, 429, 2, false},
		{"429 without", sim.Fault{Kind: sim.FaultRateLimit}, llm.ProviderRateLimit, true, 429, 0, false},
		{"529 overloaded", sim.Fault{Kind: sim.FaultUnavailable, RetryAfter: 7}, llm.ProviderUnavailable, true, 529, 7, false},
		{"500 api_error", sim.Fault{Kind: sim.FaultServerError}, llm.ProviderUnavailable, true, 500, 0, false},
		{"credit too low", sim.Fault{Kind: sim.FaultQuota}, llm.ProviderAuth, false, 400, 0, false},
		{"prompt too long", sim.Fault{Kind: sim.FaultContextLength}, llm.ProviderContextLength, false, 400, 0, false},
		{"reset before headers", sim.Fault{Kind: sim.FaultReset}, llm.ProviderNetwork, true, 0, 0, false},
		{"no response", sim.Fault{Kind: sim.FaultTimeout}, llm.ProviderTimeout, true, 0, 0, false},
		{"error event first", sim.Fault{Kind: sim.FaultStreamError}, llm.ProviderUnavailable, true, 0, 0, false},
		{"error event mid-stream", sim.Fault{Kind: sim.FaultStreamError, AfterChunks: 4}, llm.ProviderUnavailable, true, 0, 0, true},
		{"stall mid-stream", sim.Fault{Kind: sim.FaultTimeout, AfterChunks: 4}, llm.ProviderTimeout, true, 0, 0, true},
		{"cut mid-stream", sim.Fault{Kind: sim.FaultCutStream, AfterChunks: 4}, llm.ProviderNetwork, true, 0, 0, true},
		{"malformed event", sim.Fault{Kind: sim.FaultMalformedJSON, AfterChunks: 4}, llm.ProviderInvalidResponse, false, 0, 0, true},
		{"refusal", sim.Fault{Kind: sim.FaultContentFilter, AfterChunks: 4}, llm.ProviderContentFilter, false, 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.fault.Endpoint = sim.EndpointAnthropicMessages
			if _, err := s.AddFault(tc.fault); err != nil {
				t.Fatal(err)
			}
			st, err := a.Stream(t.Context(), userRequest("claude-haiku-5-5", "hi"))
			if tc.inStream {
				if err != nil {
					t.Fatalf("Stream: %v, want the failure from Next", err)
				}
				r := drain(t, st)
				if r.text == "" && tc.fault.Kind != sim.FaultMalformedJSON {
					t.Errorf("the text before the failure did not come out")
				}
				err = r.err
			}
			e := anthErr(t, err)
			if e.Code != tc.code || e.Retryable != tc.retryable || e.Status != tc.status || e.RetryAfter != tc.retryAfter {
				t.Fatalf("got %s retryable=%v status=%d retry-after=%d (%v), want %s %v %d %d",
					e.Code, e.Retryable, e.Status, e.RetryAfter, e.Err, tc.code, tc.retryable, tc.status, tc.retryAfter)
			}
		})
	}
}

// A stream that ends in order after message_delta, without message_stop,
// is finished at once with its usage, not taken for a cut answer.
func TestAnthropicNoMessageStop(t *testing.T) {
	s, url := anthSim(t, sim.Config{Script: sim.Script{Text: "Complete."}})
	a := newAnthropic(t, url, llm.AnthropicParams{}, nil)
	if _, err := s.AddFault(sim.Fault{Endpoint: sim.EndpointAnthropicMessages, Kind: sim.FaultNoDone}); err != nil {
		t.Fatal(err)
	}
	r := drain(t, mustStream(t, a, userRequest("claude-haiku-5-5", "hi")))
	if r.err != nil || r.text != "Complete." || r.done.FinishReason != llm.FinishStop || r.done.Usage.OutputTokens != tok("Complete.") {
		t.Fatalf("result %+v", r)
	}
}

func TestAnthropicBadKey(t *testing.T) {
	_, url := anthSim(t, sim.Config{Keys: []string{"right"}})
	a := newAnthropic(t, url, llm.AnthropicParams{APIKey: "wrong"}, nil)
	_, err := a.Stream(t.Context(), userRequest("claude-haiku-5-5", "hi"))
	if e := anthErr(t, err); e.Code != llm.ProviderAuth || e.Retryable || e.Status != http.StatusUnauthorized {
		t.Fatalf("got %+v", e)
	}
	_, err = a.Stream(t.Context(), userRequest("", "hi"))
	if e := anthErr(t, err); e.Code != llm.UnknownProviderError || e.Status != 0 {
		t.Fatalf("a request without a model: got %+v", e)
	}
}
