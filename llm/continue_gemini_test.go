package llm_test

import (
	"errors"
	"testing"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
)

// A Gemini target is never asked to continue, even when a router built
// without config declares it prefill: generateContent would answer anew
// and repeat what the caller has. The cut stays the primary's error, and
// Gemini sees no request.
func TestContinueNeverOnGemini(t *testing.T) {
	t.Parallel()
	primary := newRecorded(t, sim.Config{Script: sim.Script{Text: sixtyTokens}})
	fallback := newRecorded(t, sim.Config{Script: sim.Script{Text: sixtyTokens}})
	primary.fault(t, sim.Fault{Endpoint: sim.EndpointChatCompletions, Kind: sim.FaultCutStream, AfterChunks: 41})
	gem := contTarget{target: llm.Target{Provider: "gem", Model: geminiModel, FirstContent: testFirstContent, Timeout: testFirstContent,
		Continue: llm.ContinuePrefill}, provider: newGemini(t, fallback.url, 0, nil)}
	r, _ := contRouter(t, openaiTarget(t, "primary", "gpt-4o", primary, ""), gem)
	res, _ := routedRead(t, r, ask())
	var re *llm.RouteError
	if !errors.As(res.err, &re) || re.Outcome != llm.RouteCut {
		t.Fatalf("got %q, %v; want the primary's cut", res.text, res.err)
	}
	if n := len(fallback.requests()); n != 0 {
		t.Errorf("gemini was asked %d times", n)
	}
}
