package llm_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
)

// routeCase is one row of DESIGN §11's fault matrix, through the real
// openai adapter against two simulators.
type routeCase struct {
	name  string
	tune  func(*llm.Route)
	setup func(t *testing.T, h *harness)
	// want is the trace; a call that answered names its model in
	// answeredBy, one that failed has outcome set.
	want       []string
	statuses   []int
	answeredBy string
	outcome    llm.RouteOutcome
	committed  bool
	// hits are the requests each simulator saw; gap bounds the spacing of
	// the primary's two, when it saw two.
	primaryHits, fallbackHits int
	minGap, maxGap            time.Duration
	// within bounds the whole call.
	within time.Duration
	// billed: the failed attempt carries the usage its provider reported.
	billed bool
}

func TestRouterFaultMatrix(t *testing.T) {
	t.Parallel()
	p, f := "primary/"+primaryModel, "fallback/"+fallbackModel
	cases := []routeCase{
		{name: "429 with Retry-After 2, once: retried after 2 s on the same target",
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultRateLimit, Count: 1, RetryAfter: 2})
			},
			want: []string{p + ":PROVIDER_RATE_LIMIT", p + ":success"}, statuses: []int{429, 0},
			answeredBy: primaryModel, primaryHits: 2, minGap: 2 * time.Second, maxGap: 2*time.Second + slack, within: 2*time.Second + slack},
		{name: "429 with a Retry-After beyond the budget: failed over at once",
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultRateLimit, Count: 1, RetryAfter: 30})
			},
			want: []string{p + ":PROVIDER_RATE_LIMIT", f + ":success"}, statuses: []int{429, 0},
			answeredBy: fallbackModel, primaryHits: 1, fallbackHits: 1, within: slack},
		{name: "429 without Retry-After, persistent: one retry, then the fallback",
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultRateLimit, Fraction: 1})
			},
			want:       []string{p + ":PROVIDER_RATE_LIMIT", p + ":PROVIDER_RATE_LIMIT", f + ":success"},
			answeredBy: fallbackModel, primaryHits: 2, fallbackHits: 1, minGap: testRetryDelay, maxGap: slack, within: slack},
		{name: "500 once: retried",
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultServerError, Count: 1})
			},
			want: []string{p + ":PROVIDER_UNAVAILABLE", p + ":success"}, statuses: []int{500, 0},
			answeredBy: primaryModel, primaryHits: 2, minGap: testRetryDelay, maxGap: slack, within: slack},
		{name: "503 persistent: one retry, then the fallback answers",
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultUnavailable, Fraction: 1})
			},
			want: []string{p + ":PROVIDER_UNAVAILABLE", p + ":PROVIDER_UNAVAILABLE", f + ":success"}, statuses: []int{503, 503, 0},
			answeredBy: fallbackModel, primaryHits: 2, fallbackHits: 1, within: slack},
		{name: "connection reset before headers: retried",
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultReset, Count: 1})
			},
			want:       []string{p + ":PROVIDER_NETWORK", p + ":success"},
			answeredBy: primaryModel, primaryHits: 2, within: slack},
		{name: "no response at all: not retried, failed over at the deadline",
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultTimeout, Fraction: 1})
			},
			want:       []string{p + ":PROVIDER_TIMEOUT", f + ":success"},
			answeredBy: fallbackModel, primaryHits: 1, fallbackHits: 1, within: testFirstContent + slack},
		{name: "first token after 20 s: failed over at the first-content deadline",
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultSlowStart, Fraction: 1, IntervalMS: 20_000})
			},
			want:       []string{p + ":PROVIDER_TIMEOUT", f + ":success"},
			answeredBy: fallbackModel, primaryHits: 1, fallbackHits: 1, within: testFirstContent + slack},
		{name: "a role frame, then a stall: the stall deadline fails over",
			// A first-content deadline far beyond the bound below, so only
			// the stall deadline can end the attempt in time.
			tune: func(r *llm.Route) {
				r.Targets[0].Stall, r.Targets[0].FirstContent = 300*time.Millisecond, 10*time.Second
			},
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultTimeout, Fraction: 1, AfterChunks: 1})
			},
			want:       []string{p + ":PROVIDER_TIMEOUT", f + ":success"},
			answeredBy: fallbackModel, primaryHits: 1, fallbackHits: 1, within: 300*time.Millisecond + slack},
		{name: "stream stalled after part of the answer: one error, no continuation",
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultTimeout, Fraction: 1, AfterChunks: 3})
			},
			want: []string{p + ":PROVIDER_TIMEOUT"}, outcome: llm.RouteCut, committed: true,
			primaryHits: 1, within: testFirstContent + slack},
		{name: "stream cut after part of the answer: one error, no continuation",
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultCutStream, Fraction: 1, AfterChunks: 3})
			},
			want: []string{p + ":PROVIDER_NETWORK"}, outcome: llm.RouteCut, committed: true,
			primaryHits: 1, within: slack},
		{name: "a malformed first chunk: failed over, not retried",
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultMalformedJSON, Fraction: 1})
			},
			want:       []string{p + ":PROVIDER_INVALID_RESPONSE", f + ":success"},
			answeredBy: fallbackModel, primaryHits: 1, fallbackHits: 1, within: slack},
		{name: "a malformed chunk after content: one error",
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultMalformedJSON, Fraction: 1, AfterChunks: 3})
			},
			want: []string{p + ":PROVIDER_INVALID_RESPONSE"}, outcome: llm.RouteCut, committed: true,
			primaryHits: 1, within: slack},
		{name: "a stream ending without [DONE] is whole, finalised with its usage",
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultNoDone, Fraction: 1})
			},
			want: []string{p + ":success"}, answeredBy: primaryModel, primaryHits: 1, within: slack},
		{name: "context length with no larger target: refused, not failed over",
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultContextLength, Fraction: 1})
			},
			want: []string{p + ":PROVIDER_CONTEXT_LENGTH"}, statuses: []int{400}, outcome: llm.RouteRefused,
			primaryHits: 1, within: slack},
		{name: "context length: failed over to a target declaring a larger window",
			tune: func(r *llm.Route) { r.Targets[0].ContextWindow, r.Targets[1].ContextWindow = 128_000, 1_000_000 },
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultContextLength, Fraction: 1})
			},
			want:       []string{p + ":PROVIDER_CONTEXT_LENGTH", f + ":success"},
			answeredBy: fallbackModel, primaryHits: 1, fallbackHits: 1, within: slack},
		{name: "content-filter refusal before the answer: propagated, never failed over",
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultContentFilter, Fraction: 1})
			},
			want: []string{p + ":PROVIDER_CONTENT_FILTER"}, statuses: []int{400}, outcome: llm.RouteContentFiltered,
			primaryHits: 1, within: slack},
		{name: "content filter stopping the answer: propagated after the text",
			setup: func(t *testing.T, h *harness) {
				h.primary.fault(t, sim.Fault{Kind: sim.FaultContentFilter, Fraction: 1, AfterChunks: 3})
			},
			want: []string{p + ":PROVIDER_CONTENT_FILTER"}, outcome: llm.RouteContentFiltered, committed: true,
			primaryHits: 1, within: slack, billed: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, c.tune)
			c.setup(t, h)
			r := h.call(t, ask())
			checkRouted(t, c, h, r)
		})
	}
}

