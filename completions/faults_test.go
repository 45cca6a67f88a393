package completions_test

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
)

// slack is what a case may take beyond the waits it is about, on a loaded
// 2-core machine.
const complSlack = 2 * time.Second

func ask(text string) []openai.ChatCompletionMessageParamUnion {
	return []openai.ChatCompletionMessageParamUnion{userMsg(text)}
}

// streamed is a streamed answer read to its end through openai-go.
type streamed struct {
	acc    openai.ChatCompletionAccumulator
	models map[string]bool
	err    error
}

func (c *complFixture) stream(t testing.TB, user, route, text string) streamed {
	t.Helper()
	// A bound far past the route's budget, so that no case can hang.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st := c.client(user, "").Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model: route, Messages: ask(text), StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}})
	out := streamed{models: map[string]bool{}}
	for st.Next() {
		out.acc.AddChunk(st.Current())
		out.models[st.Current().Model] = true
	}
	out.err = st.Err()
	return out
}

// TestCompletionsFaults is DESIGN §11's fault matrix through
// /v1/chat/completions, as openai-go sees it: what the client got, how
// many requests each simulator saw and how far apart, and the ledger.
func TestCompletionsFaults(t *testing.T) {
	t.Parallel()
	pri, fb := "primary/"+primaryModel, "fallback/"+fallbackModel

	t.Run("503 persistent: the fallback answers, named with its usage; failed attempts not billed", func(t *testing.T) {
		t.Parallel()
		c := newComplFixture(t)
		c.primary.fault(t, sim.Fault{Kind: sim.FaultUnavailable, Fraction: 1})
		got := c.stream(t, "u-503", "chat", "hello")
		if got.err != nil {
			t.Fatal(got.err)
		}
		if len(got.models) != 1 || !got.models[fallbackModel] {
			t.Errorf("chunk models %v, want only %q", got.models, fallbackModel)
		}
		u := got.acc.Usage
		if u.PromptTokens == 0 || u.CompletionTokens == 0 || got.acc.Choices[0].Message.Content != "Hello there." {
			t.Errorf("answer %q, usage %+v", got.acc.Choices[0].Message.Content, u)
		}
		if p, f := len(c.primary.hits()), len(c.fallback.hits()); p != 2 || f != 1 {
			t.Errorf("primary saw %d, fallback %d; want 2 and 1", p, f)
		}
		c.checkRouted(t, []string{pri + ":PROVIDER_UNAVAILABLE", pri + ":PROVIDER_UNAVAILABLE", fb + ":success"}, 2)
		recs := c.records(t, "u-503")
		want := billing.Usage{TextIn: u.PromptTokens, TextCachedIn: u.PromptTokensDetails.CachedTokens, TextOut: u.CompletionTokens}
		if len(recs) != 1 || recs[0].Kind != billing.KindCompletion || recs[0].Provider != "fallback" ||
			!strings.HasPrefix(recs[0].Model, fallbackModel) || recs[0].Usage != want {
			t.Errorf("records %+v, want one completion by the fallback with %+v", recs, want)
		}
	})

	t.Run("429 with Retry-After 2, once: retried on the primary 2 s later", func(t *testing.T) {
		t.Parallel()
		c := newComplFixture(t)
		c.primary.fault(t, sim.Fault{Kind: sim.FaultRateLimit, Count: 1, RetryAfter: 2})
		done, err := c.client("u-429", "").Chat.Completions.New(context.Background(),
			openai.ChatCompletionNewParams{Model: "chat", Messages: ask("hello")})
		if err != nil {
			t.Fatal(err)
		}
		if done.Model != primaryModel || done.Usage.TotalTokens == 0 {
			t.Errorf("model %q usage %+v", done.Model, done.Usage)
		}
		hits := c.primary.hits()
		if len(hits) != 2 || len(c.fallback.hits()) != 0 {
			t.Fatalf("primary saw %d, fallback %d; want 2 and 0", len(hits), len(c.fallback.hits()))
		}
		if gap := hits[1].Sub(hits[0]); gap < 2*time.Second || gap > 2*time.Second+complSlack {
			t.Errorf("retry after %v, want 2 s", gap)
		}
		c.checkRouted(t, []string{pri + ":PROVIDER_RATE_LIMIT", pri + ":success"}, 0)
	})

	t.Run("a stream that ends without [DONE]: finalised with its usage", func(t *testing.T) {
		t.Parallel()
		c := newComplFixture(t)
		c.primary.fault(t, sim.Fault{Kind: sim.FaultNoDone, Fraction: 1})
		got := c.stream(t, "u-nodone", "solo", "hello")
		if got.err != nil {
			t.Fatal(got.err)
		}
		c.checkRouted(t, []string{pri + ":success"}, 0)
		if got.acc.Choices[0].Message.Content != "Hello there." || got.acc.Usage.TotalTokens == 0 {
			t.Errorf("answer %q usage %+v", got.acc.Choices[0].Message.Content, got.acc.Usage)
		}
		body := c.raw(t, "u-nodone", `{"model":"solo","stream":true,"messages":[{"role":"user","content":"hello"}]}`)
		if lines := dataLines(body); len(lines) == 0 || lines[len(lines)-1] != "[DONE]" {
			t.Errorf("data lines %q, want [DONE] last", lines)
		}
		recs := c.records(t, "u-nodone")
		if len(recs) != 2 || recs[0].UsageSource != billing.SourceProviderReported || recs[0].Usage.TextOut == 0 {
			t.Errorf("records %+v", recs)
		}
	})

	for _, tc := range []struct {
		name      string
		setup     func(testing.TB, *complFixture)
		route     string
		status    int
		code      string
		primary   int // requests each simulator saw, over both calls
		fallback  int
		retryHint bool
		param     string   // with OpenAI's invalid_request_error type
		trace     []string // the first call's
		breaker   string   // the primary's state after both
	}{
		{name: "context length: 400, never failed over", route: "chat", status: 400, code: "INVALID_REQUEST", param: "messages", primary: 2,
			trace: []string{pri + ":PROVIDER_CONTEXT_LENGTH"}, breaker: llm.BreakerClosed,
			setup: func(t testing.TB, c *complFixture) {
				c.primary.fault(t, sim.Fault{Kind: sim.FaultContextLength, Fraction: 1})
			}},
		{name: "content filter: 422, never failed over", route: "chat", status: 422, code: "AI_CONTENT_FILTERED", primary: 2,
			trace: []string{pri + ":PROVIDER_CONTENT_FILTER"}, breaker: llm.BreakerClosed,
			setup: func(t testing.TB, c *complFixture) {
				c.primary.fault(t, sim.Fault{Kind: sim.FaultContentFilter, Fraction: 1})
			}},
		// Two requests: the first tries each target twice, the second once,
		// and that third failure in a row opens each breaker.
		{name: "every target rate-limited: 429 AI_RATE_LIMITED", route: "chat", status: 429, code: "AI_RATE_LIMITED",
			primary: 3, fallback: 3, retryHint: true, breaker: llm.BreakerOpen,
			trace: []string{pri + ":PROVIDER_RATE_LIMIT", pri + ":PROVIDER_RATE_LIMIT", fb + ":PROVIDER_RATE_LIMIT", fb + ":PROVIDER_RATE_LIMIT"},
			setup: func(t testing.TB, c *complFixture) {
				c.primary.fault(t, sim.Fault{Kind: sim.FaultRateLimit, Fraction: 1})
				c.fallback.fault(t, sim.Fault{Kind: sim.FaultRateLimit, Fraction: 1})
			}},
		{name: "every target refuses the key: 502 AI_CONFIG_ERROR", route: "locked", status: 502, code: "AI_CONFIG_ERROR", primary: 2,
			trace: []string{"locked/" + primaryModel + ":PROVIDER_AUTH"}},
		{name: "every target down: 503 AI_UNAVAILABLE, not degraded mode", route: "chat", status: 503, code: "AI_UNAVAILABLE",
			primary: 3, fallback: 3, retryHint: true, breaker: llm.BreakerOpen,
			trace: []string{pri + ":PROVIDER_UNAVAILABLE", pri + ":PROVIDER_UNAVAILABLE", fb + ":PROVIDER_UNAVAILABLE", fb + ":PROVIDER_UNAVAILABLE"},
			setup: func(t testing.TB, c *complFixture) {
				c.primary.fault(t, sim.Fault{Kind: sim.FaultUnavailable, Fraction: 1})
				c.fallback.fault(t, sim.Fault{Kind: sim.FaultUnavailable, Fraction: 1})
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newComplFixture(t)
			if tc.setup != nil {
				tc.setup(t, c)
			}
			user := "u-" + tc.code
			for _, stream := range []bool{false, true} {
				var err error
				if stream {
					st := c.client(user, "").Chat.Completions.NewStreaming(context.Background(),
						openai.ChatCompletionNewParams{Model: tc.route, Messages: ask("hello")})
					for st.Next() {
						t.Errorf("a chunk before the failure: %+v", st.Current())
					}
					err = st.Err()
				} else {
					_, err = c.client(user, "").Chat.Completions.New(context.Background(),
						openai.ChatCompletionNewParams{Model: tc.route, Messages: ask("hello")})
				}
				var ae *openai.Error
				if !errors.As(err, &ae) || ae.StatusCode != tc.status || ae.Code != tc.code {
					t.Fatalf("stream %v: got %v, want %d %s", stream, err, tc.status, tc.code)
				}
				if tc.param != "" && (ae.Param != tc.param || ae.Type != "invalid_request_error") {
					t.Errorf("stream %v: param %q type %q, want %q and invalid_request_error", stream, ae.Param, ae.Type, tc.param)
				}
				if tc.retryHint && ae.Response.Header.Get("Retry-After") == "" {
					t.Errorf("stream %v: %d without Retry-After", stream, tc.status)
				}
			}
			if p, f := len(c.primary.hits()), len(c.fallback.hits()); p != tc.primary || f != tc.fallback {
				t.Errorf("primary saw %d, fallback %d; want %d and %d", p, f, tc.primary, tc.fallback)
			}
			if tr := c.router.trace(0); !slices.Equal(tr, tc.trace) {
				t.Errorf("the first call's trace %q, want %q", tr, tc.trace)
			}
			if st := c.router.Status()[0].State; tc.breaker != "" && st != tc.breaker {
				t.Errorf("the primary's breaker %s, want %s", st, tc.breaker)
			}
			if recs := c.records(t, user); len(recs) != 0 {
				t.Errorf("records of failures no provider billed: %+v", recs)
			}
			if d := c.day(t, user); d.tickets != 0 || d.requests != 2 || d.tokens != 0 {
				t.Errorf("day %+v, want 2 requests settled with nothing used", d)
			}
		})
	}
}

