package completions_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
)

// complCase is one row of issue #23's matrix through
// /v1/chat/completions, streamed by openai-go on route "chat": a fault on
// the primary and what every party sees of it.
type complCase struct {
	name  string
	fault sim.Fault
	text  string // the user's; "hello" is answered in one piece, a "story" in many
	// answeredBy is the model that answered; "" for an in-stream error
	// with errCode after part of the answer.
	answeredBy, errCode string
	primary, fallback   int      // requests each simulator saw
	trace               []string // the router's trace of the call
	failures            int      // the primary's breaker's count after it (closed)
	// gap, when set, is the least spacing of the primary's two requests;
	// within bounds the call.
	gap, within time.Duration
}

func TestCompletionsFaultMatrix(t *testing.T) {
	t.Parallel()
	p, f := "primary/"+primaryModel, "fallback/"+fallbackModel
	cases := []complCase{
		{name: "429 without Retry-After, persistent: one retry after the retry delay, then the fallback",
			fault: sim.Fault{Kind: sim.FaultRateLimit, Fraction: 1}, text: "hello",
			answeredBy: fallbackModel, primary: 2, fallback: 1, failures: 2, gap: complRetryDelay, within: complSlack,
			trace: []string{p + ":PROVIDER_RATE_LIMIT", p + ":PROVIDER_RATE_LIMIT", f + ":success"}},
		{name: "500 once: retried on the primary, which answers",
			fault: sim.Fault{Kind: sim.FaultServerError, Count: 1}, text: "hello",
			answeredBy: primaryModel, primary: 2, gap: complRetryDelay, within: complSlack,
			trace: []string{p + ":PROVIDER_UNAVAILABLE", p + ":success"}},
		{name: "connection reset before headers, once: retried on the primary",
			fault: sim.Fault{Kind: sim.FaultReset, Count: 1}, text: "hello",
			answeredBy: primaryModel, primary: 2, gap: complRetryDelay, within: complSlack,
			trace: []string{p + ":PROVIDER_NETWORK", p + ":success"}},
		{name: "no response at all: not retried, failed over at the first-content deadline",
			fault: sim.Fault{Kind: sim.FaultTimeout, Fraction: 1}, text: "hello",
			answeredBy: fallbackModel, primary: 1, fallback: 1, failures: 1, within: complFirstContent + complSlack,
			trace: []string{p + ":PROVIDER_TIMEOUT", f + ":success"}},
		{name: "first token after 20 s: failed over at the first-content deadline",
			fault: sim.Fault{Kind: sim.FaultSlowStart, Fraction: 1, IntervalMS: 20_000}, text: "hello",
			answeredBy: fallbackModel, primary: 1, fallback: 1, failures: 1, within: complFirstContent + complSlack,
			trace: []string{p + ":PROVIDER_TIMEOUT", f + ":success"}},
		{name: "a role frame, then a stall with the connection open: failed over",
			fault: sim.Fault{Kind: sim.FaultTimeout, Fraction: 1, AfterChunks: 1}, text: "hello",
			answeredBy: fallbackModel, primary: 1, fallback: 1, failures: 1, within: complFirstContent + complSlack,
			trace: []string{p + ":PROVIDER_TIMEOUT", f + ":success"}},
		{name: "stream stalled after part of the answer, connection open: the in-stream error at the timeout",
			fault: sim.Fault{Kind: sim.FaultTimeout, Fraction: 1, AfterChunks: 3}, text: "Tell me a story",
			errCode: "AI_UNAVAILABLE", primary: 1, failures: 1, within: complFirstContent + complSlack,
			trace: []string{p + ":PROVIDER_TIMEOUT"}},
		{name: "stream cut after part of the answer: the in-stream error, never the fallback",
			fault: sim.Fault{Kind: sim.FaultCutStream, Fraction: 1, AfterChunks: 3}, text: "Tell me a story",
			errCode: "AI_UNAVAILABLE", primary: 1, failures: 1, within: complSlack,
			trace: []string{p + ":PROVIDER_NETWORK"}},
		{name: "a malformed first chunk: failed over, not retried",
			fault: sim.Fault{Kind: sim.FaultMalformedJSON, Fraction: 1}, text: "hello",
			answeredBy: fallbackModel, primary: 1, fallback: 1, failures: 1, within: complSlack,
			trace: []string{p + ":PROVIDER_INVALID_RESPONSE", f + ":success"}},
		{name: "a malformed chunk after part of the answer: the in-stream AI_PARSE_ERROR, never the fallback",
			fault: sim.Fault{Kind: sim.FaultMalformedJSON, Fraction: 1, AfterChunks: 3}, text: "Tell me a story",
			errCode: "AI_PARSE_ERROR", primary: 1, failures: 1, within: complSlack,
			trace: []string{p + ":PROVIDER_INVALID_RESPONSE"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newComplFixture(t)
			c.primary.fault(t, tc.fault)
			start := time.Now()
			got := c.stream(t, "u1", "chat", tc.text)
			if took := time.Since(start); took > tc.within {
				t.Errorf("took %s, want at most %s", took, tc.within)
			}
			checkComplAnswer(t, c, tc, got)
			hits := c.primary.hits()
			if len(hits) != tc.primary || len(c.fallback.hits()) != tc.fallback {
				t.Errorf("primary saw %d, fallback %d; want %d and %d", len(hits), len(c.fallback.hits()), tc.primary, tc.fallback)
			}
			if tc.gap > 0 && len(hits) == 2 {
				if gap := hits[1].Sub(hits[0]); gap < tc.gap || gap > tc.gap+complSlack {
					t.Errorf("the retry came %s after the failure, want within [%s, %s]", gap, tc.gap, tc.gap+complSlack)
				}
			}
			c.checkRouted(t, tc.trace, tc.failures)
		})
	}
}