func checkRouted(t *testing.T, c routeCase, h *harness, r routed) {
	t.Helper()
	tr := r.trace()
	if got := tr.Strings(); !reflect.DeepEqual(got, c.want) {
		t.Errorf("trace: got %v, want %v", got, c.want)
	}
	for i, s := range c.statuses {
		if i < len(tr) && tr[i].Status != s {
			t.Errorf("trace[%d] status: got %d, want %d", i, tr[i].Status, s)
		}
	}
	if c.answeredBy != "" {
		if r.err != nil {
			t.Fatalf("got %v, want an answer", r.err)
		}
		if r.text != routedAnswer {
			t.Errorf("text: got %q, want %q", r.text, routedAnswer)
		}
		if u := r.done.Usage; u == nil || !strings.HasPrefix(u.Model, c.answeredBy) || u.OutputTokens == 0 {
			t.Errorf("usage: got %+v, want %s's", u, c.answeredBy)
		}
		if a, ok := tr.Answered(); !ok || a.Model != c.answeredBy || a.Outcome != llm.OutcomeSuccess {
			t.Errorf("answered: got %+v (%v), want %s", a, ok, c.answeredBy)
		}
		for _, a := range tr[:len(tr)-1] {
			if a.Answered {
				t.Errorf("attempt %v counted as answered", a)
			}
		}
	} else {
		if r.routeErr == nil {
			t.Fatalf("got an answer %q, want outcome %d", r.text, c.outcome)
		}
		if r.routeErr.Outcome != c.outcome || r.routeErr.Committed != c.committed {
			t.Errorf("outcome: got %d committed %v, want %d committed %v", r.routeErr.Outcome, r.routeErr.Committed, c.outcome, c.committed)
		}
		if r.done != nil {
			t.Error("a failed call ended with EventDone: a cut answer passed for a whole one")
		}
		if c.committed && (r.text == "" || r.text == routedAnswer) {
			t.Errorf("text: got %q, want the part before the failure", r.text)
		}
		var e *llm.Error
		if !errors.As(r.err, &e) {
			t.Errorf("the route error holds no *llm.Error: %v", r.err)
		}
	}
	for i, a := range tr {
		if billed := a.Usage != nil && a.Usage.InputTokens > 0; billed != c.billed {
			t.Errorf("trace[%d] usage: got %+v, want billed %v", i, a.Usage, c.billed)
		}
	}
	ph, fh := h.primary.hits(), h.fallback.hits()
	if len(ph) != c.primaryHits || len(fh) != c.fallbackHits {
		t.Errorf("requests: primary %d, fallback %d; want %d, %d", len(ph), len(fh), c.primaryHits, c.fallbackHits)
	}
	if c.minGap > 0 && len(ph) == 2 {
		if gap := ph[1].Sub(ph[0]); gap < c.minGap || gap > c.maxGap {
			t.Errorf("retry after %s, want within [%s, %s]", gap, c.minGap, c.maxGap)
		}
	}
	if r.took > c.within {
		t.Errorf("took %s, want at most %s", r.took, c.within)
	}
}
