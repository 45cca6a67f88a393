package llm_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
)

// TestRouterOutcomes: what a route that found no answer means for the
// caller (DESIGN §11's outcome table), and the router's own outcomes.
func TestRouterOutcomes(t *testing.T) {
	t.Parallel()
	p, f := "primary/"+primaryModel, "fallback/"+fallbackModel
	cases := []struct {
		name    string
		tune    func(*llm.Route)
		setup   func(t *testing.T, h *harness)
		want    []string
		outcome llm.RouteOutcome
	}{
		{name: "every target refuses its key: AI_CONFIG_ERROR",
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultQuota, Fraction: 1})
				h.fallback.fault(t, sim.Fault{Kind: sim.FaultQuota, Fraction: 1})
			},
			want: []string{p + ":PROVIDER_AUTH", f + ":PROVIDER_AUTH"}, outcome: llm.RouteAuth},
		{name: "every target rate-limited: AI_RATE_LIMITED",
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultRateLimit, Fraction: 1})
				h.fallback.fault(t, sim.Fault{Kind: sim.FaultRateLimit, Fraction: 1})
			},
			want:    []string{p + ":PROVIDER_RATE_LIMIT", p + ":PROVIDER_RATE_LIMIT", f + ":PROVIDER_RATE_LIMIT", f + ":PROVIDER_RATE_LIMIT"},
			outcome: llm.RouteRateLimited},
		{name: "mixed failures: degraded",
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultQuota, Fraction: 1})
				h.fallback.fault(t, sim.Fault{Kind: sim.FaultMalformedJSON, Fraction: 1})
			},
			want: []string{p + ":PROVIDER_AUTH", f + ":PROVIDER_INVALID_RESPONSE"}, outcome: llm.RouteDegraded},
		{name: "an unconfigured provider is passed over",
			tune: func(r *llm.Route) { r.Targets[0].Provider = "absent" },
			setup: func(t *testing.T, h *harness) {
				h.fallback.fault(t, sim.Fault{Kind: sim.FaultServerError, Fraction: 1})
			},
			want:    []string{"absent/" + primaryModel + ":not_configured", f + ":PROVIDER_UNAVAILABLE", f + ":PROVIDER_UNAVAILABLE"},
			outcome: llm.RouteDegraded},
		{name: "the budget runs out: the last target is not tried",
			tune: func(r *llm.Route) {
				// The primary's first-content deadline (2 s) leaves the
				// fallback what remains, which the budget then cuts.
				r.Budget = testFirstContent + 1500*time.Millisecond
				r.Targets = append(r.Targets, llm.Target{Provider: "primary", Model: "gpt-4.1"})
			},
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultTimeout, Fraction: 1})
				h.fallback.fault(t, sim.Fault{Kind: sim.FaultTimeout, Fraction: 1})
			},
			want:    []string{p + ":PROVIDER_TIMEOUT", f + ":PROVIDER_TIMEOUT", "primary/gpt-4.1:budget_exhausted"},
			outcome: llm.RouteDegraded},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, c.tune)
			c.setup(t, h)
			r := h.call(t, ask())
			if r.routeErr == nil {
				t.Fatalf("got an answer %q, want outcome %d", r.text, c.outcome)
			}
			if got := r.trace().Strings(); strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("trace: got %v, want %v", got, c.want)
			}
			if r.routeErr.Outcome != c.outcome || r.routeErr.Committed {
				t.Errorf("outcome: got %d (committed %v), want %d", r.routeErr.Outcome, r.routeErr.Committed, c.outcome)
			}
			for _, a := range r.trace() {
				if strings.Contains(a.String(), " ") {
					t.Errorf("trace entry %q holds more than codes", a)
				}
			}
			// DESIGN §11: no turn exceeds its budget by more than 1 s.
			if r.took > testBudget+time.Second {
				t.Errorf("took %s, over the budget", r.took)
			}
		})
	}
}

func TestRouterUnknownRoute(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, err := h.router.Stream(t.Context(), userRequest("no-such-route", "hi"))
	if !errors.Is(err, llm.ErrUnknownRoute) {
		t.Fatalf("got %v, want ErrUnknownRoute", err)
	}
	if len(h.primary.hits())+len(h.fallback.hits()) != 0 {
		t.Error("a provider was called for an unknown route")
	}
}

// TestRouterToolCallCommits: a tool call's first delta commits the turn;
// the ids are the gateway's own; a call cut half-way is never delivered.
func TestRouterToolCallCommits(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	req := ask()
	req.Tools = []llm.ToolSpec{recipeTool}
	req.ToolChoice = recipeTool.Name
	r := h.call(t, req)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.calls) != 1 || r.calls[0].Name != recipeTool.Name || !strings.HasPrefix(r.calls[0].ID, "call_") || len(r.calls[0].ID) > 40 {
		t.Fatalf("calls: got %+v, want one %s call under a minted id", r.calls, recipeTool.Name)
	}

	// Cut after the call's first delta: committed, so no failover, and
	// the partial call never reaches the caller whole.
	h.primary.fault(t, sim.Fault{Kind: sim.FaultCutStream, Count: 1, AfterChunks: 2})
	r = h.call(t, req)
	if r.routeErr == nil || !r.routeErr.Committed || r.routeErr.Outcome != llm.RouteCut {
		t.Fatalf("got %+v, want a failure after commit", r.routeErr)
	}
	if len(r.calls) != 0 {
		t.Errorf("a partial tool call was delivered: %+v", r.calls)
	}
	if n := len(h.fallback.hits()); n != 0 {
		t.Errorf("fallback saw %d requests after commit, want 0", n)
	}
}
