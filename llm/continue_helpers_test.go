package llm_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/anthropic"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// sixtyTokens is an answer of 60 tokens as the simulator counts them (four
// bytes a token, one token a chunk): "t01 t02 … t60", each word one chunk,
// so a cut after 40 content chunks leaves "t01 … t40 " with the caller.
var sixtyTokens = func() string {
	var b strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&b, "t%02d ", i)
	}
	return strings.TrimSuffix(b.String(), " ")
}()

// recorded is a simulator behind a server that keeps each model request's
// path and body, in order.
type recorded struct {
	sim *sim.Server
	url string // the root: Anthropic's base URL; + "/v1" is OpenAI's

	mu   sync.Mutex
	reqs []sentRequest
}

type sentRequest struct {
	path string
	body map[string]any
}

func newRecorded(t *testing.T, cfg sim.Config) *recorded {
	t.Helper()
	cfg.Latency, cfg.ShutdownDates = simtest.ZeroLatency(), map[string]string{}
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u := &recorded{sim: s}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == sim.EndpointChatCompletions || r.URL.Path == sim.EndpointAnthropicMessages {
			raw, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(raw))
			var body map[string]any
			_ = json.Unmarshal(raw, &body)
			u.mu.Lock()
			u.reqs = append(u.reqs, sentRequest{path: r.URL.Path, body: body})
			u.mu.Unlock()
		}
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { _ = s.Close() })
	u.url = ts.URL
	return u
}

func (u *recorded) fault(t *testing.T, f sim.Fault) {
	t.Helper()
	if _, err := u.sim.AddFault(f); err != nil {
		t.Fatal(err)
	}
}

func (u *recorded) requests() []sentRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]sentRequest(nil), u.reqs...)
}

// lastMessage is a request's last message: its role and its text (a
// string content, or Anthropic's text blocks).
func (r sentRequest) lastMessage() (role, text string) {
	msgs, _ := r.body["messages"].([]any)
	if len(msgs) == 0 {
		return "", ""
	}
	m, _ := msgs[len(msgs)-1].(map[string]any)
	role, _ = m["role"].(string)
	switch c := m["content"].(type) {
	case string:
		text = c
	case []any:
		for _, b := range c {
			if bm, ok := b.(map[string]any); ok && bm["type"] == "text" {
				s, _ := bm["text"].(string)
				text += s
			}
		}
	}
	return role, text
}

// contTarget is a route target and the provider that serves it.
type contTarget struct {
	target   llm.Target
	provider llm.Provider
}

// openaiTarget is an OpenAI-shaped target on u (gpt-4o on OpenAI's
// surface, or an OpenAI-compatible server's model when u continues).
func openaiTarget(t *testing.T, name, model string, u *recorded, continues string) contTarget {
	return contTarget{target: llm.Target{Provider: name, Model: model, FirstContent: testFirstContent, Timeout: testFirstContent,
		Continue: continues}, provider: newOpenAI(t, u.url+"/v1", 0, nil)}
}

// anthropicTarget is a Claude model on u's Messages surface.
func anthropicTarget(t *testing.T, name, model string, u *recorded, continues string) contTarget {
	return contTarget{target: llm.Target{Provider: name, Model: model, FirstContent: testFirstContent, Timeout: testFirstContent,
		Continue: continues}, provider: newAnthropic(t, u.url, anthropic.Params{}, nil)}
}

// contRouter is a router over targets in order, as route "chat", with its
// metrics registry.
func contRouter(t *testing.T, targets ...contTarget) (*llm.Router, *prometheus.Registry) {
	t.Helper()
	return contRouterBudget(t, testBudget, targets...)
}

// contRouterBudget is contRouter with the route's budget.
func contRouterBudget(t *testing.T, budget time.Duration, targets ...contTarget) (*llm.Router, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	route := llm.Route{Name: "chat", Budget: budget}
	providers := map[string]llm.Provider{}
	for _, ct := range targets {
		route.Targets = append(route.Targets, ct.target)
		providers[ct.target.Provider] = ct.provider
	}
	r, err := llm.NewRouter(llm.RouterParams{Providers: providers, Routes: []llm.Route{route}, Registerer: reg,
		RetryDelay: testRetryDelay})
	if err != nil {
		t.Fatal(err)
	}
	return r, reg
}

// routedRead is a routed call read to its end with drain (which also
// checks that every whole tool call is the sum of its pieces), timed.
func routedRead(t *testing.T, r *llm.Router, req llm.Request) (result, time.Duration) {
	t.Helper()
	start := time.Now()
	st, err := r.Stream(t.Context(), req)
	if err != nil {
		return result{err: err}, time.Since(start)
	}
	res := drain(t, st)
	return res, time.Since(start)
}

// doneTrace is the trace of a routed call: EventDone's, or its error's.
func doneTrace(t *testing.T, res result) llm.Trace {
	t.Helper()
	if res.done != nil {
		return res.done.Trace
	}
	var re *llm.RouteError
	if !errors.As(res.err, &re) {
		t.Fatalf("got %v, want a *llm.RouteError", res.err)
	}
	return re.Trace
}

// continuations is voxgate_llm_continuations_total{route="chat",outcome},
// 0 when the series does not exist.
func continuations(reg *prometheus.Registry, outcome string) float64 {
	return counted(gathered{reg, "voxgate_llm_continuations_total", map[string]string{"route": "chat", "outcome": outcome}})
}

// counted is g's value, 0 when the series does not exist.
func counted(g gathered) float64 {
	if testutil.CollectAndCount(g) == 0 {
		return 0
	}
	return testutil.ToFloat64(g)
}
