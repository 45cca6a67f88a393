package llm_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
)

// TestRouterPrimaryDownThenHealthy: the primary is down for the first 60 s
// of 20 requests, 5 s apart on the breakers' clock. Three failures open its
// breaker; while open, the fallback serves without the primary seeing a
// request; one probe a minute after opening finds it healthy again, and
// every later request is the primary's.
func TestRouterPrimaryDownThenHealthy(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.primary.fault(t, sim.Fault{Kind: sim.FaultUnavailable, Fraction: 1})
	p, f := "primary/"+primaryModel, "fallback/"+fallbackModel
	for i := range 20 {
		at := time.Duration(i) * 5 * time.Second
		if at == 60*time.Second {
			h.primary.sim.ClearFaults()
		}
		r := h.call(t, ask())
		if r.err != nil {
			t.Fatalf("request %d at %s: %v", i, at, r.err)
		}
		var want []string
		switch {
		case at == 0: // two failures: the try and its retry
			want = []string{p + ":PROVIDER_UNAVAILABLE", p + ":PROVIDER_UNAVAILABLE", f + ":success"}
		case at == 5*time.Second: // the third opens it; the retry finds it open
			want = []string{p + ":PROVIDER_UNAVAILABLE", p + ":circuit_open", f + ":success"}
		case at < 65*time.Second: // open: the primary is not asked
			want = []string{p + ":circuit_open", f + ":success"}
		default: // 60 s after opening: the probe, healthy, closes it
			want = []string{p + ":success"}
		}
		if got := r.trace().Strings(); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("request %d at %s: trace %v, want %v", i, at, got, want)
		}
		wantHits := min(3, 2+i) // 2, then 3 until the probe
		if at >= 65*time.Second {
			wantHits = 3 + int((at-60*time.Second)/(5*time.Second))
		}
		if got := len(h.primary.hits()); got != wantHits {
			t.Errorf("request %d at %s: primary saw %d requests, want %d", i, at, got, wantHits)
		}
		state := h.router.Status()[0].State
		wantState := llm.BreakerOpen
		if at >= 65*time.Second {
			wantState = llm.BreakerClosed
		} else if at == 0 {
			wantState = llm.BreakerClosed
		}
		if state != wantState {
			t.Errorf("request %d at %s: breaker %s, want %s", i, at, state, wantState)
		}
		h.clock.advance(5 * time.Second)
	}
	if got := testutil.ToFloat64(h.counter("primary", primaryModel, "circuit_open")); got != 12 {
		t.Errorf("circuit_open attempts: got %v, want 12", got)
	}
	if got := testutil.ToFloat64(h.counter("fallback", fallbackModel, "success")); got != 13 {
		t.Errorf("fallback successes: got %v, want 13", got)
	}
	if got := testutil.ToFloat64(h.series("voxgate_llm_failovers_total", map[string]string{"route": "chat"})); got != 13 {
		t.Errorf("failovers: got %v, want 13", got)
	}
	first := map[string]string{"provider": "primary", "model": primaryModel}
	if got := testutil.ToFloat64(h.series("voxgate_llm_first_content_seconds", first)); got != 7 {
		t.Errorf("primary's first-content observations: got %v, want 7 (its answers)", got)
	}
}

// TestRouterProbeStillDown: a probe that fails opens the breaker for
// another minute, with no second probe in it.
func TestRouterProbeStillDown(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(r *llm.Route) { r.Targets = r.Targets[:1] })
	h.primary.fault(t, sim.Fault{Kind: sim.FaultUnavailable, Fraction: 1})
	for range 2 { // 2 + 2 failures: open after the third
		h.call(t, ask())
	}
	if got := len(h.primary.hits()); got != 3 {
		t.Fatalf("primary saw %d requests before opening, want 3", got)
	}
	h.clock.advance(60 * time.Second)
	r := h.call(t, ask()) // the probe fails; its retry finds the breaker open again
	if got, want := strings.Join(r.trace().Strings(), " "), "primary/"+primaryModel+":PROVIDER_UNAVAILABLE primary/"+primaryModel+":circuit_open"; got != want {
		t.Errorf("probe's trace: got %s, want %s", got, want)
	}
	h.clock.advance(59 * time.Second)
	h.call(t, ask())
	if got := len(h.primary.hits()); got != 4 {
		t.Errorf("primary saw %d requests, want 4: one probe per open minute", got)
	}
	if r.routeErr == nil || r.routeErr.Outcome != llm.RouteDegraded {
		t.Errorf("every target failed: got %+v, want degraded", r.routeErr)
	}
	if got := h.router.Status()[0]; got.State != llm.BreakerOpen || got.OpenedAt.IsZero() {
		t.Errorf("status: got %+v, want open", got)
	}
	if got := testutil.ToFloat64(h.breakerGauge()); got != 2 {
		t.Errorf("breaker gauge: got %v, want 2 (open)", got)
	}
}
