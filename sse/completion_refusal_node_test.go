package sse_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/voxgate/voxgate/internal/config"
)

// The official Node openai client, with its default retries (two), against
// voxgate's refusals: testdata/node/requests.mjs.

// gatewaySpy stands in front of a gateway and counts the requests it
// passes on, so a test knows how many times a client tried.
type gatewaySpy struct {
	url   string
	count atomic.Int64
}

// newGatewaySpy proxies to gateway; onResponse, when set, sees each
// response before the client does.
func newGatewaySpy(t testing.TB, gateway string, onResponse func(*http.Response)) *gatewaySpy {
	t.Helper()
	to, err := url.Parse(gateway)
	if err != nil {
		t.Fatal(err)
	}
	s := &gatewaySpy{}
	proxy := httputil.NewSingleHostReverseProxy(to)
	proxy.FlushInterval = -1
	proxy.ModifyResponse = func(r *http.Response) error {
		if onResponse != nil {
			onResponse(r)
		}
		return nil
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.count.Add(1)
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	s.url = ts.URL
	return s
}

// runRequests runs one scenario of requests.mjs as caller ("user" or
// "user/plan") and returns what the client saw.
func runRequests(t *testing.T, node, dir, base, caller, scenario, arg string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "requests.mjs", base, caller, scenario, arg)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s %s: %v\n%s", scenario, arg, err, stderr.String())
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node printed %q: %v", out, err)
	}
	return got
}

// quotaClock is quota's clock: a fixed instant, moved on by the test.
type quotaClock struct {
	mu sync.Mutex
	at time.Time
}

func (k *quotaClock) now() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.at
}

func (k *quotaClock) advance(d time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.at = k.at.Add(d)
}

// TestNodeQuotaRetries: a spent day answers x-should-retry: false, so the
// Node client raises at once (one request, no sleep) instead of sleeping
// the hours Retry-After names; Retry-After and resets_at are still there.
// A per-minute limit stays retryable: the client waits its Retry-After,
// tries again, and is answered once the minute is over.
func TestNodeQuotaRetries(t *testing.T) {
	t.Parallel()
	node, dir := nodeClient(t)
	// A second before a minute ends, at noon UTC: the minute's wait is 1 s,
	// the day's 43,141 s.
	clock := &quotaClock{at: time.Date(2030, 6, 14, 12, 0, 59, 0, time.UTC)}
	c := newComplFixture(t, func(o *options) {
		plans := o.plans
		o.plans = func(q *config.Quota) {
			plans(q)
			free := q.Plans["free"]
			free.TokensPerDay = 4000 // one completion's reservation: the day is spent after one
			q.Plans["free"] = free
			pro := q.Plans["pro"]
			pro.RequestsPerMinute = 1
			q.Plans["pro"] = pro
		}
		o.quotaNow = clock.now
	})
	ctx := context.Background()
	var moved atomic.Bool
	spy := newGatewaySpy(t, c.gateway, func(r *http.Response) {
		// The minute's refusal moves the clock past the minute, before the
		// client reads it: its retry comes in the next one.
		if r.StatusCode == http.StatusTooManyRequests && r.Request.Header.Get("X-Test-Plan") == "pro" && !moved.Swap(true) {
			clock.advance(time.Minute)
		}
	})
	base := spy.url + "/v1"

	// The day: one completion spends it.
	if _, err := c.client("u-day", "").Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "chat", Messages: ask("hi")}); err != nil {
		t.Fatal(err)
	}
	hitsBefore := len(c.primary.hits())
	got := runRequests(t, node, dir, base, "u-day", "complete", `{"messages":[{"role":"user","content":"hi"}]}`)
	if got["ok"] != false || got["status"] != float64(429) || got["code"] != "QUOTA_EXCEEDED" || got["name"] != "RateLimitError" {
		t.Fatalf("a spent day: %v", got)
	}
	if got["shouldRetry"] != "false" || got["retryAfter"] != "43141" {
		t.Errorf("headers: x-should-retry %v, Retry-After %v; want false and 43141", got["shouldRetry"], got["retryAfter"])
	}
	if e, _ := got["error"].(map[string]any); e == nil || e["resets_at"] != "2030-06-15T00:00:00Z" || e["limit"] != "tokens_per_day" {
		t.Errorf("body: %v", got["error"])
	}
	if n := spy.count.Load(); n != 1 {
		t.Errorf("the gateway saw %d requests, want 1: the client retried a spent day", n)
	}
	// The client's shortest retry sleeps 375 ms; a call that took less
	// made none.
	if ms := got["ms"].(float64); ms >= 375 {
		t.Errorf("the client took %v ms: it slept", ms)
	}
	if n := len(c.primary.hits()); n != hitsBefore {
		t.Errorf("the provider saw %d more requests", n-hitsBefore)
	}

	// The minute: one request uses it; the client's is refused, waits the
	// second Retry-After names, and is answered on its retry.
	if _, err := c.client("u-minute", "pro").Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "chat", Messages: ask("hi")}); err != nil {
		t.Fatal(err)
	}
	spy.count.Store(0)
	got = runRequests(t, node, dir, base, "u-minute/pro", "complete", `{"messages":[{"role":"user","content":"hi"}]}`)
	if got["ok"] != true {
		t.Fatalf("the per-minute limit was not retried: %v", got)
	}
	if n := spy.count.Load(); n != 2 {
		t.Errorf("the gateway saw %d requests, want 2: the refusal and its retry", n)
	}
	if ms := got["ms"].(float64); ms < 1000 {
		t.Errorf("the retry came after %v ms, before Retry-After's second", ms)
	}
	if !moved.Load() {
		t.Error("no per-minute refusal was seen")
	}
}