// checkComplAnswer asserts what the client got and what the ledger holds:
// a whole answer by tc.answeredBy billed as its usage, or the in-stream
// error after part of one, billed as what was streamed, never as a whole
// answer; no failed attempt billed either way.
func checkComplAnswer(t *testing.T, c *complFixture, tc complCase, got streamed) {
	t.Helper()
	recs := c.records(t, "u1")
	if len(recs) != 1 || recs[0].Kind != billing.KindCompletion {
		t.Fatalf("records %+v, want the one completion", recs)
	}
	r := recs[0]
	if tc.answeredBy != "" {
		if got.err != nil {
			t.Fatalf("got %v, want %s's answer", got.err, tc.answeredBy)
		}
		u := got.acc.Usage
		if len(got.models) != 1 || !got.models[tc.answeredBy] || got.acc.Choices[0].Message.Content != "Hello there." || u.CompletionTokens == 0 {
			t.Errorf("answer %q by %v with %+v, want %s's whole answer and usage", got.acc.Choices[0].Message.Content, got.models, u, tc.answeredBy)
		}
		want := billing.Usage{TextIn: u.PromptTokens, TextCachedIn: u.PromptTokensDetails.CachedTokens, TextOut: u.CompletionTokens}
		if !strings.HasPrefix(r.Model, tc.answeredBy) || r.Usage != want || r.UsageSource != billing.SourceProviderReported {
			t.Errorf("record %+v, want %s's reported %+v", r, tc.answeredBy, want)
		}
		return
	}
	var se *ssestream.StreamError
	if !errors.As(got.err, &se) || !strings.Contains(se.Message, tc.errCode) {
		t.Fatalf("got %v, want the in-stream %s error", got.err, tc.errCode)
	}
	if len(got.acc.Choices) == 0 || got.acc.Choices[0].Message.Content == "" || got.acc.Choices[0].FinishReason != "" {
		t.Errorf("choices %+v, want part of the answer and no finish reason", got.acc.Choices)
	}
	if len(got.models) != 1 || !got.models[primaryModel] {
		t.Errorf("chunk models %v: continued on another model", got.models)
	}
	if r.Provider != "primary" || r.UsageSource != billing.SourceServerObserved || r.Usage.TextOut == 0 {
		t.Errorf("record %+v, want what the primary streamed, observed", r)
	}
}