// TestCompletionsClientLeaves: a client that leaves mid-answer cancels
// the upstream call, and what the answer used so far is still recorded
// and settled.
func TestCompletionsClientLeaves(t *testing.T) {
	t.Parallel()
	c := newComplFixture(t)
	// Each chunk 500 ms apart: the whole story would take half a minute.
	c.primary.fault(t, sim.Fault{Kind: sim.FaultSlowDrip, Fraction: 1, IntervalMS: 500})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.gateway+"/v1/chat/completions",
		strings.NewReader(`{"model":"solo","stream":true,"messages":[{"role":"user","content":"Tell me a story"}]}`))
	req.Header.Set("X-Test-User", "u-leaves")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "data: ") {
		t.Fatalf("first line %q: %v", line, err)
	}
	left := time.Now()
	cancel()
	select {
	case at := <-c.primary.ended:
		if d := at.Sub(left); d > complSlack {
			t.Errorf("the upstream call ended %v after the client left", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream call went on after the client left")
	}
	testkit.Eventually(t, context.Background(), "the departed client's completion to be recorded and settled", func() bool {
		return c.day(t, "u-leaves").tickets == 0 && len(c.records(t, "u-leaves")) == 1
	})
	d, recs := c.day(t, "u-leaves"), c.records(t, "u-leaves")
	if r := recs[0]; r.Kind != billing.KindCompletion || r.UsageSource != billing.SourceServerObserved || r.Usage.TextIn == 0 {
		t.Errorf("record %+v", r)
	}
	if d.tokens != recs[0].Usage.TextIn+recs[0].Usage.TextOut {
		t.Errorf("settled %d tokens, recorded %+v", d.tokens, recs[0].Usage)
	}
}
