package main

import (
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
)

// routeSlack is what a turn may take beyond the waits it is about, on a
// loaded 2-core machine.
const routeSlack = 3 * time.Second

// retriedAfter checks that the primary's two calls were at least min and
// at most min plus routeSlack apart.
func retriedAfter(min time.Duration) func(*testing.T, *gateway) {
	return func(t *testing.T, g *gateway) {
		t.Helper()
		_, hits := g.primary.calls()
		if len(hits) != 2 {
			t.Fatalf("primary saw %d calls, want 2", len(hits))
		}
		if gap := hits[1].Sub(hits[0]); gap < min || gap > min+routeSlack {
			t.Errorf("the retry came %s after the failure, want within [%s, %s]", gap, min, min+routeSlack)
		}
	}
}

// moreRouteFaults are the rest of issue #23's matrix through POST
// /v1/chat: pri and fb are the trace's names of the two targets.
func moreRouteFaults(pri, fb string) []routeFault {
	return []routeFault{
		{name: "429 without Retry-After, persistent: one retry after the retry delay, then the fallback",
			fault:   sim.Fault{Kind: sim.FaultRateLimit, Fraction: 1},
			primary: 2, fallback: 1, answeredBy: "fallback", primaryFailures: 2,
			trace: []string{"1 " + pri + ":PROVIDER_RATE_LIMIT", "1 " + pri + ":PROVIDER_RATE_LIMIT", "1 " + fb + ":success"},
			check: retriedAfter(llm.DefaultRetryDelay)},
		{name: "500 once: retried on the primary, which answers",
			fault:   sim.Fault{Kind: sim.FaultServerError, Count: 1},
			primary: 2, fallback: 0, answeredBy: "primary",
			trace: []string{"1 " + pri + ":PROVIDER_UNAVAILABLE", "1 " + pri + ":success"},
			check: retriedAfter(llm.DefaultRetryDelay)},
		{name: "connection reset before headers, once: retried on the primary",
			fault:   sim.Fault{Kind: sim.FaultReset, Count: 1},
			primary: 2, fallback: 0, answeredBy: "primary",
			trace: []string{"1 " + pri + ":PROVIDER_NETWORK", "1 " + pri + ":success"},
			check: retriedAfter(llm.DefaultRetryDelay)},
		{name: "first token after 20 s: failed over at the first-content deadline",
			fault:   sim.Fault{Kind: sim.FaultSlowStart, Fraction: 1, IntervalMS: 20_000},
			tune:    func(c *config.Config) { c.Routes[0].Targets[0].FirstContent = time.Second },
			primary: 1, fallback: 1, answeredBy: "fallback", primaryFailures: 1, within: time.Second + routeSlack,
			trace: []string{"1 " + pri + ":PROVIDER_TIMEOUT", "1 " + fb + ":success"}},
		{name: "a role frame, then a stall with the connection open: the stall deadline fails over",
			fault: sim.Fault{Kind: sim.FaultTimeout, Fraction: 1, AfterChunks: 1},
			// A first-content deadline beyond the bound, so only the stall
			// deadline can end the attempt in time.
			tune: func(c *config.Config) {
				c.Routes[0].Targets[0].Stall, c.Routes[0].Targets[0].FirstContent = 500*time.Millisecond, 15*time.Second
			},
			// A text answer: its first chunk is the role frame alone.
			message: "hello",
			primary: 1, fallback: 1, answeredBy: "fallback", primaryFailures: 1, within: 500*time.Millisecond + routeSlack,
			trace: []string{"1 " + pri + ":PROVIDER_TIMEOUT", "1 " + fb + ":success"}},
		{name: "stream stalled after part of the answer, connection open: one error event at the timeout",
			fault:   sim.Fault{Kind: sim.FaultTimeout, Fraction: 1, AfterChunks: 4},
			tune:    func(c *config.Config) { c.Routes[0].Targets[0].Timeout = time.Second },
			errCode: "AI_UNAVAILABLE", primary: 1, fallback: 0, answeredBy: "primary", primaryFailures: 1,
			within: time.Second + routeSlack,
			trace:  []string{"1 " + pri + ":PROVIDER_TIMEOUT"}},
		{name: "a malformed first chunk: failed over, not retried",
			fault:   sim.Fault{Kind: sim.FaultMalformedJSON, Fraction: 1},
			primary: 1, fallback: 1, answeredBy: "fallback", primaryFailures: 1,
			trace: []string{"1 " + pri + ":PROVIDER_INVALID_RESPONSE", "1 " + fb + ":success"}},
		{name: "a malformed chunk after part of the answer: one AI_PARSE_ERROR event, never the fallback",
			fault:   sim.Fault{Kind: sim.FaultMalformedJSON, Fraction: 1, AfterChunks: 4},
			errCode: "AI_PARSE_ERROR", primary: 1, fallback: 0, answeredBy: "primary", primaryFailures: 1,
			trace: []string{"1 " + pri + ":PROVIDER_INVALID_RESPONSE"}},
		// No target declares a larger window: the conversation is the
		// gateway's to fit, so its class is a configuration error (docs/chat.md).
		{name: "context length: refused with AI_CONFIG_ERROR, never failed over",
			fault:   sim.Fault{Kind: sim.FaultContextLength, Fraction: 1},
			errCode: "AI_CONFIG_ERROR", primary: 1, fallback: 0, answeredBy: "none",
			trace: []string{"1 " + pri + ":PROVIDER_CONTEXT_LENGTH"}},
		{name: "content filter: AI_CONTENT_FILTERED, never failed over",
			fault:   sim.Fault{Kind: sim.FaultContentFilter, Fraction: 1},
			errCode: "AI_CONTENT_FILTERED", primary: 1, fallback: 0, answeredBy: "none",
			trace: []string{"1 " + pri + ":PROVIDER_CONTENT_FILTER"}},
	}
}
