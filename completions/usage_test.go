package completions_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
)

// TestCompletionsCutAfterUsage: the provider's usage chunk arrives, then
// the connection is cut before [DONE] (or stalls until the target's
// timeout). The client is told the answer failed, and the completion is
// recorded with the usage the provider reported, as billed, never as an
// estimate: the same counts as a clean answer to the same request. A
// whole answer is asked for whole (llm.Request.Whole): a body cut halfway
// gave the gateway nothing, so the router retries it, and the client gets
// the answer, recorded once.
func TestCompletionsCutAfterUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		fault  sim.Fault
		stream bool
		code   string
	}{
		{"streamed, cut after the usage", sim.Fault{Kind: sim.FaultCutStream, AfterChunks: 1000}, true, "AI_UNAVAILABLE"},
		{"whole, the body cut halfway", sim.Fault{Kind: sim.FaultCutStream, AfterChunks: 1000}, false, ""},
		{"streamed, a malformed chunk after the usage", sim.Fault{Kind: sim.FaultMalformedJSON, AfterChunks: 1000}, true, "AI_PARSE_ERROR"},
		{"streamed, stalled after the usage", sim.Fault{Kind: sim.FaultTimeout, AfterChunks: 1000}, true, "AI_UNAVAILABLE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// A fixture each: three failures would open one breaker.
			c := newComplFixture(t)
			clean := c.stream(t, "u-clean", "solo", "hello")
			if clean.err != nil {
				t.Fatal(clean.err)
			}
			recs := c.records(t, "u-clean")
			if len(recs) != 1 || recs[0].UsageSource != billing.SourceProviderReported || recs[0].Usage.TextOut == 0 {
				t.Fatalf("the clean answer's records %+v", recs)
			}
			want := recs[0].Usage
			const user = "u-cut"
			c.primary.fault(t, tc.fault)
			if tc.stream {
				got := c.stream(t, user, "solo", "hello")
				var se *ssestream.StreamError
				if !errors.As(got.err, &se) || !strings.Contains(se.Message, tc.code) {
					t.Fatalf("got %v, want the in-stream %s error", got.err, tc.code)
				}
			} else {
				_, err := c.client(user, "").Chat.Completions.New(context.Background(),
					openai.ChatCompletionNewParams{Model: "solo", Messages: ask("hello")})
				if err != nil {
					t.Fatalf("got %v, want the answer from the router's retry", err)
				}
			}
			testkit.Eventually(t, context.Background(), "the completion's end", func() bool { return c.day(t, user).tickets == 0 })
			recs = c.records(t, user)
			if len(recs) != 1 {
				t.Fatalf("records %+v, want the one completion", recs)
			}
			if r := recs[0]; r.Kind != billing.KindCompletion || r.UsageSource != billing.SourceProviderReported || r.Usage != want {
				t.Errorf("record %+v, want a completion with the reported %+v", r, want)
			}
			if d := c.day(t, user); d.tokens != want.TextIn+want.TextOut {
				t.Errorf("settled %d tokens, want the reported %d", d.tokens, want.TextIn+want.TextOut)
			}
		})
	}
}