// TestCompletionsPrimaryDownThenHealthy: the primary is down for the first
// 60 s of 20 requests, 5 s apart on the breakers' clock. The fallback
// serves each of them meanwhile, named with its usage; three failures open
// the primary's breaker and it sees no request while open; one probe a
// minute after opening finds it healthy, and every later request is its.
func TestCompletionsPrimaryDownThenHealthy(t *testing.T) {
	t.Parallel()
	c := newComplFixture(t)
	c.primary.fault(t, sim.Fault{Kind: sim.FaultUnavailable, Fraction: 1})
	p, f := "primary/"+primaryModel, "fallback/"+fallbackModel
	for i := range 20 {
		at := time.Duration(i) * 5 * time.Second
		if at == 60*time.Second {
			c.primary.sim.ClearFaults()
		}
		got := c.stream(t, "u-outage", "chat", "hello")
		var want []string
		answeredBy, state := fallbackModel, llm.BreakerOpen
		switch {
		case at == 0: // two failures: the try and its retry
			want, state = []string{p + ":PROVIDER_UNAVAILABLE", p + ":PROVIDER_UNAVAILABLE", f + ":success"}, llm.BreakerClosed
		case at == 5*time.Second: // the third opens it; the retry finds it open
			want = []string{p + ":PROVIDER_UNAVAILABLE", p + ":circuit_open", f + ":success"}
		case at < 65*time.Second: // open: the primary is not asked
			want = []string{p + ":circuit_open", f + ":success"}
		default: // a minute after opening: the probe, healthy, closes it
			want, answeredBy, state = []string{p + ":success"}, primaryModel, llm.BreakerClosed
		}
		if got.err != nil || len(got.models) != 1 || !got.models[answeredBy] || got.acc.Usage.CompletionTokens == 0 {
			t.Errorf("request %d at %s: %v by %v with %+v, want %s's answer", i, at, got.err, got.models, got.acc.Usage, answeredBy)
		}
		if tr := c.router.trace(i); !slices.Equal(tr, want) {
			t.Errorf("request %d at %s: trace %q, want %q", i, at, tr, want)
		}
		wantHits := min(3, 2+i) // 2, then 3 until the probe
		if at >= 65*time.Second {
			wantHits = 3 + int((at-60*time.Second)/(5*time.Second))
		}
		if n := len(c.primary.hits()); n != wantHits {
			t.Errorf("request %d at %s: primary saw %d requests, want %d", i, at, n, wantHits)
		}
		if st := c.router.Status()[0].State; st != state {
			t.Errorf("request %d at %s: breaker %s, want %s", i, at, st, state)
		}
		c.clock.advance(5 * time.Second)
	}
	if n := len(c.fallback.hits()); n != 13 {
		t.Errorf("the fallback saw %d requests, want the 13 of the outage", n)
	}
	recs := c.records(t, "u-outage")
	byProvider := map[string]int{}
	for _, r := range recs {
		if r.Kind != billing.KindCompletion || r.UsageSource != billing.SourceProviderReported || r.Usage.TextOut == 0 {
			t.Errorf("record %+v, want a completion with its reported usage", r)
		}
		byProvider[r.Provider]++
	}
	if len(recs) != 20 || byProvider["fallback"] != 13 || byProvider["primary"] != 7 {
		t.Errorf("%d records by %v, want 20: 13 by the fallback, 7 by the primary (failed attempts not billed)", len(recs), byProvider)
	}
}

// checkRouted asserts the first call's trace, and the primary's breaker
// closed with failures counted toward opening it.
func (c *complFixture) checkRouted(t *testing.T, trace []string, failures int) {
	t.Helper()
	if tr := c.router.trace(0); !slices.Equal(tr, trace) {
		t.Errorf("trace %q, want %q", tr, trace)
	}
	if st := c.router.Status()[0]; st.State != llm.BreakerClosed || st.Failures != failures {
		t.Errorf("primary's breaker %s with %d failures, want closed with %d", st.State, st.Failures, failures)
	}
}
