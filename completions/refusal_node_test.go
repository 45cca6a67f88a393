package completions_test

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

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/internal/testkit"
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
	node, dir := testkit.NodeClient(t)
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
	// That the gateway saw one request is the proof the client made no
	// retry; its elapsed time is not (a loaded machine took 557 ms for
	// the one call, past the client's shortest back-off).
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

// TestNodeCompletionFields: parallel_tool_calls and a tool's strict reach
// the provider as the client sent them (the simulator's copy of the
// request says so); store: true, a reasoning_effort outside the spec's
// enum and metadata that is not string values are 400s naming the field,
// raised by the client at once, with the provider never called.
func TestNodeCompletionFields(t *testing.T) {
	t.Parallel()
	node, dir := testkit.NodeClient(t)
	c := newComplFixture(t)
	spy := newGatewaySpy(t, c.gateway, nil)
	base := spy.url + "/v1"

	got := runRequests(t, node, dir, base, "u-fields", "complete", `{"model":"solo","store":false,"parallel_tool_calls":false,
		"messages":[{"role":"user","content":"What's the weather in Paris?"}],
		"tools":[{"type":"function","function":{"name":"get_weather","strict":true,
			"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}}]}`)
	if got["ok"] != true {
		t.Fatalf("refused: %v", got)
	}
	sent := c.primary.requests()
	if len(sent) != 1 {
		t.Fatalf("the provider saw %d requests", len(sent))
	}
	var body struct {
		Parallel *bool           `json:"parallel_tool_calls"`
		Store    json.RawMessage `json:"store"`
		Tools    []struct {
			Function struct {
				Strict *bool `json:"strict"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(sent[0]), &body); err != nil {
		t.Fatal(err)
	}
	if body.Parallel == nil || *body.Parallel || len(body.Tools) != 1 || body.Tools[0].Function.Strict == nil || !*body.Tools[0].Function.Strict {
		t.Errorf("the provider got %s", sent[0])
	}
	if body.Store != nil {
		t.Errorf("store reached the provider: %s", body.Store)
	}

	for _, tc := range []struct{ name, body, param, says string }{
		{"store", `{"store":true,"messages":[{"role":"user","content":"hi"}]}`, "store", "never asks a provider to store"},
		{"reasoning effort", `{"reasoning_effort":"ultra","messages":[{"role":"user","content":"hi"}]}`, "reasoning_effort", `"ultra" is not one of`},
		{"metadata", `{"metadata":{"a":1},"messages":[{"role":"user","content":"hi"}]}`, "metadata.a", "must be an object of at most 16 string values (keys up to 64 characters, values up to 512)"},
	} {
		spy.count.Store(0)
		got := runRequests(t, node, dir, base, "u-fields", "complete", tc.body)
		if got["ok"] != false || got["status"] != float64(400) || got["name"] != "BadRequestError" || got["code"] != "INVALID_REQUEST" ||
			got["param"] != tc.param || got["type"] != "invalid_request_error" || !strings.Contains(got["message"].(string), tc.says) {
			t.Errorf("%s: %v", tc.name, got)
		}
		if n := spy.count.Load(); n != 1 {
			t.Errorf("%s: the gateway saw %d requests, want 1", tc.name, n)
		}
	}
	if n := len(c.primary.requests()); n != 1 {
		t.Errorf("the provider saw %d requests, want the first alone", n)
	}
}

// TestNodeMalformedConversation: a tool message that answers no call is
// the client's 400 at once: the Node client does not retry it, and no
// provider is called. A provider's own 400 for what the client sent
// (tools with a reasoning_effort gpt-6-luna refuses with them) is a 400
// too, not a 502 the client retries, calling the provider each time.
func TestNodeMalformedConversation(t *testing.T) {
	t.Parallel()
	node, dir := testkit.NodeClient(t)
	c := newComplFixture(t)
	spy := newGatewaySpy(t, c.gateway, nil)
	got := runRequests(t, node, dir, spy.url+"/v1", "u-conv", "complete",
		`{"messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"nope","content":"x"}]}`)
	if got["ok"] != false || got["status"] != float64(400) || got["code"] != "INVALID_REQUEST" || got["param"] != "messages[1].tool_call_id" {
		t.Errorf("a tool message answering nothing: %v", got)
	}
	if n := spy.count.Load(); n != 1 {
		t.Errorf("the gateway saw %d requests, want 1", n)
	}
	if n := len(c.primary.requests()) + len(c.fallback.requests()); n != 0 {
		t.Errorf("the providers saw %d requests, want 0", n)
	}
	if d := c.day(t, "u-conv"); d.requests != 0 {
		t.Errorf("a refusal counted: %+v", d)
	}

	// chat.model's default, gpt-6-luna, takes tools only at reasoning
	// effort none, and its simulator says so with a 400.
	sent := make(chan []byte, 8)
	f := newFixture(t, options{capture: sent})
	mux := http.NewServeMux()
	mux.Handle("POST /v1/chat/completions", httpx.Handle(func(w http.ResponseWriter, r *http.Request) error {
		p := auth.Principal{UserID: r.Header.Get("X-Test-User")}
		return f.svc.HandleCompletions(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
	}))
	gw := httptest.NewServer(mux)
	t.Cleanup(gw.Close)
	spy = newGatewaySpy(t, gw.URL, nil)
	got = runRequests(t, node, dir, spy.url+"/v1", "u-conv", "complete", `{"model":"default","reasoning_effort":"low",
		"messages":[{"role":"user","content":"find soup"}],"tools":[{"type":"function","function":{"name":"f"}}]}`)
	if got["ok"] != false || got["status"] != float64(400) || got["code"] != "INVALID_REQUEST" || got["type"] != "invalid_request_error" ||
		!strings.Contains(got["message"].(string), "provider refused") {
		t.Errorf("a provider's 400 for the client's request: %v", got)
	}
	if n := spy.count.Load(); n != 1 {
		t.Errorf("the gateway saw %d requests, want 1: the client retried", n)
	}
	if n := len(sent); n != 1 {
		t.Errorf("the provider saw %d requests, want 1", n)
	}
}

// TestNodeModelsRetrieve: the Node client's models.retrieve gets a route
// the plan may use in OpenAI's Model shape, and NotFoundError (404, param
// model) for a route that does not exist and for one the plan leaves
// out alike.
func TestNodeModelsRetrieve(t *testing.T) {
	t.Parallel()
	node, dir := testkit.NodeClient(t)
	c := newComplFixture(t)
	base := c.gateway + "/v1"
	got := runRequests(t, node, dir, base, "u-models", "retrieve", "chat")
	m, _ := got["value"].(map[string]any)
	if got["ok"] != true || m["id"] != "chat" || m["object"] != "model" || m["owned_by"] != "voxgate" || m["created"].(float64) <= 0 {
		t.Fatalf("retrieve chat: %v", got)
	}
	var missing, withheld map[string]any
	for id, out := range map[string]*map[string]any{"no-such-route": &missing, "premium": &withheld} {
		*out = runRequests(t, node, dir, base, "u-models", "retrieve", id)
		got := *out
		if got["ok"] != false || got["name"] != "NotFoundError" || got["status"] != float64(404) || got["param"] != "model" || got["code"] != "NOT_FOUND" {
			t.Errorf("retrieve %s: %v", id, got)
		}
	}
	if missing["message"] != withheld["message"] {
		t.Errorf("a route that does not exist and one the plan leaves out differ: %q, %q", missing["message"], withheld["message"])
	}
}
