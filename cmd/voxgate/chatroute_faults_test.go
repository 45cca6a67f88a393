package main

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
)

// longAnswer is the primary's text answer: many chunks, so a fault after a
// few of them strikes after the turn committed.
const longAnswer = "Here is a long and friendly answer about eating well, with plenty of words so that it " +
	"streams as many chunks: vegetables, grains, beans, fruit, water, sleep, and a walk after dinner."

func longScript(p, _ *sim.Config) { p.Script = sim.Script{Text: longAnswer} }

// routeFault is one row of the matrix: a fault on the primary and what
// every party should see of it.
type routeFault struct {
	name  string
	fault sim.Fault
	tune  func(*config.Config)
	// what the client sees: done, or an error event with this code
	errCode string
	// the calls each upstream saw
	primary, fallback int
	trace             []string
	answeredBy        string // the chat record's provider
	// within bounds the turn; 0 is 20 s.
	within time.Duration
	// primaryFailures is what the primary's breaker counts after the
	// turn (toward opening it; it stays closed below 3).
	primaryFailures int
	// message is the user's; "" asks about eating, which the simulator
	// answers with a tool call in its first chunk.
	message string
	check   func(t *testing.T, g *gateway)
}

// The fault matrix of issue #23 where the llm-level matrix
// (llm/router_test.go) leaves the HTTP layer unproven: each fault on the
// primary, through POST /v1/chat on the real Main, asserting what the
// client got, how many calls each upstream saw, the audit row's
// failover_trace and the ledger.
func TestChatRouteFaults(t *testing.T) {
	t.Parallel()
	pri, fb := "primary/"+primaryModel, "fallback/"+fallbackModel
	cases := []routeFault{
		{name: "503 persistent: one retry, then the fallback answers",
			fault:   sim.Fault{Kind: sim.FaultUnavailable, Fraction: 1},
			primary: 2, fallback: 1, answeredBy: "fallback",
			trace:           []string{"1 " + pri + ":PROVIDER_UNAVAILABLE", "1 " + pri + ":PROVIDER_UNAVAILABLE", "1 " + fb + ":success"},
			primaryFailures: 2},
		{name: "no response at all: not retried, failed over at the first-content deadline",
			fault: sim.Fault{Kind: sim.FaultTimeout, Fraction: 1},
			tune: func(c *config.Config) {
				c.Routes[0].Targets[0].FirstContent = time.Second
			},
			primary: 1, fallback: 1, answeredBy: "fallback", primaryFailures: 1,
			trace: []string{"1 " + pri + ":PROVIDER_TIMEOUT", "1 " + fb + ":success"}},
		{name: "stream cut after commit: one error event, never the fallback",
			fault:   sim.Fault{Kind: sim.FaultCutStream, Fraction: 1, AfterChunks: 4},
			errCode: "AI_UNAVAILABLE", primary: 1, fallback: 0, answeredBy: "primary", primaryFailures: 1,
			trace: []string{"1 " + pri + ":PROVIDER_NETWORK"}},
		{name: "no [DONE]: the answer ends with its usage, at once",
			fault:   sim.Fault{Kind: sim.FaultNoDone, Fraction: 1},
			primary: 1, fallback: 0, answeredBy: "primary",
			trace: []string{"1 " + pri + ":success"}},
		{name: "429 with Retry-After: 1: the same target again after it",
			fault:   sim.Fault{Kind: sim.FaultRateLimit, RetryAfter: 1, Count: 1},
			primary: 2, fallback: 0, answeredBy: "primary",
			trace: []string{"1 " + pri + ":PROVIDER_RATE_LIMIT", "1 " + pri + ":success"},
			check: func(t *testing.T, g *gateway) {
				_, hits := g.primary.calls()
				if gap := hits[1].Sub(hits[0]); gap < time.Second {
					t.Errorf("the retry came %s after the 429, want at least the 1 s of Retry-After", gap)
				}
			}},
	}
	cases = append(cases, moreRouteFaults(pri, fb)...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := startGateway(t, longScript, tc.tune)
			g.primary.fault(t, tc.fault)
			start := time.Now()
			r := g.chat(t, "u1", `{"message":"`+cmp.Or(tc.message, "how should I eat this week?")+`"}`)
			took := time.Since(start)
			last := r.last()
			switch {
			case r.Status != 200:
				t.Fatalf("status %d %s", r.Status, r.Raw)
			case tc.errCode == "" && (last.Type != "done" || !slices.Contains(r.types(), "stream_complete")):
				t.Fatalf("events %v, want stream_complete then done", r.types())
			case tc.errCode != "" && (last.Type != "error" || last.Data["code"] != tc.errCode):
				t.Fatalf("last event %s %v, want error %s", last.Type, last.Data, tc.errCode)
			case tc.errCode != "" && (slices.Contains(r.types(), "done") || slices.Contains(r.types(), "stream_complete")):
				t.Fatalf("events %v: a cut answer ended as a complete one", r.types())
			}
			if within := cmp.Or(tc.within, 20*time.Second); took > within {
				t.Errorf("the turn took %s, want at most %s", took, within)
			}
			if st := g.breakers(t)[0]; st.State != llm.BreakerClosed || st.Failures != tc.primaryFailures {
				t.Errorf("primary's breaker %s with %d failures, want closed with %d", st.State, st.Failures, tc.primaryFailures)
			}
			if got := g.primary.count(); got != tc.primary {
				t.Errorf("primary saw %d calls, want %d", got, tc.primary)
			}
			if got := g.fallback.count(); got != tc.fallback {
				t.Errorf("fallback saw %d calls, want %d", got, tc.fallback)
			}
			trace, provider, _, _ := g.audit(t, "u1")
			if !slices.Equal(trace, tc.trace) {
				t.Errorf("failover_trace %q, want %q", trace, tc.trace)
			}
			// A turn no target answered names none in the ledger, no one in its audit row.
			if want := strings.TrimPrefix(tc.answeredBy, "none"); provider != want {
				t.Errorf("audit names provider %q, want %q", provider, want)
			}
			recs := g.records(t, "u1")
			if len(recs) != 1 || recs[0].Kind != "chat" || recs[0].Provider != tc.answeredBy {
				t.Errorf("records %+v, want one chat record by %s (no failed attempt reported usage)", recs, tc.answeredBy)
			}
			if tc.errCode == "" && len(recs) == 1 && (recs[0].TextOut == 0 || recs[0].CostMicros == nil || *recs[0].CostMicros == 0) {
				t.Errorf("record %+v, want the answer's reported usage, priced", recs[0])
			}
			if strings.Contains(r.Raw, "failover_trace") || strings.Contains(r.Raw, "PROVIDER_") || strings.Contains(r.Raw, pri) {
				t.Errorf("the client was sent the trace: %s", r.Raw)
			}
			if tc.check != nil {
				tc.check(t, g)
			}
		})
	}
}
